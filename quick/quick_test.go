package quick

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSLOs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		specs []string
		want  map[string]float64
		err   string
	}{
		{"none", nil, nil, ""},
		{"two, one with <=", []string{"ttft_ms.p99=500", "tpot_ms.p50 = <= 20"}, map[string]float64{"ttft_ms.p99": 500, "tpot_ms.p50": 20}, ""},
		{"no limit", []string{"ttft_ms.p99"}, nil, `--slo "ttft_ms.p99": want metric.stat=limit`},
		{"unknown metric", []string{"bogus.p99=1"}, nil, "--slo:"},
	} {
		got, err := ParseSLOs(tc.specs)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

// TestModes: the modes that are on make benchmarks; the framework mode selects by its model
// names; a server needs exactly one model.
func TestModes(t *testing.T) {
	m := Modes{Exec: Exec{Command: "true"}, Framework: Framework{Framework: "jax", BatchSizes: []int{1, 2}}}
	bs, models, err := m.Benchmarks([]string{"both"}, "/work")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range bs {
		names = append(names, b.Name+" "+b.Kind+" "+b.Dir)
	}
	want := []string{"exec exec /work", "resnet50 worker /work", "vit_b_16 worker /work"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("benchmarks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"resnet50", "vit_b_16"}, models); diff != "" {
		t.Errorf("selected models (-want +got):\n%s", diff)
	}
	if bs, models, err := (Modes{}).Benchmarks([]string{"m"}, "."); bs != nil || err != nil || models[0] != "m" {
		t.Errorf("no mode on: %v %v %v", bs, models, err)
	}
	if _, _, err := (Modes{OpenAI: OpenAI{URL: "http://x/v1"}}).Benchmarks(nil, "."); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Errorf("openai without a model: %v", err)
	}
	if _, _, err := (Modes{OpenAI: OpenAI{URL: "http://x/v1", Sweep: true, Rates: []float64{1}}}).Benchmarks([]string{"m"}, "."); err == nil {
		t.Error("--sweep with --rate accepted")
	}
}
