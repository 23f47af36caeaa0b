package report

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/page"
	"github.com/inferbench/inferbench/result"
)

// The templates of the run and compare pages' bodies (page.WritePage puts a body in its page).
//
//go:embed templates/*.tmpl
var templates embed.FS

var bodyTmpl = template.Must(template.New("").Funcs(page.Funcs).Funcs(funcs).ParseFS(templates, "templates/run.tmpl", "templates/compare.tmpl"))

var funcs = template.FuncMap{
	"num": func(v any) string {
		switch x := v.(type) {
		case float64:
			return num(x)
		case *float64:
			if x == nil {
				return "-"
			}
			return num(*x)
		case page.Num:
			return num(float64(x))
		}
		return fmt.Sprint(v)
	},
	"deref": func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	},
	"pct": func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
}

// Link is a navigation link at the top of a page.
type Link struct {
	Label string
	Href  string
}

// HTMLOptions adjust an HTML report for the page that shows it.
type HTMLOptions struct {
	Nav []Link
	// AssetBase, when set, loads the chart library and the page script from AssetBase +
	// "echarts.min.js" and "report.js" instead of inlining them: the dashboard serves them once.
	// Reports leave it empty and open offline.
	AssetBase string
	// RunHref, when set, links each run id to a page (the dashboard); reports leave it empty.
	RunHref func(id string) string
	// Explain, in a run's report, is the section explaining the scenarios that regressed against
	// its baseline (run --baseline), drawn below the benchmarks with their flame graphs.
	Explain template.HTML
}

// navOf is the page's navigation of links.
func navOf(links []Link) []page.Link {
	nav := make([]page.Link, len(links))
	for i, l := range links {
		nav[i] = page.Link(l)
	}
	return nav
}

// kv is one row of a key/value table.
type kv struct{ Key, Value string }

// runView is what templates/run.tmpl shows.
type runView struct {
	Run        *result.Run
	Duration   string
	Env        []kv
	Benchmarks []benchView
	Advice     []advice // per benchmark: sweet spots
	Notes      []advice // per scenario: failures, warnings, findings
	// Certificates are the serving scenarios' certificates, shown first.
	Certificates []certView
}

type benchView struct {
	Name, Anchor, Kind, Source string
	Serving                    bool
	Rows                       []row
	Charts                     []page.Chart
	Advice                     []advice
	OK, Failed, Skipped        int
	Skew                       []skewView // scenarios merged from load agents
}

type row struct {
	Scenario, Status, Params, Note string
	N                              string
	P50, P95, P99, CV, Throughput  string
	TTFT50, TTFT95, ITL50, TPOT50  string
	TokS, ReqS, Memory             string
	Profiles                       []string // --profile's files, relative to the run folder (where report.html is)
	Logs                           []string // the scenario's output logs, relative to the run folder
}

// RunHTML writes the run's report: environment, summary, and per benchmark a table and the charts
// that fit its kind, with the advice. The page is one file with everything inlined.
func RunHTML(w io.Writer, r *result.Run, opts HTMLOptions) error {
	p, err := runPage(r, opts)
	if err != nil {
		return err
	}
	return page.WritePage(w, p)
}

