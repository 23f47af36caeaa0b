// Command capacity-coverage measures how often `inferbench capacity`'s search brackets the truth:
// for each of three mockserver capacity models, whose capacity under its SLOs is known
// (mockserver.Capacity.Truth), it runs N searches and tabulates the coverage of the one-sided
// lower bound, the estimate's error, the steps and the time a search took.
//
// By default each search runs on the model in simulated time (mockserver.Capacity.Prober): the
// same search, the same model, no HTTP. With --live the searches run through the load driver
// against a live mockserver over HTTP (`inferbench capacity` as a user runs it), each search its
// own server, --parallel of them at once.
//
// A scale s multiplies every time of the model and every SLO limit alike: the same server s
// times as fast, judged by SLOs s times as tight, has the same attainment at 1/s the rate, so
// its searches take s times as long with the same requests and the same coverage. Live runs
// take each configuration's own scale (Config.Scale: a search within 5 minutes) unless --scale
// gives one; simulated runs scale 1.
//
//	go run ./cmd/capacity-coverage -n 100                        # make capacity-coverage
//	go run ./cmd/capacity-coverage -n 5 --live --parallel 2
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/inferbench/inferbench/internal/capacity"
	"github.com/inferbench/inferbench/internal/mockserver"
)

// Config is one model with its SLOs.
type Config struct {
	Name       string
	Model      mockserver.Capacity
	Tokens     int
	SLOs       map[string]float64
	Attainment float64
	// Scale is the time scale a live run takes: the model and the SLOs that much faster, so
	// that a search's requests (as many as at scale 1) take under 5 minutes at most.
	Scale float64
}

// Configs are the three models of docs/serving.md's coverage table.
var Configs = []Config{
	{Name: "slots8-p90", Model: mockserver.Capacity{Slots: 8, PrefillMs: 4, TokenMs: 1, BatchSlowdown: 0.05}, Tokens: 32,
		SLOs: map[string]float64{"ttft_ms.p90": 20, "e2e_ms.p90": 80}, Scale: 0.45},
	{Name: "slots32-goodput", Model: mockserver.Capacity{Slots: 32, PrefillMs: 6, TokenMs: 2, BatchSlowdown: 0.02}, Tokens: 64,
		SLOs: map[string]float64{"ttft_ms": 500, "itl_ms": 30}, Attainment: 0.9, Scale: 0.35},
	{Name: "slots16-p99", Model: mockserver.Capacity{Slots: 16, PrefillMs: 2, TokenMs: 0.5, BatchSlowdown: 0.1}, Tokens: 16,
		SLOs: map[string]float64{"ttft_ms.p99": 30}, Scale: 0.2},
}

// Row is one configuration's figures over its searches.
type Row struct {
	Config                  string
	Scale                   float64
	Truth                   float64
	N, Covered, Within5     int
	MeanErr, MaxErr         float64 // |estimate - truth| / truth
	MeanSteps, MaxSteps     float64
	MeanVirtual, MaxVirtual float64 // seconds of requests sent (simulated or live)
	MeanWall, MaxWall       float64 // seconds
	MeanLowerGap            float64 // (truth - lower) / truth
	NoBound                 int     // searches whose lower bound is 0 (no step passed)
	Requests                int64   // requests sent, live
	ClientBound             int     // live searches the load driver warned were client_bound
	Stopped                 int     // of them, those the client limited (capacity.Result.ClientLimited, answered "at least" or not; not in the figures)
	TimedOut                int     // searches that ran past --search-timeout (not in the figures)
	CPU                     float64 // seconds of this process's CPU over the configuration's searches
}

