// Package cli is the inferbench command line. Each subcommand, in its own file, turns flags into
// library calls. Commands take their streams, arguments and environment from IO, so tests run them
// in-process; only cmd/inferbench's main exits.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/internal/base/inert"
	"github.com/inferbench/inferbench/internal/base/nearest"
	"github.com/inferbench/inferbench/run"
)

// Exit codes (run.ExitCode gives an error its code).
const (
	ExitOK         = exit.OK
	ExitError      = exit.Failure
	ExitUsage      = exit.Usage
	ExitRegression = exit.Regression
)

// Version is set at build time with -ldflags "-X github.com/inferbench/inferbench/internal/cli.Version=...".
var Version = "dev"

// IO is what a command may touch of its process.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Env            []string // KEY=VALUE, as os.Environ
	Dir            string   // working directory ("" for the process's)
	Args           []string // the command line (set by Main), recorded with each run
	// Funcs makes every registered Go function a benchmark (set by inferbench.Main).
	Funcs bool
}

// LookupEnv reads a variable from the command's environment.
func (o *IO) LookupEnv(key string) (string, bool) { return env(o).Lookup(key) }

// CodeError carries an exit code chosen by a command.
type CodeError struct {
	Code int
	Err  error
}

func (e *CodeError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *CodeError) Unwrap() error { return e.Err }

// ExitCode is the code chosen (run.ExitCode reads it).
func (e *CodeError) ExitCode() int { return e.Code }

func usageErr(format string, args ...any) error { return exit.UsageError(fmt.Errorf(format, args...)) }

// writeJSON writes v to w as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := finite.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Main runs the command line and returns the exit code.
func Main(ctx context.Context, args []string, o IO) int {
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	o.Args = args
	// A benchmark's name or parameter, an imported file's, a server's error: none reaches the
	// terminal with its control characters (an escape sequence that clears the screen, a
	// carriage return that overwrites a FAIL with ok). stderr is left to the progress bar.
	o.Stdout = inert.Writer(o.Stdout)
	root := newRoot(&o)
	started := false // set when a command's RunE is reached: errors before it are cobra's usage errors
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		started = true
		if err := checkNumbers(c); err != nil { // a value that is no number is the nearer fault
			return err
		}
		return checkNeeds(c)
	}
	root.SetArgs(joinListFlags(args))
	root.SetIn(o.Stdin)
	root.SetOut(o.Stdout)
	root.SetErr(o.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *CodeError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(o.Stderr, "inferbench:", inert.Text(ee.Err.Error()))
		}
		return ee.Code
	}
	fmt.Fprintln(o.Stderr, "inferbench:", inert.Text(err.Error()))
	if !started { // an unknown command, a wrong number of arguments
		return ExitUsage
	}
	return run.ExitCode(err)
}

func newRoot(o *IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "inferbench",
		Short: "Benchmark ML inference: models, LLM servers, commands and Go functions",
		Long: `inferbench discovers benchmark definitions (YAML under benches/), runs them with warm-up and
measured iterations, and writes results (run.json, summary.csv) into a timestamped folder.`,
		Example: `  inferbench run                        # every definition under ./benches
  inferbench run --enable-mock --include 'llm*'
  inferbench run --exec 'python3 model.py' --iterations 20 --warmup 3
  inferbench list --category performance
  inferbench sysinfo --json`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if r := removedFlag(c, err); r != nil {
			return r
		}
		return usageErr("%s: %v%s (see '%s --help')", c.CommandPath(), err, flagHint(c, err), c.CommandPath())
	})
	root.SetUsageFunc(usage)
	root.AddCommand(newRun(o), newList(o), newValidate(o), newSysinfo(o), newVersion(o),
		newAB(o), newBaseline(o), newCalibrate(o), newCompare(o), newDoctor(o), newExplain(o), newHistory(o), newImport(o), newExport(o),
		newMerge(o), newMockserver(o), newReport(o), newServe(o), newCapacity(o))
	return root
}

// removedFlags are the flags that went, by command, with what replaces them.
var removedFlags = map[string]map[string]string{
	"inferbench run": {
		"slo-search": "the highest rate whose SLOs hold is what 'inferbench capacity --openai URL --model M --slo ...' finds, with a 95% lower bound (docs/capacity.md)",
	},
}

// removedFlag is the error of a flag in removedFlags, naming its replacement, or nil.
func removedFlag(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return nil
	}
	name, _, _ = strings.Cut(name, "=")
	if why, ok := removedFlags[c.CommandPath()][name]; ok {
		return usageErr("%s: --%s was removed: %s", c.CommandPath(), name, why)
	}
	return nil
}

// flagHint returns " (did you mean --iterations?)" for an unknown flag near one the command has
// (--iteratons), else "".
func flagHint(c *cobra.Command, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, "=")
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if s := nearest.Name(name, names); s != "" {
		return " (did you mean --" + s + "?)"
	}
	return ""
}
