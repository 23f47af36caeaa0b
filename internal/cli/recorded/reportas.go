package recorded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/serveimport"
	"github.com/inferbench/inferbench/result"
)

// requestLogs returns the function that reads a scenario's request log in the run folder dir
// (requests/, as run writes it); nil when dir is "" (a run only in the store).
func requestLogs(dir string) serveimport.LogFunc {
	if dir == "" {
		return nil
	}
	return func(sc *result.Scenario) (*serveimport.Calc, error) {
		p := filepath.Join(dir, "requests", engine.RequestLogName(sc.ID()))
		c, err := serveimport.ReadRequestLog(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return c, err
	}
}

// ReportAs writes the run ref names as other tools would have reported it (`report
// --report-as`): each serving scenario's figures by the tools' definitions, computed from its
// requests' timestamps, as "text" (the default) or "json".
func (rs *Source) ReportAs(ctx context.Context, ref string, tools []string, format string, w io.Writer) error {
	if format != "text" && format != "json" {
		return exit.UsageError(fmt.Errorf("--report-as with --format %q: want text or json", format))
	}
	r, dir, err := rs.LoadFolder(ctx, ref)
	if err != nil {
		return err
	}
	log := requestLogs(dir)
	if format == "text" {
		return serveimport.WriteAs(w, r, tools, log)
	}
	out := map[string]map[string][]serveimport.Figure{}
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		if _, ok := sc.Metrics["ttft_ms"]; !ok {
			continue
		}
		figs, _, err := serveimport.ScenarioAs(sc, log)
		if err != nil {
			return err
		}
		out[sc.ID()] = map[string][]serveimport.Figure{}
		for _, t := range tools {
			out[sc.ID()][t] = figs[t]
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// ReportAsFlag checks --report-as (a usage error naming the flag when a tool is unknown).
func ReportAsFlag(flag []string) ([]string, error) {
	tools, err := serveimport.ParseTools(flag)
	if err != nil {
		return nil, exit.UsageError(err)
	}
	return tools, nil
}

// writeAsCompare appends the runs' figures by tools' definitions to a text or markdown comparison.
func writeAsCompare(w io.Writer, old *result.Run, oldDir string, nw *result.Run, newDir string, tools []string) error {
	return serveimport.WriteAsCompare(w, old, nw, tools, requestLogs(oldDir), requestLogs(newDir))
}
