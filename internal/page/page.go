// Package page is the HTML page model that the run, compare and history reports (package report)
// and the dashboard (internal/cli/web) share: one self-contained page with its charts as data, the
// embedded chart library and page script, and the trends page of a metric's history.
package page

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"time"
)

// The page assets. echarts.min.js is Apache ECharts, copied out of web/node_modules by
// `make assets` at the version web/package-lock.json pins (docs/reports.md says why it is
// committed); a test checks the copy against node_modules when they are installed.
//
//go:embed assets/echarts.min.js assets/report.js assets/report.css templates/*.tmpl
var assets embed.FS

// ECharts returns the embedded chart library, for a server that serves it once instead of
// inlining it in every page.
func ECharts() []byte { return mustAsset("assets/echarts.min.js") }

// Script returns the pages' own script (report.js), for a server that serves it once.
func Script() []byte { return mustAsset("assets/report.js") }

func mustAsset(name string) []byte {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot fail
	}
	return b
}

var (
	pageTmpl = template.Must(template.New("page.tmpl").ParseFS(assets, "templates/page.tmpl"))
	bodyTmpl = template.Must(template.New("").Funcs(Funcs).ParseFS(assets, "templates/history.tmpl"))
)

// Funcs are the template functions of the pages' bodies that the reports share.
var Funcs = template.FuncMap{
	"signed": func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "?" // never NaN or an infinity on a page
		}
		return fmt.Sprintf("%+.1f%%", 100*v)
	},
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
}

// Link is a navigation link at the top of a page.
type Link struct {
	Label string
	Href  string
}

// Page is one self-contained HTML page: a title, a body rendered by html/template (so already
// escaped), and the charts the page's script draws into the body's chart placeholders
// (elements with data-chart="ID").
type Page struct {
	Title string
	Nav   []Link
	Body  template.HTML
	// Charts are drawn into the body's placeholders, lazily, as they scroll into view.
	Charts []Chart
	// AssetBase, when set, loads the chart library and the page script from AssetBase +
	// "echarts.min.js" and "report.js" instead of inlining them: the dashboard serves them once.
	// Reports leave it empty and open offline.
	AssetBase string
	// Script is extra page script (the dashboard's live view).
	Script template.JS
}

// WritePage writes p as a complete HTML document.
func WritePage(w io.Writer, p Page) error {
	data := struct {
		Page
		ECharts template.JS
		App     template.JS
		CSS     template.CSS
		Charts  []Chart
	}{Page: p, App: template.JS(mustAsset("assets/report.js")), CSS: template.CSS(mustAsset("assets/report.css")), Charts: p.Charts}
	if data.Charts == nil {
		data.Charts = []Chart{}
	}
	if p.AssetBase == "" {
		data.ECharts = template.JS(mustAsset("assets/echarts.min.js"))
	}
	return pageTmpl.Execute(w, data)
}

// UnitName is an axis's name: the metric, with its unit in parentheses when it has one.
func UnitName(metric, unit string) string {
	if unit == "" {
		return metric
	}
	return metric + " (" + unit + ")"
}
