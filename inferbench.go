// Package inferbench is the library face of inferbench: register Go functions as benchmarks and
// turn a program into a benchmark binary with Main.
//
//	func main() {
//		inferbench.Register("tokenize", func(ctx context.Context) error { _ = tok.Encode(text); return nil })
//		inferbench.Main()
//	}
//
// The binary then takes every inferbench subcommand; `run` runs the registered functions (each is
// a benchmark of its name) and any definitions under benches/. Both go through run.Run, which a
// program can also call itself to run benchmarks with monitors, history and a verdict
// (package run, docs/library.md).
package inferbench

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/inferbench/inferbench/internal/base/procgroup"
	"github.com/inferbench/inferbench/internal/cli"
	"github.com/inferbench/inferbench/internal/kind/gofunc"
	"github.com/inferbench/inferbench/subject"
)

// Params are a scenario's parameters.
type Params = subject.Params

// Register adds a Go function run once per iteration as the benchmark name.
func Register(name string, fn func(ctx context.Context) error) { gofunc.Register(name, fn) }

// RegisterSetup adds a benchmark whose setup runs once per scenario (load a model, build inputs)
// and returns the function run per iteration and an optional cleanup.
func RegisterSetup(name string, setup func(ctx context.Context, p Params) (fn func(ctx context.Context) error, cleanup func(), err error)) {
	gofunc.RegisterSetup(name, func(ctx context.Context, p subject.Params) (gofunc.Func, func(), error) {
		fn, cleanup, err := setup(ctx, p)
		return fn, cleanup, err
	})
}

// Main runs the inferbench command line with the registered functions as benchmarks, and exits.
func Main() { os.Exit(Run(os.Args[1:], Options{Registered: true})) }

// Options says what Run adds to the command line.
type Options struct {
	// Registered makes the functions of Register and RegisterSetup benchmarks of every run, beside
	// the definitions found (Main sets it; the inferbench command itself registers none).
	Registered bool
}

// Run runs the command line and returns the exit code. The first SIGINT or SIGTERM asks the run to
// stop and keep its results; a second exits at once (code 130), killing the process groups of
// the commands, workers and servers it started first, so that none is left running. Groups still
// recorded when the command line returns are killed too.
func Run(args []string, o Options) int {
	defer procgroup.KillAll()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A copy of this binary run under valgrind to count a registered function (--measure
	// instructions) runs only that function.
	if served, err := gofunc.ServeCounted(ctx, os.Getenv); served {
		if err != nil {
			fmt.Fprintln(os.Stderr, "inferbench: counting a Go function:", err)
			return 1
		}
		return 0
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		<-sig
		fmt.Fprintln(os.Stderr, "\ninferbench: stopping after the current iteration (Ctrl-C again to exit now)")
		cancel()
		<-sig
		fmt.Fprintln(os.Stderr, "inferbench: exiting now")
		procgroup.KillAll()
		os.Exit(130)
	}()
	return cli.Main(ctx, args, cli.IO{Stdout: os.Stdout, Stderr: os.Stderr, Env: os.Environ(), Funcs: o.Registered})
}
