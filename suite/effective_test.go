package suite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

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

// TestModelKeyLabel: for a subject that builds no model by name (the mock, a command), model:
// is a label: the scenarios' parameters, their identity in the history, are as before.
func TestModelKeyLabel(t *testing.T) {
	b := parse(t, "name: x\nmodel: tiny-llm\nsubject: {kind: mock}\nmatrix: {batch_size: [1]}\n")
	sc := b.Expand(nil)[0]
	if _, ok := sc.Params["model"]; ok || sc.Model() != "tiny-llm" {
		t.Errorf("params %v, model %q: want no model parameter, model tiny-llm", sc.Params, sc.Model())
	}
}
