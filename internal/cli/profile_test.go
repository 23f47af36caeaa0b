package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// TestRunProfile: --profile writes a pprof CPU profile for a Go function after its measured
// iterations, lists it in run.json, and a subject without a profiler says so.
func TestRunProfile(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "", nil, "run", filepath.Join(testdata, "project"), "--enable-mock", "--output-dir", dir, "--profile=50")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	runDir := filepath.Join(dir, result.LatestLink)
	data, err := os.ReadFile(filepath.Join(runDir, result.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	var r result.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Scenarios {
		switch {
		case s.Benchmark == "noop":
			// the CPU profile, and the heap profile beside it (issue 23)
			if len(s.Profiles) != 2 || s.Profiles[0] != "profiles/noop__default/cpu.pprof" || s.Profiles[1] != "profiles/noop__default/heap.pprof" {
				t.Fatalf("noop profiles %v", s.Profiles)
			}
			html, _ := os.ReadFile(filepath.Join(runDir, "report.html"))
			if !strings.Contains(string(html), `href="profiles/noop__default/cpu.pprof"`) {
				t.Errorf("report.html does not link the profile")
			}
			for _, p := range s.Profiles {
				b, err := os.ReadFile(filepath.Join(runDir, p))
				if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b { // pprof: gzipped protobuf
					t.Errorf("%s: not a pprof file (%d bytes, %v)", p, len(b), err)
				}
			}
			if !strings.Contains(string(html), `href="profiles/noop__default/heap.pprof"`) {
				t.Errorf("report.html does not link the heap profile")
			}
		case s.Benchmark == "quick-mock":
			if !strings.Contains(strings.Join(s.Warnings, "\n"), "profile: the mock subject has no profiler") {
				t.Errorf("mock warnings %q", s.Warnings)
			}
		}
	}
}
