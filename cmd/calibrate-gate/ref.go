package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/sysinfo"
	"github.com/inferbench/inferbench/internal/cli/ab"
	"github.com/inferbench/inferbench/result"
)

// This file holds -path ref: the paired path's rates (`inferbench run --baseline-ref`) at its
// defaults. Each kind's files become a git repository of four commits: base, same (a file that
// no definition reads changed: the code is unchanged), slow5 and slow10 (the kind's slowdown,
// and half of it, written into the files, since both sides of a paired run share the
// environment). Each round checks out same, slow5 and slow10 in turn and runs it against base
// in one `run --baseline-ref base`; a false failure is same's exit 3, a slowdown found slow5's
// or slow10's.

// refSkipped are the kinds the paired path does not take, and why.
var refSkipped = map[string]string{
	"gofunc": "a Go function is built at the ref from the running binary's main package, which is this program, not the workspace's",
	"openai": "a definition that starts a server is refused by --baseline-ref (two servers are `inferbench ab openai:URL1 openai:URL2`)",
}

// refTally is one kind's counts on the paired path.
type refTally struct {
	name, scenario, injected string
	rounds                   int
	exit3                    [3]int // same, slow5, slow10: runs that exited 3
	unknown                  [3]int // runs whose answer was unknown
	seconds                  [3][]float64
	change                   [3][]float64 // the gated metric's change, percent
	errors                   []string
	elapsed                  time.Duration
	sizes                    [2]string // the two slowdowns: "5%", "10%"; counted, "0.5%", "1%"
}

var refSides = [3]string{"same", "slow5", "slow10"}

// literal writes the kind's variables into its files: ${NAME} in a definition and
// os.environ.get("NAME", ...) in Python become the value.
func literal(files, vals map[string]string) map[string]string {
	out := map[string]string{}
	for name, content := range files {
		for k, v := range vals {
			content = strings.ReplaceAll(content, "${"+k+"}", v)
			py := regexp.MustCompile(`os\.environ\.get\("` + regexp.QuoteMeta(k) + `", "[^"]*"\)`)
			content = py.ReplaceAllLiteralString(content, strconv.Quote(v))
		}
		out[name] = content
	}
	return out
}

// halfway is the environment halfway between base and slow: half the slowdown, for numbers.
func halfway(base, slow map[string]string) map[string]string {
	out := withEnvMap(base, nil)
	for k, s := range slow {
		b, err1 := strconv.ParseFloat(base[k], 64)
		x, err2 := strconv.ParseFloat(s, 64)
		if err1 != nil || err2 != nil {
			out[k] = s
			continue
		}
		h := b + (x-b)/2
		if !strings.Contains(base[k], ".") && !strings.Contains(s, ".") {
			out[k] = strconv.FormatInt(int64(math.Round(h)), 10)
		} else {
			out[k] = strconv.FormatFloat(h, 'f', 6, 64)
		}
	}
	return out
}

