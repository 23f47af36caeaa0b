package callgrind

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A callgrind file as valgrind 3.19 writes it, costs cut short: the totals are what is read.
const sample = `# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 17565
cmd:  /bin/echo hi
part: 1

positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 303596 70124 31707 1820 1444 802 1671 1025 748

ob=(3) /usr/lib/x86_64-linux-gnu/libc.so.6
fl=(126) ./ctype/./ctype/ctype-info.c
fn=(444) __ctype_init
31 7 5 1 2 4 0 2

totals: 303594 70124 31707 1819 1444 802 1670 1025 748
`

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadFile(t *testing.T) {
	c, err := ReadFile(write(t, "callgrind.out", sample))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Instructions(); got != 303596 { // summary:, not totals:
		t.Errorf("instructions %d, want 303596", got)
	}
	// Ir + 10 × (I1mr + D1mr + D1mw) + 100 × (ILmr + DLmr + DLmw)
	want := uint64(303596 + 10*(1820+1444+802) + 100*(1671+1025+748))
	if got := c.EstCycles(); got != want {
		t.Errorf("est_cycles %d, want %d", got, want)
	}
	// A dump of a window that missed no cache line leaves the trailing zeros out.
	short, err := ReadFile(write(t, "short", "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nsummary: 4037753 200164 34079 0 2066 15\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := short.EstCycles(), uint64(4037753+10*(2066+15)); got != want {
		t.Errorf("est_cycles of a short totals line %d, want %d", got, want)
	}
	sum, err := ReadFiles([]string{write(t, "a", sample), write(t, "b", sample)})
	if err != nil || sum.Instructions() != 2*303596 {
		t.Errorf("two files summed: %d, %v; want %d", sum.Instructions(), err, 2*303596)
	}
	for name, text := range map[string]string{
		"empty":     "",                                                  // the process died before callgrind wrote it
		"no events": "totals: 1 2 3\n",                                   // not callgrind's
		"no Ir":     "events: Dr\ntotals: 5\n",                           // collected without instructions
		"garbage":   "events: Ir\ntotals: many\n",                        // not a number
		"absurd":    "events: Ir I1mr\ntotals: 18446744073709551615 9\n", // est_cycles would overflow
	} {
		if _, err := ReadFile(write(t, "bad", text)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestEnviron(t *testing.T) {
	got := Environ([]string{"HOME=/h", "GODEBUG=madvdontneed=1", "PYTHONHASHSEED=7"})
	want := []string{"HOME=/h", "PYTHONHASHSEED=7", "GODEBUG=madvdontneed=1,asyncpreemptoff=1,memprofilerate=0"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ kept and added %q, want %q", got, want)
	}
	got = Environ([]string{"HOME=/h"})
	want = []string{"HOME=/h", "GODEBUG=asyncpreemptoff=1,memprofilerate=0", "PYTHONHASHSEED=0"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ added %q, want %q", got, want)
	}
}

// Without valgrind the error names the package to install and the flag that asked for it.
func TestFindMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Find()
	var ue *UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("Find without valgrind on PATH: %v, want an UnavailableError", err)
	}
	for _, want := range []string{"apt-get install valgrind", "--measure instructions", "not on PATH"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestArgs(t *testing.T) {
	v := Valgrind{Path: "/usr/bin/valgrind", Version: "3.19.0"}
	got := strings.Join(v.Args(Options{Out: "/t/callgrind.out"}, "/bin/prog", "-x"), " ")
	for _, want := range []string{"--tool=callgrind", "--cache-sim=yes", "--LL=8388608,16,64", "--collect-atstart=no", "--callgrind-out-file=/t/callgrind.out", "-- /bin/prog -x"} {
		if !strings.Contains(got, want) {
			t.Errorf("argv %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "--trace-children") || strings.Contains(got, "--dump-before") {
		t.Errorf("argv %q traces children unasked", got)
	}
	// A traced command's processes dump their counts before they fork, so that a child that
	// does not exec starts from zero.
	if kids := strings.Join(v.Args(Options{Out: "/t/c", Children: true}, "/bin/sh"), " "); !strings.Contains(kids, "--trace-children=yes --dump-before=_Fork --dump-before=fork") {
		t.Errorf("argv %q with Children does not dump before fork", kids)
	}
	if strings.Contains(got, "--instr-atstart") {
		t.Errorf("argv %q starts uninstrumented unasked", got)
	}
	if late := strings.Join(v.Args(Options{Out: "/t/c", Late: true}, "/bin/prog"), " "); !strings.Contains(late, "--instr-atstart=no") {
		t.Errorf("argv %q with Late starts instrumented", late)
	}
	if id := v.Identity(); id["valgrind"] != "3.19.0" || id["cache"] == "" {
		t.Errorf("identity %v lacks valgrind's version or the cache", id)
	}
}

// A valgrind on PATH that never answers --version (here a script whose child holds its output
// open) fails Find within ProbeTimeout with an error naming it, instead of hanging the run.
func TestFindHangingValgrind(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "valgrind"), []byte("#!/bin/sh\nsleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	old := ProbeTimeout
	ProbeTimeout = 200 * time.Millisecond
	t.Cleanup(func() { ProbeTimeout = old })
	done := make(chan error, 1)
	go func() { _, err := Find(); done <- err }()
	select {
	case err := <-done:
		var ue *UnavailableError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), filepath.Join(bin, "valgrind")+" --version did not answer within 200ms") {
			t.Errorf("Find with a hanging valgrind: %v, want an UnavailableError saying its --version did not answer", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Find hangs on a valgrind that does not answer --version")
	}
}

// A kept callgrind file's command line ("cmd:", which callgrind writes in every file) goes
// through the run's redactor: a secret in a command's arguments is not in clear in the run
// folder; the rest of the file is copied as it was.
func TestKeepRedacts(t *testing.T) {
	const secret = "tok_0123456789abcdef"
	text := strings.Replace(sample, "cmd:  /bin/echo hi", "cmd:  /bin/curl --token="+secret+" http://x", 1)
	src := write(t, "callgrind.out.17565", text)
	dir := filepath.Join(t.TempDir(), "profiles", "s")
	kept, err := Keep(dir, []string{src}, func(s string) string { return strings.ReplaceAll(s, secret, "***") })
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(kept[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(text, secret, "***", 1); string(b) != want {
		t.Errorf("kept file:\n%s\nwant:\n%s", b, want)
	}
	if _, err := os.Stat(src); !os.IsNotExist(err) {
		t.Errorf("the temporary file is still there: %v", err)
	}
	// A command line longer than the copy's buffer is redacted whole.
	long := "cmd: /bin/x " + strings.Repeat("a", 100<<10) + " " + secret + "\nevents: Ir\ntotals: 1\n"
	var out strings.Builder
	if err := RedactCommand(&out, strings.NewReader(long), func(s string) string { return strings.ReplaceAll(s, secret, "***") }); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), secret) || out.Len() != len(long)-len(secret)+3 {
		t.Errorf("a long command line: %d bytes, secret kept %v", out.Len(), strings.Contains(out.String(), secret))
	}
}
