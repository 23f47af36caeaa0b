package suite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestModelKeyIsTheModelParam: a definition's model: is the model its scenarios run (issue 23:
// model: resnet18 benchmarked ResNet-50 because only params.model picked the network), unless
// params, an axis, include or --set say otherwise, and then the scenario's model says so too.
func TestModelKeyIsTheModelParam(t *testing.T) {
	tests := []struct {
		name string
		src  string
		set  map[string]any
		want []string // scenario name: params.model, Scenario.Model()
	}{
		// the key alone picks the network
		{"key", "model: resnet18\nparams: {device: cpu}", nil, []string{"default: resnet18 resnet18"}},
		// params.model wins over the key, and is the scenario's model
		{"params", "model: vision\nparams: {model: resnet50}", nil, []string{"default: resnet50 resnet50"}},
		// a model axis: each scenario's model is its point's
		{"axis", "model: vision\nmatrix: {model: [resnet18, resnet50]}", nil,
			[]string{"model=resnet18: resnet18 resnet18", "model=resnet50: resnet50 resnet50"}},
		// --set on the key's parameter
		{"set", "model: resnet18", map[string]any{"model": "resnet50"}, []string{"default: resnet50 resnet50"}},
		// an include point's model
		{"include", "model: resnet18\nmatrix: {batch_size: [1]}\ninclude: [{batch_size: 2, model: resnet50}]", nil,
			[]string{"batch_size=1: resnet18 resnet18", "batch_size=2/model=resnet50: resnet50 resnet50"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := parse(t, "name: x\nsubject: {kind: mock}\n"+tc.src)
			var got []string
			for _, sc := range b.Expand(tc.set) {
				got = append(got, sc.Name+": "+sc.Params.String("model", "")+" "+sc.Model())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scenarios (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSetOnAxisRenames: --set on a matrix axis names the scenarios after the value that runs,
// and points that become one are one scenario (issue 23: rows named variant=compiled ran eager).
func TestSetOnAxisRenames(t *testing.T) {
	b := parse(t, `name: x
subject: {kind: mock}
matrix:
  batch_size: [1, 4]
  variant: [eager, compiled, kernelized]
exclude: [{variant: kernelized, batch_size: 4}]
include: [{variant: compiled, batch_size: 8}]
`)
	var got []string
	for _, sc := range b.Expand(map[string]any{"variant": "eager"}) {
		got = append(got, sc.Name+" "+sc.Params.String("variant", ""))
	}
	want := []string{"batch_size=1/variant=eager eager", "batch_size=4/variant=eager eager", "batch_size=8/variant=eager eager"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scenarios (-want +got):\n%s", diff)
	}
}

// TestMockFileNeedsEnableMock: seed 004's mock_benchmark.py is skipped by default and runs with
// --enable-mock, like a definition of the mock kind (issue 23: it ran without the flag).
func TestMockFileNeedsEnableMock(t *testing.T) {
	for file, mock := range map[string]bool{"benches/mock_benchmark.py": true, "benches/llm_mock.py": true, "benches/mock.py": true,
		"benches/llama_benchmark.py": false, "benches/mockingbird.py": false, "benches/mock_x.yaml": false} {
		sc := &Scenario{Benchmark: &Benchmark{Name: "x", File: file, Kind: "exec"}}
		off, on := (&Checker{}).Check(sc), (&Checker{EnableMock: true}).Check(sc)
		if got := off != ""; got != mock || on != "" {
			t.Errorf("%s: skipped without --enable-mock %v (%q), with it %q; want skipped %v, then run", file, got, off, on, mock)
		}
	}
}
