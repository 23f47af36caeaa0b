// Command calibrate-explain measures how well explain names the cause of a change
// (docs/explain.md): for each source (Go functions under the CPU profiler, Python functions
// under cProfile, torch operators under torch.profiler), a synthetic program of about twenty
// functions or operators is profiled as `run --profile` profiles it, once unchanged and once with
// one function or operator, chosen at random, made 10% costlier; explain should rank it first
// with at least 80% of the change. A third, unchanged profile paired with the first should name
// nothing. It prints the table of docs/measurements/explain.md, with the machine's load.
//
// With -measure instructions it calibrates instruction mode's exact counts instead: the Go program
// counted as a Go function under callgrind (a copy of this binary, as run --measure instructions
// counts a gofunc scenario), the Python program's bytecode instructions per function (the counted
// worker's bytecode.json, in a Python process per profile), the Go program run as a command
// under callgrind (source command, as an exec scenario is counted), and the torch model's
// instructions per operator (the counted worker's operators.json, in one Python process under
// callgrind for all profiles: a process per profile would import torch under valgrind each time).
//
//	go run ./cmd/calibrate-explain -n 100 -sources go,python,torch
//	go run ./cmd/calibrate-explain -n 100 -measure instructions -sources go,python,command,torch
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/callgrind"
	"github.com/inferbench/inferbench/internal/base/sysinfo"
	"github.com/inferbench/inferbench/internal/explain"
	command "github.com/inferbench/inferbench/internal/kind/exec"
	"github.com/inferbench/inferbench/internal/kind/gofunc"
	"github.com/inferbench/inferbench/subject"
)

func main() {
	// In instruction mode the Go source runs this binary again under callgrind, which serves
	// the counted calls here.
	if served, err := gofunc.ServeCounted(context.Background(), os.Getenv); served {
		if err != nil {
			fmt.Fprintln(os.Stderr, "calibrate-explain:", err)
			os.Exit(1)
		}
		return
	}
	// The command source's child: the synthetic program once, with function INDEX made costlier.
	if len(os.Args) == 4 && os.Args[1] == "-synthetic-child" {
		at, _ := strconv.Atoi(os.Args[2])
		by, _ := strconv.ParseFloat(os.Args[3], 64)
		for i, f := range synthetic {
			w := 20000
			if i == at {
				w = int(20000 * (1 + by))
			}
			f(w)
		}
		return
	}
	n := flag.Int("n", 100, "trials per source (each: an unchanged, an injected and a second unchanged profile)")
	sources := flag.String("sources", "go,python,torch", "sources to calibrate")
	python := flag.String("python", ".venv/bin/python", "the Python with torch, for the python and torch sources")
	root := flag.String("root", ".", "the repository root (internal/workers/python holds the worker)")
	seed := flag.Uint64("seed", 1, "random seed of the injected functions")
	flag.Float64Var(&inject, "inject", 0.10, "how much costlier the injected function or operator is (0.10: +10%; torch: in steps of its 10 runs a call)")
	flag.StringVar(&measure, "measure", "time", "time: the timing profilers run --profile uses; instructions: the per-function counts of --measure instructions (Go: callgrind; Python: the worker's bytecode counts; torch: the worker's per-operator counts under callgrind)")
	flag.IntVar(&commandRuns, "runs", 5, "source command: measured iterations per profile (run --iterations; each a chunk, as many as an exec scenario keeps)")
	from := flag.String("from", "", "tally profiles made elsewhere instead: folders KIND-SEED/ holding injects.txt (trial, injected index) and TRIAL-old, TRIAL-new, TRIAL-same of the worker's chunk files")
	flag.Parse()
	if *from != "" {
		if err := tallyFrom(os.Stdout, *from); err != nil {
			fmt.Fprintln(os.Stderr, "calibrate-explain:", err)
			os.Exit(1)
		}
		return
	}
	if err := calibrate(os.Stdout, *n, strings.Split(*sources, ","), *python, *root, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "calibrate-explain:", err)
		os.Exit(1)
	}
}

// profiler profiles a source with function inject made costlier (-1: none), its file edited by e
// (the python source; the others have no file to edit), into dir.
type profiler func(inject int, e edit, dir string) (*explain.Profile, error)