// measureRef runs one kind on the paired path.
func measureRef(k kind, bin string, o options, stderr io.Writer) (*refTally, error) {
	t := &refTally{name: k.name, scenario: k.scenario, injected: k.injected, sizes: [2]string{"5%", "10%"}}
	if k.primary == "instructions" {
		t.sizes = [2]string{"0.5%", "1%"} // a counted kind's slowdown is 1% of its work
	}
	start := time.Now()
	defer func() { t.elapsed = time.Since(start) }()
	base := strings.TrimSuffix(k.name, loadedSuffix)
	if why, ok := refSkipped[base]; ok {
		return nil, fmt.Errorf("not on the paired path: %s", why)
	}
	dir := filepath.Join(o.work, "ref-"+strings.ReplaceAll(k.name, loadedSuffix, "-loaded"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	env := kindEnv(o, bin, "1", map[string]string{
		"GIT_AUTHOR_NAME": "calibrate", "GIT_AUTHOR_EMAIL": "calibrate@example.com",
		"GIT_COMMITTER_NAME": "calibrate", "GIT_COMMITTER_EMAIL": "calibrate@example.com"})
	repo := refRepo{dir: dir, env: env}
	if err := repo.git("init", "-q"); err != nil {
		return nil, err
	}
	// The run folders stay out of the commits (a checkout would trip on them).
	if err := repo.commit(withEnvMap(literal(k.files, k.base), map[string]string{".gitignore": "/results/\n"}), "base"); err != nil {
		return nil, err
	}
	// One plain run of the base gives the median some slowdowns are sized by.
	w := &workspace{k: k, dir: dir, bin: bin, env: env, stderr: stderr, flags: k.flags}
	pilot, err := w.run(nil, false)
	if err != nil {
		return nil, err
	}
	med, _, _, err := runInfo(pilot, k.primary)
	if err != nil {
		return nil, err
	}
	t.scenario = withPilot(k.scenario, k.primary, med, "the pilot run's")
	slow10 := withEnvMap(k.base, k.slow(med))
	sides := map[string]map[string]string{
		"same":   withEnvMap(literal(k.files, k.base), map[string]string{"CALIBRATE.txt": "the same code, another commit\n"}),
		"slow5":  literal(k.files, halfway(k.base, slow10)),
		"slow10": literal(k.files, slow10),
	}
	for _, side := range refSides {
		if err := repo.git("checkout", "-q", "base"); err != nil {
			return nil, err
		}
		if err := repo.commit(sides[side], side); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(stderr, "calibrate-gate: %s (paired): %s median %.4g; slowed by %v and halfway\n", k.name, k.primary, med, k.slow(med))
	return t, refRounds(t, repo, w, o.n, start, stderr)
}

// withPilot is a kind's scenario with the median its unchanged runs measured, so that the table
// says what one call took on the day rather than what it was meant to: "(the pilot run's median
// latency_ms 5.07)".
func withPilot(scenario, metric string, med float64, whose string) string {
	return fmt.Sprintf("%s (%s median %s %.3g)", scenario, whose, metric, med)
}

// refRepo is the git repository of a kind's paired runs: a base commit and a commit of each
// side, each tagged with its name.
type refRepo struct {
	dir string
	env []string
}

// git runs git with args in the repository.
func (r refRepo) git(args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, tail(out, 500))
	}
	return nil
}

// commit writes files, commits the tree and tags the commit tag.
func (r refRepo) commit(files map[string]string, tag string) error {
	if err := writeFiles(r.dir, files); err != nil {
		return err
	}
	if err := r.git("add", "-A"); err != nil {
		return err
	}
	if err := r.git("commit", "-q", "-m", tag); err != nil {
		return err
	}
	return r.git("tag", tag)
}

// refRounds runs n rounds of the paired path: in each, every side checked out and run against
// base (refRun), its exit code, answer, seconds and change counted into t; an error of a side's
// checkout ends the rounds, one of its run is counted.
func refRounds(t *refTally, repo refRepo, w *workspace, n int, start time.Time, stderr io.Writer) error {
	for i := 0; i < n; i++ {
		for s, side := range refSides {
			if err := repo.git("checkout", "-q", side); err != nil {
				return err
			}
			code, secs, change, answer, err := refRun(w)
			if err != nil {
				t.errors = append(t.errors, err.Error())
				continue
			}
			if code == exitRegression {
				t.exit3[s]++
			}
			if answer == ab.AnswerUnknown {
				t.unknown[s]++
			}
			t.seconds[s] = append(t.seconds[s], secs)
			if !math.IsNaN(change) {
				t.change[s] = append(t.change[s], change)
			}
		}
		t.rounds++
		fmt.Fprintf(stderr, "calibrate-gate: %s (paired): round %d of %d: exit 3 in %d, %d, %d (same, %s, %s); %d errors; %s\n",
			t.name, i+1, n, t.exit3[0], t.exit3[1], t.exit3[2], t.sizes[0], t.sizes[1], len(t.errors), time.Since(start).Round(time.Second))
	}
	return nil
}

// refRun runs the checked-out commit against base and returns the exit code, its seconds, the
// change of the gated metric (cpu_ms where it gated, else the compared metric) and its answer.
func refRun(w *workspace) (code int, secs, change float64, answer string, err error) {
	args := append([]string{"run", "--baseline-ref", "base", "--no-store", "--no-html-report", "--format", "none", "--output-dir", "results"}, w.flags...)
	cmd := exec.Command(w.bin, args...)
	cmd.Dir, cmd.Env = w.dir, w.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	runErr := cmd.Run()
	secs = time.Since(t0).Seconds()
	var ee *exec.ExitError
	switch {
	case runErr == nil:
	case errors.As(runErr, &ee) && ee.ExitCode() == exitRegression:
		code = exitRegression
	default:
		return 0, 0, 0, "", fmt.Errorf("inferbench %s: %v\n%s", strings.Join(args, " "), runErr, tail(out.Bytes(), 1500))
	}
	r, err := result.Load(filepath.Join(w.dir, "results", "latest"))
	if err != nil || len(r.Scenarios) != 1 {
		return code, secs, math.NaN(), "", fmt.Errorf("the run's results: %v", err)
	}
	var sec ab.RefSection
	if err := json.Unmarshal(r.Scenarios[0].Extra.Other[ab.SectionBaselineRef], &sec); err != nil {
		return code, secs, math.NaN(), "", fmt.Errorf("the run's baseline_ref section: %v", err)
	}
	res := sec.Result
	if sec.CPU != nil && cpuGated(w.dir) {
		res = sec.CPU // a CPU-bound scenario is judged on its CPU time
	}
	switch {
	case res != nil:
		return code, secs, 100 * (res.Ratio - 1), res.Answer, nil
	case sec.Counted != nil: // instruction mode: exact counts, no answer of the A/B's
		o, n := sec.Counted.Metrics[w.k.primary], r.Scenarios[0].Metrics[w.k.primary]
		if o.Summary != nil && n.Summary != nil && o.Summary.Median > 0 {
			return code, secs, 100 * (n.Summary.Median/o.Summary.Median - 1), "", nil
		}
	}
	return code, secs, math.NaN(), "", nil
}

// cpuGated reports whether the run's comparison (results/latest/compare.json) gated cpu_ms: the
// scenario was CPU-bound, so its answer and change are its CPU time's. A subject that reports
// cpu_ms is not CPU-bound for that (a command that sleeps): there the compared metric judged.
func cpuGated(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "results", "latest", "compare.json"))
	if err != nil {
		return false
	}
	var rep compare.Report
	if json.Unmarshal(data, &rep) != nil {
		return false
	}
	for _, row := range rep.Rows {
		if row.Metric == compare.CPUMetric && row.Gated {
			return true
		}
	}
	return false
}

