package callgrind

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Mode is the value of `measure:` and --measure that counts instructions.
const Mode = "instructions"

// The metrics instruction mode records per measured iteration.
const (
	// Instructions is the guest instructions executed (callgrind's Ir), unit count, lower is
	// better: the primary metric of a counted scenario.
	Instructions = "instructions"
	// EstCycles is Ir + 10 × L1 misses + 100 × LL misses (instruction and data, reads and
	// writes) of callgrind's cache simulation: KCachegrind's cycle estimate.
	EstCycles = "est_cycles"
)

// Cost weights of EstCycles: a miss of the first-level caches costs about 10 cycles, one of the
// last-level cache (memory) about 100.
const (
	L1MissCycles = 10
	LLMissCycles = 100
)

// Cache is the simulated cache: fixed, so that a count does not depend on the caches of the
// machine it was made on (callgrind otherwise reads them from the CPU, and warns when it cannot
// simulate them exactly). 32 KiB 8-way L1s and an 8 MiB 16-way last level, 64-byte lines: a
// common x86 server core.
var Cache = []string{"--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"}

// Valgrind is the valgrind found on this machine.
type Valgrind struct {
	Path    string
	Version string // "3.19.0"
}

// UnavailableError says why instruction mode cannot run here.
type UnavailableError struct{ Why string }

func (e *UnavailableError) Error() string {
	return "--measure instructions (measure: instructions) needs valgrind: " + e.Why +
		"; install the valgrind package (Debian and Ubuntu: sudo apt-get install valgrind), or measure time (drop --measure instructions)"
}

// ProbeTimeout bounds `valgrind --version`: a valgrind on PATH that never answers (a wrapper
// script waiting on something) fails instruction mode with an *UnavailableError instead of
// hanging the run.
var ProbeTimeout = 10 * time.Second

// Find returns the valgrind on PATH and its version, or an *UnavailableError.
func Find() (Valgrind, error) { return FindContext(context.Background()) }

// FindContext is Find, its probe of valgrind's version ended by ctx as well as by ProbeTimeout.
func FindContext(ctx context.Context) (Valgrind, error) { return find(ctx, "valgrind") }

func find(ctx context.Context, name string) (Valgrind, error) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "freebsd" {
		return Valgrind{}, &UnavailableError{Why: "valgrind does not run on " + runtime.GOOS}
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return Valgrind{}, &UnavailableError{Why: name + " is not on PATH"}
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	// A process the probe started may hold its output open after the probe is killed (a shell
	// script's child): Wait then stops waiting for it.
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return Valgrind{}, &UnavailableError{Why: fmt.Sprintf("%s --version did not answer within %v (%v)", path, ProbeTimeout, context.Cause(ctx))}
	}
	if err != nil {
		return Valgrind{}, &UnavailableError{Why: fmt.Sprintf("%s --version: %v", path, err)}
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "valgrind-")
	if v == "" {
		return Valgrind{}, &UnavailableError{Why: path + " --version printed nothing"}
	}
	return Valgrind{Path: path, Version: v}, nil
}

// Options are how a process runs under callgrind.
type Options struct {
	// Out is the callgrind file; %p in it is the process id (one file per process when
	// Children). A client request's dump adds ".N" to it.
	Out string
	// AtStart false counts nothing until the process toggles collection on (a client request):
	// the process counts only its own measured iterations.
	AtStart bool
	// Children counts the processes the command starts as well, each into its own file. A
	// process that forks dumps its counts so far just before (callgrind.out.PID.N): a child
	// that does not exec (a shell's subshell, `$(...)`, a forking pool) inherits the counts of
	// its parent, which it would otherwise write again in its own file, so that n forks were
	// counted about n²/2 times. Summed, the files count each process's work once.
	Children bool
	// Late starts the process uninstrumented (--instr-atstart=no): it runs some 6 times faster
	// until it turns instrumentation on with a client request (StartInstrumentation), before
	// the first call it measures or warms up. An interpreter importing a framework is most of a
	// counted worker's time: torch's import took 752 s under instrumentation here and 120 s
	// without. Nothing is counted uninstrumented, so what is measured is counted the same.
	Late bool
}

// ForkDumps are the options that dump a process's counts on entering fork (Options.Children):
// glibc 2.34 and later and musl do the system call in _Fork, which fork calls after its
// handlers (so that a child inherits as little as can be); older glibc in fork itself. A
// child's copy of the counts is then zero but for the few instructions from there to the
// system call.
var ForkDumps = []string{"--dump-before=_Fork", "--dump-before=fork"}