// noEdits is a profiler of a source with no file to edit.
func noEdits(p func(inject int, dir string) (*explain.Profile, error)) profiler {
	return func(inject int, _ edit, dir string) (*explain.Profile, error) { return p(inject, dir) }
}

// edit is how the python source's file is edited besides the injected cost (driver.py's
// program): "" not at all, "moved" (three lines above, the functions in reverse order: every
// line moves), "renamed" (function Rename under another name).
type edit struct {
	Kind   string
	Rename int
}

func (e edit) label() string {
	switch e.Kind {
	case "moved":
		return ", every function moved and reordered"
	case "renamed":
		return ", another function renamed"
	}
	return ""
}

// tally counts one source's trials.
type tally struct {
	source             string
	trials, first      int
	ranked             int // ranked first, whatever its share
	clean              int
	seconds            float64 // profiling wall time per profile
	loadStart, loadEnd string
	entries            int
	// changes are the injected entry's change per call as explain reported it (Delta over
	// OldSelf), in the trials that ranked it first.
	changes []float64
}

// count counts one trial: x explains old against nw, in which the entry that want names was
// slowed (ranked first, and first with at least 80% of the change), and y old against same, an
// unchanged profile (clean when it names nothing).
func (t *tally) count(old, nw, same *explain.Profile, want func(string) bool) (x, y *explain.Explanation, err error) {
	if x, err = explain.Diff(old, nw, explain.Options{}); err != nil {
		return nil, nil, err
	}
	if y, err = explain.Diff(old, same, explain.Options{}); err != nil {
		return nil, nil, err
	}
	t.trials++
	t.entries = x.Tested
	if len(x.Named) > 0 && want(x.Named[0].Name) {
		t.ranked++
		if e := x.Named[0]; e.OldSelf > 0 {
			t.changes = append(t.changes, e.Delta/e.OldSelf)
		}
		if x.Named[0].Share >= 0.8 {
			t.first++
		}
	}
	if len(y.Named) == 0 {
		t.clean++
	}
	return x, y, nil
}

// profilerFor returns the profiler of a source's trials, the functions it may inject into
// (names), and done, which ends the driver it started (if any). python and root start the
// Python driver; tmp holds the counted driver's files.
func profilerFor(src, python, root, tmp string) (prof profiler, names int, done func(), err error) {
	names = 20
	done = func() {}
	switch src {
	case "go":
		prof = noEdits(goProfile)
		if measure == "instructions" {
			prof = noEdits(goCounted)
		}
	case "command":
		if measure != "instructions" {
			return nil, 0, nil, fmt.Errorf("source command: commands have no timing profiler; use -measure instructions")
		}
		prof = noEdits(commandCounted)
	case "python", "torch":
		start := startDriver
		if measure == "instructions" && src == "torch" {
			// One driver under callgrind for every profile: a fresh one would import torch
			// under valgrind for each (30 s to minutes).
			start = func(python, root string) (*driver, error) { return startCountedDriver(python, root, tmp) }
		}
		d, err := start(python, root)
		if err != nil {
			return nil, 0, nil, err
		}
		done = d.close
		if src == "torch" {
			names = 12
		}
		prof = func(inject int, e edit, dir string) (*explain.Profile, error) { return d.profile(src, inject, e, dir) }
		if measure == "instructions" && src == "python" {
			// A process per profile, as each run's worker is one: a count must not depend
			// on what the process ran before.
			prof = func(inject int, e edit, dir string) (*explain.Profile, error) {
				d, err := startDriver(python, root)
				if err != nil {
					return nil, err
				}
				defer d.close()
				return d.profile(src, inject, e, dir)
			}
		}
	default:
		return nil, 0, nil, fmt.Errorf("source %q: want go, python, torch or command", src)
	}
	return prof, names, done, nil
}

