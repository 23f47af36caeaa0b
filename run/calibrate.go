package run

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/finite"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// Calibrate runs the same scenarios twice with nothing changed (A/A): runOnce makes run i (0 or
// 1) in a results folder of its own, outputDir, whose latest run Calibrate reads. It writes to w,
// per metric with samples, the noise, the drift between the two runs, the iterations needed to
// detect a change of effect percent and the threshold that keeps unchanged runs from failing
// (compare.Calibrate): a table, or JSON when asJSON. Each run is announced on log.
func Calibrate(ctx context.Context, effect float64, asJSON bool, w, log io.Writer, runOnce func(ctx context.Context, i int, outputDir string) error) ([]compare.Calibration, error) {
	tmp, err := os.MkdirTemp("", "inferbench-calibrate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var runs [2]*result.Run
	for i := range runs {
		out := filepath.Join(tmp, strconv.Itoa(i))
		fmt.Fprintf(log, "calibrate: run %d of 2\n", i+1)
		if err := runOnce(ctx, i, out); err != nil {
			return nil, err
		}
		if runs[i], err = result.Load(filepath.Join(out, result.LatestLink)); err != nil {
			return nil, err
		}
	}
	cals := compare.Calibrate(runs[0], runs[1], effect, 1)
	if asJSON {
		enc := finite.NewEncoder(w)
		enc.SetIndent("", "  ")
		return cals, enc.Encode(cals)
	}
	return cals, report.CalibrationText(w, cals, effect)
}

// Validate parses every definition sel finds strictly and writes how many benchmarks and
// scenarios they make to w; broken definitions are ErrUsage, listing every problem with
// file:line:col.
func Validate(sel Selection, env Env, w io.Writer) error {
	benches, err := Discover(sel, env)
	if err != nil {
		return err
	}
	if len(benches) == 0 {
		return usageErr("no benchmark found: %s", suite.SearchDescription(roots(sel, env)))
	}
	n := 0
	for _, b := range benches {
		n += len(b.Expand(nil))
	}
	writeFound(w, benches)
	_, err = fmt.Fprintf(w, "ok: %d benchmarks, %d scenarios\n", len(benches), n)
	return err
}

// writeFound writes what discovery found: a line per file with its benchmarks' names.
func writeFound(w io.Writer, benches []*suite.Benchmark) {
	var files []string
	names := map[string][]string{}
	for _, b := range benches {
		if _, ok := names[b.File]; !ok {
			files = append(files, b.File)
		}
		names[b.File] = append(names[b.File], b.Name)
	}
	for _, f := range files {
		fmt.Fprintf(w, "%s: %s\n", f, strings.Join(names[f], ", "))
	}
}
