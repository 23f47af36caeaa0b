package cli

import (
	"strings"
	"testing"
)

// A clean step of the median latency, 6.00 → 5.00 ms, over ten stored runs is found by history at
// its defaults.
func TestHistoryFindsCleanStep(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 10; i++ {
		center := 6.0
		if i >= 5 {
			center = 5
		}
		id := "r" + string(rune('a'+i))
		saveRun(t, dir, id, uint64(i), center)
		if code, out, errOut := runCLI(t, dir, nil, "import", "benchmark_results/"+id+"/run.json", "--id", id); code != ExitOK {
			t.Fatalf("import %s: exit %d\n%s%s", id, code, out, errOut)
		}
	}
	code, out, errOut := runCLI(t, dir, nil, "history", "resnet", "--scenario", "batch_size=1", "--days", "0")
	if code != ExitOK || !strings.Contains(out, "change point at run rf") {
		t.Errorf("history: exit %d, want a change point at run rf\n%s%s", code, out, errOut)
	}
}
