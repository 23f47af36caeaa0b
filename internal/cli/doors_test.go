//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNumberDoors: every number the command line takes in (flags, the threshold and budget
// files) is finite and in range, or the command is a usage error naming the flag or file:line.
// Each case passed silently before: a NaN threshold or alpha let a 10× slower run exit 0.
func TestNumberDoors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	thNaN := write("th-nan.json", "{\n  \"latency_regression_threshold\": NaN\n}\n")
	thInf := write("th-inf.json", "{\n  \"metrics\": {\"ttft_ms\": .inf}\n}\n")
	budgetNaN := write("budget.yml", "budgets:\n  x:\n    max_latency_ms: .nan\n")
	alertsNaN := write("alerts.rules", "# rules\nlatency_ms.p95 > NaN\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// --threshold with a non-number percentage.
		{"threshold NaN", []string{"compare", "a", "b", "--threshold", "latency=NaN"}, `"NaN" is not a finite, non-negative percentage`},
		{"threshold Inf", []string{"compare", "a", "b", "--threshold", "latency=Inf"}, `"Inf" is not a finite, non-negative percentage`},
		// --alpha NaN: every range check with NaN is false.
		{"alpha NaN", []string{"compare", "a", "b", "--alpha", "NaN"}, "--alpha NaN: want a finite number"},
		{"run alpha NaN", []string{"run", "--exec", "true", "--alpha", "NaN"}, "--alpha NaN: want a finite number"},
		{"ab alpha NaN", []string{"ab", "exec:true", "exec:true", "--alpha", "NaN"}, "--alpha NaN: want a finite number"},
		// Negative durations.
		{"timeout", []string{"run", "--exec", "true", "--timeout", "-1s"}, "--timeout -1s: a duration cannot be negative"},
		{"min-time", []string{"run", "--exec", "true", "--min-time", "-5s"}, "--min-time -5s: a duration cannot be negative"},
		{"max-time", []string{"run", "--exec", "true", "--max-time", "-1m"}, "--max-time -1m0s: a duration cannot be negative"},
		// Span rate.
		{"otlp-span-rate", []string{"run", "--exec", "true", "--otlp-span-rate=NaN"}, "--otlp-span-rate NaN: want a finite number"},
		// A list of rates.
		{"rate list", []string{"run", "--openai", "http://127.0.0.1:1", "--rate", "5,Inf"}, "--rate +Inf: want a finite number"},
		// The thresholds file: NaN and Inf, with the file and line.
		{"thresholds file NaN", []string{"compare", "a", "b", "--thresholds-file", thNaN}, thNaN + ":2: latency_regression_threshold = NaN: want a finite percentage"},
		{"thresholds file Inf", []string{"compare", "a", "b", "--thresholds-file", thInf}, thInf + ":2: ttft_ms = +Inf: want a finite percentage"},
		// An alert rule of a file names its file and line (a NaN threshold never fires).
		{"alerts file NaN", []string{"run", "--exec", "true", "--alerts-file", alertsNaN, "--no-store"}, alertsNaN + ":2: "},
		// The budget file.
		{"budget file NaN", []string{"compare", "a", "b", "--budget-file", budgetNaN}, budgetNaN + ":3: budgets: x: max_latency_ms = NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, dir, nil, tc.args...)
			if code != ExitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
			}
		})
	}
}

// TestFileDoors: a file inferbench reads whole is a regular file under a documented limit. A
// device (/dev/zero) was read until memory ran out, and a named pipe under benches/ blocked
// validate forever; both are refused at once, naming the path.
func TestFileDoors(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "benches"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "benches", "x.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	const notRegular = "/dev/zero is a character device, not a regular file"
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"compare", []string{"compare", "/dev/zero", "/dev/zero"}, ExitError, notRegular},
		{"import", []string{"import", "/dev/zero", "--format", "gobench"}, ExitError, notRegular},
		{"alerts-file", []string{"run", "--exec", "true", "--alerts-file", "/dev/zero", "--no-store"}, ExitUsage, notRegular},
		{"budget-file", []string{"compare", "a", "b", "--budget-file", "/dev/zero"}, ExitUsage, "--budget-file: " + notRegular},
		{"thresholds-file", []string{"compare", "a", "b", "--thresholds-file", "/dev/zero"}, ExitUsage, "--thresholds-file: " + notRegular},
		// A named pipe among the definitions.
		{"fifo definition", []string{"validate"}, ExitUsage, "benches/x.yaml: is a named pipe, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, dir, nil, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, tc.code, tc.want)
			}
		})
	}
}

// TestFIFORunFolder: a named pipe called run.json in the output folder (where the record stage
// looks for killed runs) does not block the next run: it is no run, and is left alone.
func TestFIFORunFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "out", "20260101_000000-aaaaaaaa"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "out", "20260101_000000-aaaaaaaa", "run.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		code, _, _ := runCLI(t, dir, nil, "run", "--exec", "true", "--iterations", "1", "--warmup", "0", "--no-monitor", "--output-dir", "out", "--store", "h.db")
		done <- code
	}()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d", code)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the run blocked on the named pipe")
	}
}