// Args returns the argv that runs argv under callgrind.
func (v Valgrind) Args(o Options, argv ...string) []string {
	args := []string{v.Path, "--tool=callgrind", "-q", "--cache-sim=yes"}
	args = append(args, Cache...)
	args = append(args, "--callgrind-out-file="+o.Out)
	if !o.AtStart {
		args = append(args, "--collect-atstart=no")
	}
	if o.Children {
		args = append(args, "--trace-children=yes")
		args = append(args, ForkDumps...)
	}
	if o.Late {
		args = append(args, "--instr-atstart=no")
	}
	return append(append(args, "--"), argv...)
}

// Environ returns env with what a process needs to be counted reliably: a Go program without
// asynchronous preemption (its signals crash Go programs under valgrind: 15 runs of 16 did
// here) and without the allocation profiler (it samples about one allocation in 512 KiB at
// random and walks its stack, inside the count: some calls of stats.Summarize counted 30,000
// instructions more than others), after GODEBUG's own settings so that these win; and a Python
// whose string hashes do not change from run to run (a random seed changes the instructions its
// dictionaries execute) unless PYTHONHASHSEED is set.
func Environ(env []string) []string {
	out := make([]string, 0, len(env)+2)
	const counted = "asyncpreemptoff=1,memprofilerate=0"
	godebug, hashSeed := counted, false
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "GODEBUG":
			if v != "" {
				godebug = v + "," + counted
			}
			continue
		case "PYTHONHASHSEED":
			hashSeed = true
		}
		out = append(out, kv)
	}
	out = append(out, "GODEBUG="+godebug)
	if !hashSeed {
		out = append(out, "PYTHONHASHSEED=0")
	}
	return out
}

// Counts are what callgrind counted in one file or summed over several.
type Counts struct {
	// Events are callgrind's totals by event name (Ir, Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr,
	// DLmw with the cache simulation).
	Events map[string]uint64
}

// Add adds o's events to c.
func (c *Counts) Add(o Counts) {
	if c.Events == nil {
		c.Events = map[string]uint64{}
	}
	for k, v := range o.Events {
		c.Events[k] += v
	}
}

// Instructions returns the instructions executed (Ir).
func (c Counts) Instructions() uint64 { return c.Events["Ir"] }

// EstCycles returns the cycle estimate: Ir + 10 × (I1mr + D1mr + D1mw) + 100 × (ILmr + DLmr +
// DLmw).
func (c Counts) EstCycles() uint64 {
	e := c.Events
	return e["Ir"] + L1MissCycles*(e["I1mr"]+e["D1mr"]+e["D1mw"]) + LLMissCycles*(e["ILmr"]+e["DLmr"]+e["DLmw"])
}

// Values returns the counts as an observation's figures.
func (c Counts) Values() map[string]float64 {
	return map[string]float64{Instructions: float64(c.Instructions()), EstCycles: float64(c.EstCycles())}
}

// maxCount bounds each event's total read: 2^53, which a float64 sample holds exactly; the cycle
// estimate's sum of such counts cannot overflow.
const maxCount = 1 << 53

// ReadFile reads the totals of a callgrind file: its "summary:" line (what was counted since the
// last zero), else its "totals:" line (the sum of its cost lines, which also holds the calls
// that were already running when the counts were zeroed: 7% more for a Python call), by the
// names of its "events:" line.
func ReadFile(path string) (Counts, error) {
	f, err := os.Open(path)
	if err != nil {
		return Counts{}, err
	}
	defer f.Close()
	return read(f, path)
}

// read is ReadFile of r (path names it in errors).
func read(r io.Reader, path string) (Counts, error) {
	var events []string
	var summary, totals []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "events:"):
			events = strings.Fields(strings.TrimPrefix(line, "events:"))
		case strings.HasPrefix(line, "summary:"):
			summary = strings.Fields(strings.TrimPrefix(line, "summary:"))
		case strings.HasPrefix(line, "totals:"):
			totals = strings.Fields(strings.TrimPrefix(line, "totals:"))
		}
	}
	if err := sc.Err(); err != nil {
		return Counts{}, fmt.Errorf("%s: %w", path, err)
	}
	vals := summary
	if vals == nil {
		vals = totals
	}
	if len(events) == 0 || vals == nil {
		return Counts{}, fmt.Errorf("%s: not a callgrind file (no events and totals lines); did the process end before callgrind wrote it?", path)
	}
	c := Counts{Events: make(map[string]uint64, len(events))}
	for i, name := range events {
		if i >= len(vals) {
			break // trailing zeros are left out
		}
		n, err := strconv.ParseUint(vals[i], 10, 64)
		if err != nil {
			return Counts{}, fmt.Errorf("%s: event %s: %w", path, name, err)
		}
		if n > maxCount {
			return Counts{}, fmt.Errorf("%s: event %s: %d is over %d, more than any process counts (a month of a core's work)", path, name, n, uint64(maxCount))
		}
		c.Events[name] = n
	}
	if _, ok := c.Events["Ir"]; !ok {
		return Counts{}, fmt.Errorf("%s: no Ir event (events: %s)", path, strings.Join(events, " "))
	}
	return c, nil
}

