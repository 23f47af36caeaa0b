package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/quick"
)

// TestQuickModes: the modes that are on make benchmarks; the framework mode selects by its model
// names; a server needs exactly one model.
func TestQuickModes(t *testing.T) {
	m := quickFlags{Exec: quick.Exec{Command: "true"}, Framework: quick.Framework{Framework: "jax", BatchSizes: []int{1, 2}}}
	bs, models, err := m.benchmarks([]string{"both"}, "/work")
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
	if bs, models, err := (quickFlags{}).benchmarks([]string{"m"}, "."); bs != nil || err != nil || models[0] != "m" {
		t.Errorf("no mode on: %v %v %v", bs, models, err)
	}
	if _, _, err := (quickFlags{OpenAI: quick.OpenAI{URL: "http://x/v1"}}).benchmarks(nil, "."); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Errorf("openai without a model: %v", err)
	}
	if _, _, err := (quickFlags{OpenAI: quick.OpenAI{URL: "http://x/v1", Sweep: true, Rates: []float64{1}}}).benchmarks([]string{"m"}, "."); err == nil {
		t.Error("--sweep with --rate accepted")
	}
}