// writeRefTable writes the paired path's table.
func writeRefTable(w io.Writer, ts []*refTally) {
	for i, t := range ts {
		if i == 0 || t.sizes != ts[i-1].sizes {
			a, b := t.sizes[0], t.sizes[1]
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "| kind | what one call does | rounds | unchanged: exit 3 | %s slower: found | %s slower: found | unknown (unchanged, %s, %s) | median seconds a verdict (unchanged, %s, %s) | measured change (%s, %s) |\n", a, b, a, b, a, b, a, b)
			fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
		}
		med := func(xs []float64, f string) string {
			if len(xs) == 0 {
				return "–"
			}
			return fmt.Sprintf(f, median(slices.Clone(xs)))
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d of %d | %d of %d | %d of %d | %d, %d, %d | %s, %s, %s | %s, %s |\n",
			t.name, t.scenario, t.rounds, t.exit3[0], len(t.seconds[0]), t.exit3[1], len(t.seconds[1]), t.exit3[2], len(t.seconds[2]),
			t.unknown[0], t.unknown[1], t.unknown[2],
			med(t.seconds[0], "%.0f"), med(t.seconds[1], "%.0f"), med(t.seconds[2], "%.0f"),
			med(t.change[1], "%+.1f%%"), med(t.change[2], "%+.1f%%"))
	}
	for _, t := range ts {
		for _, e := range t.errors {
			fmt.Fprintf(w, "\n%s: error: %s\n", t.name, strings.SplitN(e, "\n", 2)[0])
		}
	}
}

// calibrateRef is calibrate for -path ref: each kind the paired path takes, quiet and loaded as
// conditions say, its table printed and written between its markers.
func calibrateRef(o options, ks []kind, conditions []bool, self string, started time.Time, load0 string, stdout, stderr io.Writer) int {
	var ts []*refTally
	var taken []kind
	for _, k := range ks {
		if why, ok := refSkipped[k.name]; ok {
			fmt.Fprintf(stderr, "calibrate-gate: %s: not on the paired path: %s\n", k.name, why)
			continue
		}
		taken = append(taken, k)
	}
	// The table is written after each kind, so that a run cut short keeps what it measured.
	failed := eachKind(conditions, taken, stderr, func(k kind) error {
		t, err := measureRef(k, self, o, stderr)
		if t != nil {
			ts = append(ts, t)
			if werr := writeRef(o, ts, started, load0, stderr); werr != nil {
				return errors.Join(err, werr)
			}
		}
		return err
	})
	var table bytes.Buffer
	writeRefTable(&table, ts)
	stdout.Write(table.Bytes())
	if failed {
		return 1
	}
	return 0
}