func main() {
	n := flag.Int("n", 100, "searches per configuration")
	only := flag.String("config", "", "run only this configuration")
	live := flag.Bool("live", false, "search a live mockserver over HTTP through the load driver (as inferbench capacity does) instead of the simulated model")
	scale := flag.Float64("scale", 0, "the time scale of the model and its SLOs (0.5: twice as fast, twice the rate, half the time; default: each configuration's own with --live, 1 without)")
	parallel := flag.Int("parallel", 1, "searches run at once, each against its own server")
	seed := flag.Uint64("seed", 1, "the first search's seed: search i draws its arrivals from seed+i")
	timeout := flag.Duration("search-timeout", 15*time.Minute, "with --live: a search that runs longer is stopped and counted apart")
	cpuprofile := flag.String("cpuprofile", "", "write this process's CPU profile (client, servers and searches together) to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "capacity-coverage: --cpuprofile:", err)
			os.Exit(2)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	searchTimeout, firstSeed = *timeout, *seed
	if err := run(ctx, os.Stdout, *n, *only, *live, *scale, max(*parallel, 1)); err != nil {
		fmt.Fprintln(os.Stderr, "capacity-coverage:", err)
		stop()
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, n int, only string, live bool, scale float64, parallel int) error {
	load0, _ := os.ReadFile("/proc/loadavg")
	began := time.Now()
	var rows []Row
	for _, c := range Configs {
		if only != "" && c.Name != only {
			continue
		}
		s := scale
		if s <= 0 && live {
			s = c.Scale
		}
		row, err := coverage(ctx, c.scaled(s), n, live, parallel)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		rows = append(rows, row)
		if ctx.Err() != nil {
			break
		}
	}
	load1, _ := os.ReadFile("/proc/loadavg")
	mode := "simulated model (mockserver.Capacity.Prober)"
	if live {
		mode = fmt.Sprintf("live mockservers over HTTP, %d searches at once", parallel)
	}
	fmt.Fprintf(w, "capacity coverage: %s, %s\n", mode, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(w, "loadavg at start: %s", load0)
	fmt.Fprintf(w, "loadavg at end:   %s", load1)
	fmt.Fprintf(w, "total wall time: %s\n\n", time.Since(began).Round(time.Second))
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| config\t scale\t true rps\t searches\t lower ≤ true\t lower 0\t (true-lower)/true mean\t |err| mean\t |err| max\t within 5%\t steps mean\t steps max\t sent s mean\t sent s max\t wall s mean\t wall s max\t requests/search\t CPU ms/request\t client_bound\t stopped client_bound\t timed out\t")
	for _, r := range rows {
		perReq, cpuPer := "-", "-"
		if r.Requests > 0 {
			perReq = fmt.Sprintf("%.0f", float64(r.Requests)/float64(max(r.N, 1)))
			cpuPer = fmt.Sprintf("%.2f", 1e3*r.CPU/float64(r.Requests))
		}
		fmt.Fprintf(tw, "| %s\t %g\t %.1f\t %d\t %d (%.0f%%)\t %d\t %.1f%%\t %.1f%%\t %.1f%%\t %d\t %.1f\t %.0f\t %.1f\t %.1f\t %.2f\t %.2f\t %s\t %s\t %d\t %d\t %d\t\n",
			r.Config, r.Scale, r.Truth, r.N, r.Covered, 100*float64(r.Covered)/float64(max(r.N, 1)), r.NoBound, 100*r.MeanLowerGap, 100*r.MeanErr, 100*r.MaxErr, r.Within5,
			r.MeanSteps, r.MaxSteps, r.MeanVirtual, r.MaxVirtual, r.MeanWall, r.MaxWall, perReq, cpuPer, r.ClientBound, r.Stopped, r.TimedOut)
	}
	tw.Flush()
	return nil
}

// scaled is c with the model's times and the SLOs' limits multiplied by s (1 or 0: c itself).
func (c Config) scaled(s float64) Config {
	if s <= 0 || s == 1 {
		c.Scale = 1
		return c
	}
	c.Scale = s
	c.Model.Scale = s
	slos := make(map[string]float64, len(c.SLOs))
	for k, v := range c.SLOs {
		slos[k] = v * s
	}
	c.SLOs = slos
	return c
}

// coverage runs n searches of one configuration, parallel at once.
func coverage(ctx context.Context, c Config, n int, live bool, parallel int) (Row, error) {
	obj, err := capacity.Objectives(c.SLOs, c.Attainment)
	if err != nil {
		return Row{}, err
	}
	model := c.Model
	truth := model.Truth(c.Tokens, obj)
	row := Row{Config: c.Name, Scale: c.Scale, Truth: truth}
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	next := make(chan int)
	cpu0 := cpuSeconds()
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				began := time.Now()
				var res capacity.Result
				var virtual float64
				var err error
				var sent int64
				var bound bool
				opt := Options(obj, model, c.Tokens)
				if live {
					sctx, cancel := context.WithTimeout(ctx, searchTimeout)
					res, virtual, sent, bound, err = searchLive(sctx, model, c, opt, firstSeed+uint64(i))
					timedOut := sctx.Err() != nil && ctx.Err() == nil
					cancel()
					if timedOut {
						mu.Lock()
						row.TimedOut++
						mu.Unlock()
						if os.Getenv("CAPACITY_COVERAGE_VERBOSE") != "" {
							fmt.Fprintf(os.Stderr, "%s #%d: ran past %v, stopped: %s\n", c.Name, i, searchTimeout, stepsLine(res))
						}
						continue
					}
				} else {
					res, err = capacity.Search(ctx, model.Prober(c.Tokens, firstSeed+uint64(i), &virtual), opt)
				}
				wall := time.Since(began).Seconds()
				mu.Lock()
				row.Requests += sent
				if bound {
					row.ClientBound++
				}
				if cb := (*capacity.ClientBoundError)(nil); (errors.As(err, &cb) || err == nil && res.ClientLimited()) && ctx.Err() == nil {
					row.Stopped++
					if os.Getenv("CAPACITY_COVERAGE_VERBOSE") != "" {
						fmt.Fprintf(os.Stderr, "%s #%d: stopped: %v:%s\n", c.Name, i, err, stepsLine(res))
					}
					mu.Unlock()
					continue
				}
				if err != nil || ctx.Err() != nil {
					if first == nil {
						first = err
					}
					mu.Unlock()
					continue
				}
				row.add(res, truth, virtual, wall)
				if os.Getenv("CAPACITY_COVERAGE_VERBOSE") != "" {
					fmt.Fprintf(os.Stderr, "%s #%d: truth %.2f capacity %.2f lower %.2f steps %d wall %.0f s %s\n", c.Name, i, truth, res.CapacityRPS, res.LowerRPS, len(res.Steps), wall, stepsLine(res))
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop {
			break
		}
	}
	close(next)
	wg.Wait()
	row.CPU = cpuSeconds() - cpu0
	if row.N > 0 {
		k := float64(row.N)
		row.MeanErr /= k
		row.MeanSteps /= k
		row.MeanVirtual /= k
		row.MeanWall /= k
		row.MeanLowerGap /= k
	}
	return row, first
}

// add counts one search's result.
func (row *Row) add(res capacity.Result, truth, virtual, wall float64) {
	row.N++
	if res.LowerRPS <= truth {
		row.Covered++
	}
	e := math.Abs(res.CapacityRPS-truth) / truth
	if e <= 0.05 {
		row.Within5++
	}
	row.MeanErr += e
	row.MaxErr = max(row.MaxErr, e)
	row.MeanSteps += float64(len(res.Steps))
	row.MaxSteps = max(row.MaxSteps, float64(len(res.Steps)))
	row.MeanVirtual += virtual
	row.MaxVirtual = max(row.MaxVirtual, virtual)
	row.MeanWall += wall
	row.MaxWall = max(row.MaxWall, wall)
	row.MeanLowerGap += (truth - res.LowerRPS) / truth
	if res.LowerRPS == 0 {
		row.NoBound++
	}
}

func stepsLine(r capacity.Result) string {
	var b strings.Builder
	for _, s := range r.Steps {
		fmt.Fprintf(&b, " %.1f:%s/%d", s.Rate, s.Verdict, s.Requests)
	}
	return b.String()
}

// Options are the search's settings for a model: it starts at half the model's saturation rate,
// as `inferbench capacity` starts at half the throughput its first step measured.
func Options(obj []capacity.Objective, m mockserver.Capacity, tokens int) capacity.Options {
	return capacity.Options{Objectives: obj, Start: m.Saturation(tokens) / 2}
}

// searchTimeout bounds a live search (--search-timeout).
var searchTimeout = 15 * time.Minute

// firstSeed is the first search's seed (--seed).
var firstSeed uint64 = 1