// calibrate runs n trials of each source and writes the table of what explain named.
func calibrate(w io.Writer, n int, sources []string, python, root string, seed uint64) error {
	tmp, err := os.MkdirTemp("", "calibrate-explain")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var rows []tally
	for _, src := range sources {
		rng := rand.New(rand.NewPCG(seed, 7))
		t := tally{source: src, loadStart: sysinfo.LoadAvg()}
		prof, names, done, err := profilerFor(src, python, root, tmp)
		if err != nil {
			return err
		}
		defer done()
		var took time.Duration
		// The python source's trials edit the file too, a third of them each way: the edit
		// applies to the new and the unchanged third profile, so explain must still name the
		// injected function alone, and nothing between two unchanged ones.
		edits := []edit{{}}
		if src == "python" {
			edits = append(edits, edit{Kind: "moved"}, edit{Kind: "renamed"})
		}
		byEdit := make([]tally, len(edits))
		for j, e := range edits {
			byEdit[j] = tally{source: src + e.label(), loadStart: t.loadStart}
		}
		for i := range n {
			inject := rng.IntN(names)
			e := edits[i%len(edits)]
			if e.Kind == "renamed" {
				e.Rename = (inject + 1 + rng.IntN(names-1)) % names // another function than the injected
			}
			dir := filepath.Join(tmp, fmt.Sprintf("%s-%d", src, i))
			start := time.Now()
			old, err := prof(-1, edit{}, dir+"-old")
			if err != nil {
				return err
			}
			took += time.Since(start)
			nw, err := prof(inject, e, dir+"-new")
			if err != nil {
				return err
			}
			same, err := prof(-1, e, dir+"-same")
			if err != nil {
				return err
			}
			x, y, err := byEdit[i%len(edits)].count(old, nw, same, injected(src, inject))
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "%s%s trial %d: injected %d, named %v; unchanged pair named %d\n", src, e.label(), i+1, inject, names3(x.Named), len(y.Named))
			os.RemoveAll(dir + "-old")
			os.RemoveAll(dir + "-new")
			os.RemoveAll(dir + "-same")
		}
		for j := range byEdit {
			bt := &byEdit[j]
			bt.seconds = took.Seconds() / float64(n)
			bt.loadEnd = sysinfo.LoadAvg()
			if bt.trials > 0 {
				rows = append(rows, *bt)
			}
		}
	}
	writeTable(w, rows)
	return nil
}

func writeTable(w io.Writer, rows []tally) {
	fmt.Fprintf(w, "+%.0f%% injected:\n\n", 100*inject)
	fmt.Fprintf(w, "| source | trials | injected ranked first | … with ≥ 80%% of the change | its change per call reported, median (min–max) | unchanged pairs naming nothing | entries tested | profile wall time per run | load average (1, 5, 15 min) start → end |\n|---|---|---|---|---|---|---|---|---|\n")
	pc := func(k, n int) string { return fmt.Sprintf("%d (%.0f%%)", k, 100*float64(k)/float64(n)) }
	for _, t := range rows {
		change := "-"
		if len(t.changes) > 0 {
			cs := slices.Sorted(slices.Values(t.changes))
			change = fmt.Sprintf("%+.1f%% (%+.1f%% to %+.1f%%)", 100*cs[len(cs)/2], 100*cs[0], 100*cs[len(cs)-1])
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %d | %.1f s | %s → %s |\n", t.source, t.trials, pc(t.ranked, t.trials), pc(t.first, t.trials),
			change, pc(t.clean, t.trials), t.entries, t.seconds, t.loadStart, t.loadEnd)
	}
}

func names3(es []explain.Entry) []string {
	var out []string
	for i, e := range es {
		if i == 3 {
			break
		}
		out = append(out, fmt.Sprintf("%s (%.0f%%)", e.Name, 100*e.Share))
	}
	return out
}

// injected returns whether an entry's name is the injected function's or operator's.
func injected(src string, i int) func(string) bool {
	switch src {
	case "go", "command":
		return func(n string) bool { return n == fmt.Sprintf("main.f%02d", i) }
	case "python":
		return func(n string) bool { return strings.HasPrefix(n, fmt.Sprintf("f%02d (", i)) }
	}
	// The torch model's operators (driver.py): three matrix products of different shapes, then
	// one operator each. In instruction mode every dimension is an eighth.
	ops := []string{"aten::mm [256×512, 512×512]", "aten::mm [256×512, 512×1024]", "aten::mm [256×512, 512×256]",
		"aten::tanh", "aten::sigmoid", "aten::exp", "aten::mul", "aten::add", "aten::sin", "aten::cos", "aten::abs", "aten::neg"}
	if measure == "instructions" {
		ops[0], ops[1], ops[2] = "aten::mm [32×64, 64×64]", "aten::mm [32×64, 64×128]", "aten::mm [32×64, 64×32]"
	}
	return func(n string) bool { return strings.HasPrefix(n, ops[i]) || n == ops[i] }
}

