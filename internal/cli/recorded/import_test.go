package recorded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/store"
	_ "github.com/inferbench/inferbench/store/sqlite"
)

var stores int // the stores importBoth made

// importBoth imports the files into a new store twice, as a stream (every size streamed) and
// whole (none), and returns the two stores and what each import said.
func importBoth(t *testing.T, dir string, o ImportOptions) (streamed, whole store.Store, outs [2]string, errs [2]error) {
	t.Helper()
	defer func(n int64) { streamMin = n }(streamMin)
	var sts [2]store.Store
	stores++
	for i, min := range []int64{0, 1 << 62} {
		streamMin = min
		var out, errOut bytes.Buffer
		o.Store, o.Env, o.Stdout, o.Stderr = filepath.Join(dir, fmt.Sprint([]string{"s", "w"}[i], stores, ".db")), run.Env{Dir: dir}, &out, &errOut
		_, errs[i] = Import(context.Background(), o)
		outs[i] = out.String() + errOut.String()
		st, err := store.Open(context.Background(), store.Params{URL: o.Store})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		sts[i] = st
	}
	return sts[0], sts[1], outs, errs
}

// TestImportStreams: an inferbench run.json is imported a batch of scenarios at a time into the
// store (never whole in memory), and the store then holds what the whole import stores: the
// run, its history, its listing, the lines printed; a taken id gets a new one, an id asked for
// and taken is an error. A killed run's journal adds its scenarios as the last batch. A file or
// journal the stream does not read is read whole, with the same error.
func TestImportStreams(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := storetest.MakeRun("20261127_060000-imp", storetest.T0, 3, 12, []string{"resnet", "bert"}, 4, 25)
	if err := os.WriteFile(filepath.Join(dir, "a.json"), mustJSON(t, r), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, store.Params{URL: filepath.Join(dir, "direct.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer func(n int64) { streamMin = n }(streamMin)
	streamMin = 0
	head, n, given, done, err := importStream(ctx, st, filepath.Join(dir, "a.json"), "a.json", "auto", func(string) bool { return false })
	if !done || err != nil || n != 8 || given != r.ID || head.ID != r.ID {
		t.Fatalf("importStream: done %v, %v, %d scenarios, id %s (given %s); want the run's 8 streamed", done, err, n, head.ID, given)
	}

	streamed, whole, outs, errs := importBoth(t, dir, ImportOptions{Files: []string{"a.json", "a.json"}, Format: "auto"})
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("import: %v, %v", errs[0], errs[1])
	}
	same(t, streamed, whole, r.ID)
	if !strings.Contains(outs[0], "imported a.json: run "+r.ID+", 8 scenarios\n") || !strings.Contains(outs[0], "(id "+r.ID+" was taken in the store)") {
		t.Errorf("streamed import said:\n%s", outs[0])
	}
	if got, want := strings.Count(outs[0], "\n"), strings.Count(outs[1], "\n"); got != want {
		t.Errorf("streamed import said %d lines, whole %d:\n%s\n%s", got, want, outs[0], outs[1])
	}
	if _, _, _, errs := importBoth(t, dir, ImportOptions{Files: []string{"a.json"}, Format: "auto", ID: r.ID}); errs[0] != nil {
		t.Errorf("--id the file's own: %v", errs[0])
	}

	// A scenario encoding/json refuses, after good ones: the whole reading's usage error.
	bad := bytes.Replace(mustJSON(t, r), []byte(`"subject": "mock"`), []byte(`"subject": 7`), 1)
	os.WriteFile(filepath.Join(dir, "bad.json"), bad, 0o644)
	_, _, outs, errs = importBoth(t, dir, ImportOptions{Files: []string{"bad.json"}, Format: "auto"})
	if errs[0] == nil || errs[1] == nil || errs[0].Error() != errs[1].Error() || !errors.Is(errs[0], run.ErrUsage) {
		t.Errorf("a bad scenario: streamed %v, whole %v", errs[0], errs[1])
	}

	// A killed run with a journal: the run's 5 scenarios, then the journal's 3 it lacks (one it
	// has, twice; the last line cut short by the kill), its summary counting them.
	killed := filepath.Join(dir, "killed")
	os.Mkdir(killed, 0o755)
	k := *r
	k.ID, k.FinishedAt, k.Scenarios = "killed", time.Time{}, r.Scenarios[:5]
	k.Scenarios[4].Status = result.StatusFailed
	k.Tally()
	os.WriteFile(filepath.Join(killed, result.RunFile), mustJSON(t, &k), 0o644)
	var journal bytes.Buffer
	for _, sc := range append(append([]result.Scenario{r.Scenarios[4]}, r.Scenarios[5:]...), r.Scenarios[4]) {
		line, _ := finite.Marshal(&sc)
		journal.Write(append(line, '\n'))
	}
	journal.WriteString(`{"benchmark": "cut`)
	os.WriteFile(filepath.Join(killed, result.JournalFile), journal.Bytes(), 0o644)
	streamMin = 0
	if _, n, _, done, err := importStream(ctx, st, filepath.Join(killed, result.RunFile), "killed/run.json", "auto", func(string) bool { return true }); !done || err != nil || n != 8 {
		t.Errorf("killed run: done %v, %v, %d scenarios; want 8 streamed", done, err, n)
	}
	streamed, whole, outs, errs = importBoth(t, dir, ImportOptions{Files: []string{"killed"}, Format: "auto"})
	if errs[0] != nil || !strings.Contains(outs[0], "8 scenarios (partial: the run did not finish)") {
		t.Errorf("killed run: %v\n%s", errs[0], outs[0])
	}
	same(t, streamed, whole, "killed")
	if got, _ := streamed.Get(ctx, "killed"); got.Summary.Failed != 1 || got.Summary.Total != 8 {
		t.Errorf("killed run's summary %+v, want 8 scenarios, 1 failed", got.Summary)
	}

	// A journal line that does not read (not the last): the whole reading's error.
	os.WriteFile(filepath.Join(killed, result.JournalFile), []byte("{\"benchmark\": 7}\n{}\n"), 0o644)
	_, _, _, errs = importBoth(t, dir, ImportOptions{Files: []string{"killed"}, Format: "auto"})
	if errs[0] == nil || errs[1] == nil || errs[0].Error() != errs[1].Error() || !strings.Contains(errs[0].Error(), "corrupt journal line") {
		t.Errorf("a corrupt journal: streamed %v, whole %v", errs[0], errs[1])
	}
}

func mustJSON(t *testing.T, r *result.Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := result.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// same fails the test when the two stores do not hold the same run id, history and listing.
func same(t *testing.T, a, b store.Store, id string) {
	t.Helper()
	ctx := context.Background()
	ra, err := a.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := finite.Marshal(ra)
	jb, _ := finite.Marshal(rb)
	if !bytes.Equal(ja, jb) {
		t.Errorf("run %s streamed:\n%s\nwhole:\n%s", id, ja, jb)
	}
	// A run given a new id (its own was taken) has a random one: "new" in both.
	generated := func(runID string) string {
		if runID != id && runID != "20261127_060000-imp" {
			return "new"
		}
		return runID
	}
	for _, m := range []string{"latency_ms.p95", "throughput_ips", "memory_mb"} {
		pa, err1 := a.History(ctx, store.Query{Metric: m})
		pb, err2 := b.History(ctx, store.Query{Metric: m})
		for _, ps := range [][]store.Point{pa, pb} {
			for i := range ps {
				ps[i].RunID = generated(ps[i].RunID)
			}
		}
		if err1 != nil || err2 != nil || !reflect.DeepEqual(pa, pb) || len(pa) == 0 {
			t.Errorf("history of %s differs: streamed %d points (%v), whole %d (%v)", m, len(pa), err1, len(pb), err2)
		}
	}
	la, _ := a.List(ctx, store.Filter{})
	lb, _ := b.List(ctx, store.Filter{})
	for _, ls := range [][]store.RunInfo{la, lb} {
		for i := range ls {
			ls[i].ID = generated(ls[i].ID)
		}
	}
	if !reflect.DeepEqual(la, lb) {
		t.Errorf("listing: streamed %+v, whole %+v", la, lb)
	}
}

// TestImportMemory measures the peak resident memory (VmHWM) of importing a large run.json into
// a new SQLite store, in a process of its own: a measurement, skipped unless
// INFERBENCH_LARGE_RUN names the file (result's TestLargeRunMemory writes one:
// INFERBENCH_LARGE_RUN=/tmp/large.json INFERBENCH_LARGE_RUN_WRITE=200000 go test -run
// TestLargeRunMemory ./result). It fails when the peak is 2 times the file's size or more: the
// import holds a batch of scenarios, not the run. scripts/import-memory.sh measures the command.
func TestImportMemory(t *testing.T) {
	path := os.Getenv("INFERBENCH_LARGE_RUN")
	if path == "" {
		t.Skip("INFERBENCH_LARGE_RUN is not set: a measurement, not a test")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	start := time.Now()
	if _, err := Import(context.Background(), ImportOptions{Files: []string{path}, Format: "auto", Store: filepath.Join(dir, "h.db"),
		Env: run.Env{Dir: dir}, Stdout: &out, Stderr: &errOut}); err != nil {
		t.Fatal(err)
	}
	peak := vmHWM(t)
	ratio := float64(peak) / float64(fi.Size())
	t.Logf("%s: %d MB; %s in %v; peak RSS %d MB, %.2f times the file", path, fi.Size()>>20, strings.TrimSpace(errOut.String()), time.Since(start).Round(time.Millisecond), peak>>20, ratio)
	if ratio >= 2 {
		t.Errorf("peak RSS %.2f times the file's size, want under 2", ratio)
	}
}

// vmHWM is the process's peak resident memory in bytes (Linux).
func vmHWM(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status: Linux only")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			var kb int64
			fmt.Sscan(f[1], &kb)
			return kb << 10
		}
	}
	t.Skip("no VmHWM")
	return 0
}
