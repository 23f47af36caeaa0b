package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
)

// TestServeJudgesAsCompare: in a project with a performance-budget.yml and a
// benchmark_thresholds.json, `inferbench serve`'s compare page and /api/compare count what
// `inferbench compare` counts (text and JSON) and what `compare --format html` shows, reading the
// same files found the same way; --thresholds-file and --budget-file name others, as compare's.
// Before, the dashboard ignored both files and had no flag for them: it said 0 budgets exceeded
// and no regression where compare said 1 and 1.
func TestServeJudgesAsCompare(t *testing.T) {
	dir := t.TempDir()
	runIn := func(name, line string) string {
		code, _, errOut := runCLI(t, dir, nil, "run", "--exec", "echo '"+line+"'", "--exec-metrics", "--no-monitor",
			"--iterations", "12", "--warmup", "0", "--output-dir", name, "--format", "none", "--store", "h.db")
		if code != 0 {
			t.Fatalf("run %s: exit %d: %s", name, code, errOut)
		}
		r, err := result.Load(filepath.Join(dir, name, result.LatestLink))
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	old := runIn("old", `{"latency_ms": 10}`)
	nw := runIn("new", `{"latency_ms": 11.2}`) // +12%: within the default 15%, beyond the project's 5%
	os.WriteFile(filepath.Join(dir, "benchmark_thresholds.json"), []byte(`{"latency_regression_threshold": 5}`), 0o644)
	os.WriteFile(filepath.Join(dir, "performance-budget.yml"), []byte("budgets:\n  exec:\n    max_latency_ms: 11\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "ci"), 0o755)
	os.WriteFile(filepath.Join(dir, "ci", "loose.json"), []byte(`{"latency_regression_threshold": 50}`), 0o644)
	os.WriteFile(filepath.Join(dir, "ci", "budget.yml"), []byte("budgets:\n  exec:\n    max_latency_ms: 100\n"), 0o644)

	keys := []string{"regressions", "budgets_exceeded", "unverified", "info", "improvements"}
	counts := func(data []byte) map[string]int {
		var j map[string]any
		if err := json.Unmarshal(data, &j); err != nil {
			t.Fatalf("%v: %s", err, data)
		}
		c := map[string]int{}
		for _, k := range keys {
			f, _ := j[k].(float64)
			c[k] = int(f)
		}
		return c
	}
	cards := func(page string) map[string]int {
		c := map[string]int{}
		for _, k := range keys {
			m := regexp.MustCompile(`data-count="` + k + `"><div class="k">[^<]*</div><div class="v">(\d+)</div>`).FindStringSubmatch(page)
			if m == nil {
				t.Fatalf("no %s card in the page", k)
			}
			c[k], _ = strconv.Atoi(m[1])
		}
		return c
	}
	for _, tc := range []struct {
		name  string
		flags []string
		want  map[string]int // regressions, budgets exceeded
	}{
		// the project's files, found in the folder
		{"project files", nil, map[string]int{"regressions": 1, "budgets_exceeded": 1}},
		// other files named by the flags compare has
		{"flags", []string{"--thresholds-file", "ci/loose.json", "--budget-file", "ci/budget.yml"}, map[string]int{"regressions": 0, "budgets_exceeded": 0}},
	} {
		code, js, errOut := runCLI(t, dir, nil, append([]string{"compare", old, nw, "--store", "h.db", "--format", "json"}, tc.flags...)...)
		if code != ExitOK && code != ExitRegression {
			t.Fatalf("%s: compare: exit %d %s", tc.name, code, errOut)
		}
		cli := counts([]byte(js))
		for k, v := range tc.want {
			if cli[k] != v {
				t.Errorf("%s: compare says %s = %d, want %d", tc.name, k, cli[k], v)
			}
		}
		_, html, _ := runCLI(t, dir, nil, append([]string{"compare", old, nw, "--store", "h.db", "--format", "html"}, tc.flags...)...)
		surfaces := map[string]map[string]int{"compare --format html": cards(html)}

		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		var out, serr bytes.Buffer
		go func() {
			done <- Main(ctx, append([]string{"serve", "--addr", addr, "--store", "h.db", "--results-dir", ""}, tc.flags...),
				IO{Stdout: &out, Stderr: &serr, Env: []string{"CI=1"}, Dir: dir})
		}()
		get := func(path string) []byte {
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				resp, err := http.Get("http://" + addr + path)
				if err != nil {
					select {
					case code := <-done:
						t.Fatalf("%s: serve exited %d: %s", tc.name, code, serr.String())
					default:
					}
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("%s: GET %s: %d %s", tc.name, path, resp.StatusCode, body)
				}
				return body
			}
			t.Fatalf("%s: serve never answered: %s", tc.name, serr.String())
			return nil
		}
		surfaces["/api/compare"] = counts(get("/api/compare?base=" + old + "&head=" + nw))
		surfaces["dashboard"] = cards(string(get("/compare?base=" + old + "&head=" + nw)))
		cancel()
		<-done
		for name, c := range surfaces {
			for _, k := range keys {
				if c[k] != cli[k] {
					t.Errorf("%s: %s says %s = %d, compare says %d", tc.name, name, k, c[k], cli[k])
				}
			}
		}
	}
}
