package redact

import (
	"strings"
	"testing"
)

// TestSecretName holds the rule docs/reliability.md states: a name is secret by its last word.
func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		// Secret: the last word says so.
		"--metrics-token": true, "--api-key": true, "hf_token": true, "HF_TOKEN": true, "api_key": true,
		"access_token": true, "client_secret": true, "db_password": true, "hfToken": true, "apikey": true,
		"X-Api-Key": true, "X-Org-Secret": true, "credentials": true, "--token": true,
		// Plain: the word is elsewhere, or the name says something else (issue 23: the value of
		// --num-tokens-to-generate was written as xxxxx).
		"--num-tokens-to-generate": false, "num_tokens_to_generate": false, "max_tokens": false,
		"tokenizer": false, "key_length": false, "--api-key-env": false, "api_key_env": false,
		"tokens_per_s": false, "batch_size": false, "monkey": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestArgsSet: --set KEY=VALUE masks the value of a secret KEY, in both spellings, and learns it.
func TestArgsSet(t *testing.T) {
	r := New()
	got := strings.Join(r.Args([]string{"run", "--set", "hf_token=hf-abcdef123", "--set=api_key=k-987654321", "--set", "num_tokens_to_generate=16", "--num-tokens-to-generate", "32"}), " ")
	want := "run --set hf_token=xxxxx --set=api_key=xxxxx --set num_tokens_to_generate=16 --num-tokens-to-generate 32"
	if got != want {
		t.Errorf("Args = %q, want %q", got, want)
	}
	if s := r.String("echo hf-abcdef123 k-987654321"); s != "echo xxxxx xxxxx" {
		t.Errorf("the values were not learnt: %q", s)
	}
}

// TestParams: a parameter is kept as it is or masked whole, never inside: masked when its name is
// declared secret (learnt then) or its value holds a secret the redactor knows or a secret's
// shape. A name alone (key, token) does not make a value secret: pint's `key='kilometer'` was
// masked and learnt, and then `unit='kilometer/second'` became `xxxxx/xxxxx` (issue 46).
func TestParams(t *testing.T) {
	red := New("envsecret123") // a secret of the environment ($HF_TOKEN's value)
	red.DeclareParams("db_pass")
	m := map[string]any{
		"key": "kilometer", "unit": "kilometer/second", "token": "hello world", "hf_token": "plainword1",
		"num_tokens_to_generate": 16, "url": "http://u:pw@h/", "db_pass": "hunter2222",
		"model": "org/envsecret123-7b", "nested": []any{"a", map[string]any{"b": "Bearer abcdefgh"}},
	}
	Params(red, m)
	want := map[string]any{
		"key": "kilometer", "unit": "kilometer/second", "token": "hello world", "hf_token": "plainword1",
		"num_tokens_to_generate": 16, "url": Mask, "db_pass": Mask, "model": Mask, "nested": Mask,
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("Params: %s = %v, want %v", k, m[k], v)
		}
	}
	if s := red.String("echo hunter2222 kilometer plainword1"); s != "echo xxxxx kilometer plainword1" {
		t.Errorf("learnt: %q (want only the declared parameter's value learnt)", s)
	}
}

// TestEnvironment: a scenario's environment (context, not identity) masks a secret name's value.
func TestEnvironment(t *testing.T) {
	m := map[string]any{"HF_TOKEN": "plainword1", "url": "http://u:pw@h/", "python": "3.11"}
	Environment(New(), m)
	if m["HF_TOKEN"] != Mask || m["url"] != "http://u:xxxxx@h/" || m["python"] != "3.11" {
		t.Errorf("Environment: %v", m)
	}
}
