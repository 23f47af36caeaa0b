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

// TestParams: a secret-named parameter is masked whole, whatever its shape; others as Value.
func TestParams(t *testing.T) {
	red := New()
	m := map[string]any{"hf_token": "plainword1", "num_tokens_to_generate": 16, "url": "http://u:pw@h/"}
	Params(red, m)
	if m["hf_token"] != Mask || m["num_tokens_to_generate"] != 16 || m["url"] != "http://u:xxxxx@h/" {
		t.Errorf("Params: %v", m)
	}
	if s := red.String("echo plainword1"); s != "echo xxxxx" {
		t.Errorf("not learnt: %q", s)
	}
}