// writeRef puts the kinds measured so far into o.write between their markers: a part of their
// own, with this invocation's commit, time, load and command, merged with what the section held
// (mergeRef), so that kinds measured by separate invocations stand side by side.
func writeRef(o options, ts []*refTally, started time.Time, load0 string, stderr io.Writer) error {
	if o.write == "" {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s UTC (%s), commit %s, on %s; load average %s at the start, %s at the end.\n\n",
		started.Format("2006-01-02 15:04"), time.Since(started).Round(time.Second), commit(), machine(), load0, sysinfo.LoadAvg())
	begin, end := refBeginMarker, refEndMarker
	if o.measure == "instructions" {
		begin, end = refCountBeginMarker, refCountEndMarker
	}
	fmt.Fprintf(&b, "Command: `%s`, which runs `%s`.\n\n", refTarget(o), strings.TrimSpace(o.command))
	writeRefTable(&b, ts)
	old, err := os.ReadFile(o.write)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.name
	}
	body := mergeRef(markedBody(string(old), begin, end), b.String(), names)
	if err := os.WriteFile(o.write, []byte(replaceMarked(string(old), body, begin, end)), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "calibrate-gate: %s: the table is in %s\n", names[len(names)-1], o.write)
	return nil
}

// mergeRef is the section body with part added: the body's parts (each from a line "Measured
// ...") lose their rows and error lines of the kinds in names, a header left with no rows goes
// and so does a part left with none, and part comes last.
func mergeRef(body, part string, names []string) string {
	drop := map[string]bool{}
	for _, n := range names {
		drop[n] = true
	}
	var kept []string
	for _, p := range refParts(body) {
		if p = dropKinds(p, drop); p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(append(kept, strings.TrimRight(part, "\n")), "\n\n") + "\n"
}

// refParts splits a section body at its lines beginning "Measured ".
func refParts(body string) []string {
	var parts []string
	var cur []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "Measured ") && len(cur) > 0 {
			parts = append(parts, strings.Join(cur, "\n"))
			cur = nil
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		parts = append(parts, strings.Join(cur, "\n"))
	}
	return parts
}

// dropKinds is one part without the rows and error lines of the kinds in drop; "" when no row
// is left.
func dropKinds(part string, drop map[string]bool) string {
	var out []string
	rows := 0
	for _, line := range strings.Split(part, "\n") {
		name, _, isRow := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		switch {
		case strings.HasPrefix(line, "| kind |") || strings.HasPrefix(line, "|---"):
		case strings.HasPrefix(line, "| ") && isRow:
			if drop[name] {
				continue
			}
			rows++
		default:
			if n, _, ok := strings.Cut(line, ": error: "); ok && drop[n] {
				continue
			}
		}
		out = append(out, line)
	}
	if rows == 0 {
		return ""
	}
	// A header whose rows all went goes with its rule; the blank lines left around them close up
	// below.
	for i := 0; i+1 < len(out); i++ {
		if strings.HasPrefix(out[i], "| kind |") && (i+2 >= len(out) || !strings.HasPrefix(out[i+2], "| ")) {
			out = slices.Delete(out, i, i+2)
			i--
		}
	}
	text := strings.Join(out, "\n")
	for strings.Contains(text, "\n\n\n") {
		text = strings.ReplaceAll(text, "\n\n\n", "\n\n")
	}
	return strings.TrimRight(text, "\n")
}

// refTarget is the make command that runs what o measures: the Makefile's variables where they
// differ from its defaults (N=100, MEASURE=time, LOAD=both, every kind).
func refTarget(o options) string {
	target := fmt.Sprintf("make calibrate-ref N=%d", o.n)
	if o.measure != "time" {
		target += " MEASURE=" + o.measure
	}
	if o.load != "both" {
		target += " LOAD=" + o.load
	}
	if len(o.kinds) > 0 {
		target += " KINDS=" + strings.Join(o.kinds, ",")
	}
	return target
}