// inject is the injected function's extra cost, relative (-inject).
var inject = 0.10

// measure is -measure: "time" or "instructions".
var measure = "time"

var goWork [20]int

func init() {
	for i := range goWork {
		goWork[i] = 20000
	}
	gofunc.Register("calibrate-explain/synthetic", func(context.Context) error {
		for i, f := range synthetic {
			f(goWork[i])
		}
		return nil
	})
	// The counted program takes its injection as parameters: it runs in a process of its own.
	gofunc.RegisterSetup("calibrate-explain/counted", func(_ context.Context, p subject.Params) (gofunc.Func, func(), error) {
		var work [20]int
		at, by := p.Int("inject", -1), p.Float("by", 0)
		for i := range work {
			work[i] = 20000
			if i == at {
				work[i] = int(20000 * (1 + by))
			}
		}
		return func(context.Context) error {
			for i, f := range synthetic {
				f(work[i])
			}
			return nil
		}, nil, nil
	})
}

// goCounted counts the synthetic Go program as run --measure instructions does (a copy of this
// binary under callgrind, one warm-up call and one counted call), with function injectAt 10%
// costlier (none for -1), and reads the callgrind file it keeps.
func goCounted(injectAt int, dir string) (*explain.Profile, error) {
	ctx := context.Background()
	s, err := gofunc.Open(ctx, subject.Spec{
		Config:     &gofunc.Config{Func: "calibrate-explain/counted"},
		Params:     subject.Params{"inject": injectAt, "by": inject},
		Measure:    subject.MeasureInstructions,
		ProfileDir: dir,
	})
	if err != nil {
		return nil, err
	}
	return count(ctx, s, dir, 1, 1)
}

// count makes a counted subject's warm-up calls and counted calls, closes it, and reads the
// callgrind files it kept in dir.
func count(ctx context.Context, s subject.Subject, dir string, warmups, counted int) (*explain.Profile, error) {
	for i := range warmups + counted {
		if _, err := s.Do(ctx, subject.Request{Index: i, Warmup: i < warmups}); err != nil {
			s.Close()
			return nil, err
		}
	}
	kept := s.(subject.Counter).Kept()
	if err := s.Close(); err != nil {
		return nil, err
	}
	var rel []string
	for _, f := range kept {
		r, err := filepath.Rel(dir, f)
		if err != nil {
			return nil, err
		}
		rel = append(rel, r)
	}
	return explain.Load(dir, rel)
}

// goProfile profiles the synthetic Go program as run --profile does (gofunc's profile pass), with
// function inject 10% costlier (none for -1).
func goProfile(injectAt int, dir string) (*explain.Profile, error) {
	for i := range goWork {
		goWork[i] = 20000
		if i == injectAt {
			goWork[i] = int(20000 * (1 + inject))
		}
	}
	s, err := gofunc.Open(context.Background(), subject.Spec{Config: &gofunc.Config{Func: "calibrate-explain/synthetic"}})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if _, err := s.(subject.Profiler).Profile(context.Background(), dir, 20); err != nil {
		return nil, err
	}
	return explain.Load(dir, []string{"cpu.pprof"})
}

// commandCounted counts the synthetic Go program run as a command, as run --measure
// instructions --iterations RUNS --warmup 0 counts an exec scenario (the whole process under
// callgrind, the Go runtime's start and its background threads included; each measured iteration's
// files kept, up to the command's limit), with function injectAt costlier (none for -1).
func commandCounted(injectAt int, dir string) (*explain.Profile, error) {
	ctx := context.Background()
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	s, err := command.Open(ctx, subject.Spec{
		Config:     &command.Config{Command: []any{self, "-synthetic-child", strconv.Itoa(injectAt), strconv.FormatFloat(inject, 'g', -1, 64)}},
		Measure:    subject.MeasureInstructions,
		ProfileDir: dir,
	})
	if err != nil {
		return nil, err
	}
	return count(ctx, s, dir, 0, commandRuns)
}

// commandRuns is -runs: the command source's measured iterations per profile.
var commandRuns = 5

// driver is driver.py, profiling the Python program and the torch model with the worker's own
// profile pass.
type driver struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startDriver(python, root string) (*driver, error) {
	return runDriver(exec.Command(python, filepath.Join(root, "cmd", "calibrate-explain", "driver.py")), nil)
}

