package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// TestDeep: every string of a run, whatever field holds it (config.set, a scenario's name, model,
// parameters nested in lists, raw JSON sections), is masked when it holds a known secret; map
// keys and numbers are left alone.
func TestDeep(t *testing.T) {
	const secret = "hf_DeepSecret0123456789"
	r := &result.Run{
		Config: result.Config{Set: map[string]string{"model_id": secret}, Args: []string{"--set", "model_id=" + secret}},
		Scenarios: []result.Scenario{{
			Benchmark: "b", Scenario: "model_id=" + secret, Model: secret,
			Params: map[string]any{"model_id": secret, "n": 3.0, "list": []any{"a", map[string]any{"k": "x " + secret}}},
			Extra:  result.Extra{Other: map[string]json.RawMessage{"x": json.RawMessage(`{"v":"` + secret + `"}`)}},
		}},
	}
	Deep(New(secret), r)
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), secret) {
		t.Errorf("the secret is left in %s", b)
	}
	if r.Scenarios[0].Params["n"] != 3.0 || r.Config.Set["model_id"] != Mask || r.Scenarios[0].Scenario != "model_id="+Mask {
		t.Errorf("got %+v", r.Scenarios[0])
	}
}