// ReadFiles sums the totals of the files.
func ReadFiles(paths []string) (Counts, error) {
	var sum Counts
	for _, p := range paths {
		c, err := ReadFile(p)
		if err != nil {
			return Counts{}, err
		}
		sum.Add(c)
	}
	if len(paths) == 0 {
		return Counts{}, errors.New("callgrind wrote no file")
	}
	return sum, nil
}

// Keep moves the callgrind files of one measured iteration into dir as callgrind.out (the
// first process's, in the order given) and callgrind.out.2, .3, ... (the processes it started),
// replacing what an earlier Keep put there, and returns the paths. redact, when not nil, masks
// the secrets of the command line that callgrind writes into each file (its "cmd:" line): the
// files kept in a run folder are uploaded with it.
func Keep(dir string, files []string, redact func(string) string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	old, _ := filepath.Glob(filepath.Join(dir, "callgrind.out*"))
	for _, f := range old {
		os.Remove(f)
	}
	var kept []string
	for i, f := range files {
		name := "callgrind.out"
		if i > 0 {
			name += "." + strconv.Itoa(i+1)
		}
		dst := filepath.Join(dir, name)
		var err error
		if redact != nil {
			err = copyRedacted(f, dst, redact)
		} else {
			err = moveFile(f, dst)
		}
		if err != nil {
			return kept, err
		}
		kept = append(kept, dst)
	}
	return kept, nil
}

// copyRedacted copies the callgrind file src to dst with redact applied to its "cmd:" lines
// (the command line of the process, in the header), and removes src.
func copyRedacted(src, dst string, redact func(string) string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if err := RedactCommand(out, in, redact); err != nil {
		out.Close()
		os.Remove(dst)
		return fmt.Errorf("%s: %w", dst, err)
	}
	if err := out.Close(); err != nil {
		os.Remove(dst)
		return err
	}
	return os.Remove(src)
}

// RedactCommand copies the callgrind file r to w with redact applied to each "cmd:" line, every
// other line copied as it is.
func RedactCommand(w io.Writer, r io.Reader, redact func(string) string) error {
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriterSize(w, 64<<10)
	start := true // at the start of a line
	for {
		chunk, err := br.ReadSlice('\n')
		if start && bytes.HasPrefix(chunk, []byte("cmd:")) {
			// A command line is short; one longer than the reader's buffer is read whole.
			line := append([]byte(nil), chunk...)
			for err == bufio.ErrBufferFull {
				chunk, err = br.ReadSlice('\n')
				line = append(line, chunk...)
			}
			chunk = []byte(redact(string(line)))
		}
		if _, werr := bw.Write(chunk); werr != nil {
			return werr
		}
		start = err == nil
		switch {
		case err == io.EOF:
			return bw.Flush()
		case err != nil && err != bufio.ErrBufferFull:
			return err
		}
	}
}

func moveFile(src, dst string) error {
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		return err
	}
	return os.Remove(src)
}

// Identity is what an instruction count depends on besides the code: the valgrind version (its
// translation of instructions changes between versions), the CPU (the instruction set
// extensions valgrind passes through to the guest choose the code paths of libc, numpy, torch:
// AVX2 or SSE) and the simulated cache. Subjects add their interpreter (python, torch). Two
// counts compare only when their identities are equal.
func (v Valgrind) Identity() map[string]string {
	id := map[string]string{"valgrind": v.Version, "arch": runtime.GOARCH, "cache": strings.Join(Cache, " ")}
	vendor, model, flags := cpuinfo()
	if model != "" {
		id["cpu"] = strings.TrimSpace(vendor + " " + model)
	}
	if len(flags) > 0 {
		id["cpu_features"] = strings.Join(flags, " ")
	}
	return id
}

// features are the CPU flags that change the instructions a program runs under valgrind: those
// glibc, numpy and torch choose code paths by. AVX-512 is listed when the host has it although
// valgrind hides it from the guest (it runs the AVX2 paths): a count made on such a host may
// still differ from one made without it where the guest asks the kernel rather than CPUID.
var features = []string{"sse4_2", "avx", "avx2", "fma", "bmi2", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "amx_tile", "sha_ni", "aes", "neon", "asimd", "sve"}

func cpuinfo() (vendor, model string, flags []string) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "", "", nil
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "vendor_id", "CPU implementer":
			if vendor == "" {
				vendor = v
			}
		case "model name":
			if model == "" {
				model = v
			}
		case "flags", "Features":
			for _, f := range strings.Fields(v) {
				have[f] = true
			}
		}
	}
	for _, f := range features {
		if have[f] {
			flags = append(flags, f)
		}
	}
	slices.Sort(flags)
	return vendor, model, flags
}
