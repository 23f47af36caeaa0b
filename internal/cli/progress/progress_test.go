package progress

import (
	"bytes"
	"os"
	"testing"

	"github.com/inferbench/inferbench/run"
)

// The bar is an observer of the scenarios (package progress does not import run): it counts
// their calls and clears itself when they are done.
var (
	_ run.ScenarioStarter   = (*Bar)(nil)
	_ run.CallCounter       = (*Bar)(nil)
	_ run.ScenarioFinisher  = (*Bar)(nil)
	_ run.ScenariosFinisher = (*Bar)(nil)
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

// A bar is shown only on a terminal, and never with CI set: piped output, a file or a buffer
// gets none, and the observer's calls then do nothing.
func TestShownOnlyOnATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		name string
		w    *Bar
	}{
		{"buffer", New(&bytes.Buffer{}, env(nil))},
		{"file", New(f, env(nil))},
		{"file with CI", New(f, env(map[string]string{"CI": "true"}))},
	} {
		if tc.w.Shown() {
			t.Errorf("%s: the bar is shown", tc.name)
		}
		tc.w.ScenarioFinished(nil) // no bar: nothing to advance, no panic
		tc.w.ScenariosFinished()
	}
	if Interactive(os.Stdout, env(map[string]string{"CI": "1"})) {
		t.Error("Interactive with CI set: want false")
	}
}