// runPage builds the page of a run (RunHTML writes it; the dashboard adds its navigation).
func runPage(r *result.Run, opts HTMLOptions) (page.Page, error) {
	n := 0
	next := func() string { n++; return fmt.Sprintf("c%d", n) }
	v := runView{Run: r, Env: flatten(r.Environment), Certificates: certViews(r)}
	for _, a := range runAdvice(r) {
		if strings.Contains(a.Scope, "/") || a.Scope == "" {
			v.Notes = append(v.Notes, a)
		} else {
			v.Advice = append(v.Advice, a)
		}
	}
	for _, why := range unmeasuredOf(r) {
		v.Notes = append(v.Notes, advice{Level: "info", Scope: "unmeasured on this machine", Text: why})
	}
	if !r.FinishedAt.IsZero() {
		v.Duration = r.FinishedAt.Sub(r.StartedAt).Round(100 * time.Millisecond).String()
	}
	var charts []page.Chart
	for i, b := range byBenchmark(r) {
		kind := kindOf(b.scs)
		bv := benchView{Name: b.name, Anchor: fmt.Sprintf("b%d", i+1), Kind: kind, Serving: kind == kindServing}
		for _, s := range b.scs {
			if bv.Source == "" {
				bv.Source = s.Source
			}
			switch s.Status {
			case result.StatusOK:
				bv.OK++
			case result.StatusFailed:
				bv.Failed++
			case result.StatusSkipped:
				bv.Skipped++
			}
			bv.Rows = append(bv.Rows, newRow(s))
		}
		bv.Skew = skews(b.scs)
		bv.Charts = benchmarkCharts(b.scs, kind, next)
		charts = append(charts, bv.Charts...)
		for _, a := range v.Advice {
			if a.Scope == b.name {
				bv.Advice = append(bv.Advice, a)
			}
		}
		v.Benchmarks = append(v.Benchmarks, bv)
	}
	var body bytes.Buffer
	if err := bodyTmpl.ExecuteTemplate(&body, "run", v); err != nil {
		return page.Page{}, err
	}
	body.WriteString(string(opts.Explain))
	title := "inferbench run " + r.ID
	if r.Partial {
		title += " (partial)"
	}
	return page.Page{Title: title, Nav: navOf(opts.Nav), Body: template.HTML(body.String()), Charts: charts, AssetBase: opts.AssetBase}, nil
}

func newRow(s *result.Scenario) row {
	rw := row{Scenario: s.Scenario, Status: s.Status, Params: params(s.Params), N: "-"}
	dist := func(name string, pick func(float64, float64, float64) float64) string {
		if sum := s.Metrics[name].Summary; sum != nil {
			return num(pick(sum.Median, sum.P95, sum.P99))
		}
		return "-"
	}
	head := "latency_ms"
	if _, ok := s.Metrics["ttft_ms"]; ok {
		head = "e2e_ms"
	}
	if sum := s.Metrics[head].Summary; sum != nil {
		rw.N = fmt.Sprint(sum.N)
		rw.CV = fmt.Sprintf("%.1f%%", 100*sum.CV)
	}
	rw.P50 = dist(head, func(a, _, _ float64) float64 { return a })
	rw.P95 = dist(head, func(_, b, _ float64) float64 { return b }) + tooFew(s, head, "p95")
	rw.P99 = dist(head, func(_, _, c float64) float64 { return c }) + tooFew(s, head, "p99")
	rw.TTFT50 = dist("ttft_ms", func(a, _, _ float64) float64 { return a })
	rw.TTFT95 = dist("ttft_ms", func(_, b, _ float64) float64 { return b }) + tooFew(s, "ttft_ms", "p95")
	rw.ITL50 = dist("itl_ms", func(a, _, _ float64) float64 { return a })
	rw.TPOT50 = dist("tpot_ms", func(a, _, _ float64) float64 { return a })
	rw.Throughput = value(s, "throughput_ips")
	rw.TokS = value(s, "output_tokens_per_s")
	rw.ReqS = value(s, "requests_per_s")
	rw.Memory = value(s, "memory_mb")
	rw.Profiles = s.Profiles
	rw.Logs = s.Logs
	switch {
	case s.Error != "":
		rw.Note = s.Error
	case s.SkipReason != "":
		rw.Note = s.SkipReason
	case len(s.Warnings) > 0:
		rw.Note = strings.Join(s.Warnings, "; ")
	}
	return rw
}

func params(p map[string]any) string {
	keys := slices.Sorted(maps.Keys(p))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, p[k])
	}
	return strings.Join(parts, " ")
}

// flatten turns a nested environment map into dotted keys, sorted.
func flatten(m map[string]any) []kv {
	var out []kv
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, vv)
			}
		case []any:
			parts := make([]string, len(x))
			for i, e := range x {
				parts[i] = fmt.Sprint(e)
			}
			out = append(out, kv{prefix, strings.Join(parts, ", ")})
		default:
			out = append(out, kv{prefix, fmt.Sprint(v)})
		}
	}
	walk("", m)
	sort.Slice(out, func(a, b int) bool { return out[a].Key < out[b].Key })
	return out
}