// startCountedDriver starts driver.py under callgrind as a counted worker runs (started
// uninstrumented, collecting on every thread; callgrind's files in dir), for the torch model's
// operator counts (inferbench_worker/operators.py).
func startCountedDriver(python, root, dir string) (*driver, error) {
	vg, err := callgrind.Find()
	if err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "callgrind.out")
	argv := vg.Args(callgrind.Options{Out: out, AtStart: true, Late: true}, python, filepath.Join(root, "cmd", "calibrate-explain", "driver.py"))
	env := callgrind.Environ(os.Environ())
	return runDriver(exec.Command(argv[0], argv[1:]...), append(env, "INFERBENCH_WORKER_CALLGRIND_OUT="+out))
}

func runDriver(cmd *exec.Cmd, env []string) (*driver, error) {
	python := cmd.Args[0]
	if env == nil {
		env = os.Environ()
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(cmd.Args[len(cmd.Args)-1])))
	cmd.Env = append(env, "PYTHONPATH="+filepath.Join(root, "internal", "workers", "python"), "OMP_NUM_THREADS=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w (see -python)", python, err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	return &driver{cmd: cmd, in: in, out: sc}, nil
}

func (d *driver) profile(kind string, injectAt int, e edit, dir string) (*explain.Profile, error) {
	job, _ := json.Marshal(map[string]any{"kind": kind, "inject": injectAt, "by": inject, "dir": dir, "n": 20, "measure": measure, "edit": e.Kind, "rename": e.Rename})
	if _, err := d.in.Write(append(job, '\n')); err != nil {
		return nil, err
	}
	if !d.out.Scan() {
		return nil, fmt.Errorf("driver.py ended: %v", d.out.Err())
	}
	var reply struct {
		Files []string `json:"files"`
		Error string   `json:"error"`
	}
	if err := json.Unmarshal(d.out.Bytes(), &reply); err != nil {
		return nil, fmt.Errorf("driver.py: %w", err)
	}
	if reply.Error != "" {
		return nil, fmt.Errorf("driver.py: %s", reply.Error)
	}
	var rel []string
	for _, f := range reply.Files {
		rel = append(rel, filepath.Base(f))
	}
	return explain.Load(dir, rel)
}

func (d *driver) close() {
	d.in.Close()
	d.cmd.Wait()
}

// tallyFrom tallies trials whose profiles driver.py made on another machine (a GPU machine's idle
// cores): each folder KIND-SEED under dir holds injects.txt ("TRIAL INJECTED SECONDS" lines, one
// per finished trial) and the trials' profiles.
func tallyFrom(w io.Writer, dir string) error {
	sets, err := filepath.Glob(filepath.Join(dir, "*-*"))
	if err != nil {
		return err
	}
	byKind := map[string]*tally{}
	var kinds []string
	for _, set := range sets {
		kind, _, _ := strings.Cut(filepath.Base(set), "-")
		b, err := os.ReadFile(filepath.Join(set, "injects.txt"))
		if err != nil {
			return err
		}
		t := byKind[kind]
		if t == nil {
			t = &tally{source: kind, loadStart: "-", loadEnd: "-"}
			byKind[kind] = t
			kinds = append(kinds, kind)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var trial, inj int
			var secs float64
			if _, err := fmt.Sscan(line, &trial, &inj, &secs); err != nil {
				return fmt.Errorf("%s: %q: %w", set, line, err)
			}
			load := func(tag string) (*explain.Profile, error) {
				d := filepath.Join(set, fmt.Sprintf("%d-%s", trial, tag))
				files, _ := filepath.Glob(filepath.Join(d, "*.json"))
				var rel []string
				for _, f := range files {
					rel = append(rel, filepath.Base(f))
				}
				return explain.Load(d, rel)
			}
			old, err := load("old")
			if err != nil {
				return err
			}
			nw, err := load("new")
			if err != nil {
				return err
			}
			same, err := load("same")
			if err != nil {
				return err
			}
			x, y, err := t.count(old, nw, same, injected(kind, inj))
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "%s trial %d: injected %d, named %v; unchanged pair named %d\n", filepath.Base(set), trial, inj, names3(x.Named), len(y.Named))
		}
	}
	var rows []tally
	for _, k := range kinds {
		rows = append(rows, *byKind[k])
	}
	writeTable(w, rows)
	return nil
}
