package web

import (
	"bytes"
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/internal/explain"
	"github.com/inferbench/inferbench/internal/history"
	"github.com/inferbench/inferbench/internal/page"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/store"
)

//go:embed templates/*.tmpl
var templates embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04")
	},
	"certificates": certificatesBadge,
	"short": func(s string) string {
		if len(s) > 10 {
			return s[:10]
		}
		return s
	},
	"q": url.QueryEscape,
}).ParseFS(templates, "templates/*.tmpl"))

// TokenEnv names the environment variable that holds the bearer token of `inferbench serve` and
// `run --metrics-addr`.
const TokenEnv = "INFERBENCH_TOKEN"

// tokenCookie lets a browser that opened /?token=T once keep the token.
const tokenCookie = "inferbench_token"

// Server is the dashboard, the API and /metrics over a history store. Build one with New.
type Server struct {
	store   store.Store // nil: only the live view and /metrics (run --metrics-addr)
	hub     *Hub
	metrics *Metrics
	token   string
	compare func(base, head *result.Run) *compare.Report
	handler http.Handler
	// runsDir holds the run folders (RUN_ID/) whose profiles explain a regression on the
	// compare page: Serve's results directory unless WithRunsDir sets it.
	runsDir string
}

// WithRunsDir sets the folder of run folders whose profiles the compare page reads to explain a
// regression (explain.Runs); Serve uses its results directory otherwise.
func WithRunsDir(dir string) Option { return func(s *Server) { s.runsDir = dir } }

// Option configures a Server.
type Option func(*Server)

// WithToken requires "Authorization: Bearer TOKEN" (or the cookie set by ?token=TOKEN) on every
// request.
func WithToken(token string) Option { return func(s *Server) { s.token = token } }

// WithCompare sets how two runs are compared (compare.Runs with the default configuration
// otherwise): `serve --threshold` and budget files go through here.
func WithCompare(f func(base, head *result.Run) *compare.Report) Option {
	return func(s *Server) { s.compare = f }
}

// New returns a server over st (nil for a live-only server).
func New(st store.Store, opts ...Option) *Server {
	s := &Server{}
	if st != nil {
		s.store = cleanStore{st}
	}
	for _, o := range opts {
		o(s)
	}
	if s.hub == nil {
		s.hub = NewHub()
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	if s.compare == nil {
		s.compare = func(b, h *result.Run) *compare.Report {
			var cfg compare.Config
			if s.store != nil { // noise-aware thresholds from the stored runs, as the command line's
				cfg.History = history.NoiseHistory(context.Background(), s.store, h)
			}
			return compare.Runs(b, h, cfg)
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(s.metrics)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.refreshMetrics(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})))
	mux.HandleFunc("GET /assets/echarts.min.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Write(page.ECharts())
	})
	mux.HandleFunc("GET /assets/report.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Write(page.Script())
	})
	mux.HandleFunc("GET /live", s.livePage)
	mux.HandleFunc("GET /api/live", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, s.hub.State()) })
	mux.HandleFunc("GET /api/live/events", s.hub.ServeEvents)
	if st != nil {
		mux.HandleFunc("GET /{$}", s.runsPage)
		mux.HandleFunc("GET /runs/{id}", s.runPage)
		mux.HandleFunc("GET /compare", s.comparePage)
		mux.HandleFunc("GET /trends", s.trendsPage)
		mux.HandleFunc("GET /baselines", s.baselinesPage)
		mux.HandleFunc("GET /api/runs", s.apiRuns)
		mux.HandleFunc("GET /api/runs/{id}", s.apiRun)
		mux.HandleFunc("GET /api/baselines", s.apiBaselines)
		mux.HandleFunc("GET /api/history", s.apiHistory)
		mux.HandleFunc("GET /api/compare", s.apiCompare)
	} else {
		mux.Handle("GET /{$}", http.RedirectHandler("/live", http.StatusFound))
	}
	s.handler = s.secure(mux)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Hub returns the live state the server shows.
func (s *Server) Hub() *Hub { return s.hub }

// Metrics returns what /metrics exports.
func (s *Server) Metrics() *Metrics { return s.metrics }

// secure sets protective headers and checks the token.
func (s *Server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		if s.token == "" && !checkHost(w, r) { // no token: loopback only, DNS rebinding refused
			return
		}
		if s.token != "" {
			if t := r.URL.Query().Get("token"); t != "" && s.tokenOK(t) {
				http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
				q := r.URL.Query()
				q.Del("token")
				u := *r.URL
				u.RawQuery = q.Encode()
				http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
				return
			}
			got := ""
			if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
				got = strings.TrimPrefix(a, "Bearer ")
			} else if c, err := r.Cookie(tokenCookie); err == nil {
				got = c.Value
			}
			if !s.tokenOK(got) {
				h.Set("WWW-Authenticate", `Bearer realm="inferbench"`)
				http.Error(w, "unauthorized: send Authorization: Bearer TOKEN (or open /?token=TOKEN once)", http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) tokenOK(t string) bool {
	return t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// refreshMetrics exports the store's newest run, unless a live run feeds the metrics.
func (s *Server) refreshMetrics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.store != nil && !s.hub.State().Running {
			if run, err := store.Latest(r.Context(), s.store, store.Filter{}); err == nil {
				s.metrics.SetRun(run)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Loopback reports whether addr (host:port) binds only the loopback interface.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var nav = []page.Link{
	{Label: "Runs", Href: "/"}, {Label: "Trends", Href: "/trends"}, {Label: "Baselines", Href: "/baselines"},
	{Label: "Live", Href: "/live"}, {Label: "API", Href: "/api/runs"}, {Label: "Metrics", Href: "/metrics"},
}

// assetBase is where the pages load the chart library and the page script from: served once
// (GET /assets/...), not inlined in every page.
const assetBase = "/assets/"

// reportOptions are the options of a report's page on the dashboard: its navigation, the served
// assets and the run pages' links.
func reportOptions() report.HTMLOptions {
	o := report.HTMLOptions{AssetBase: assetBase, RunHref: runHref}
	for _, l := range nav {
		o.Nav = append(o.Nav, report.Link(l))
	}
	return o
}

func runHref(id string) string { return "/runs/" + url.PathEscape(id) }

// page renders a dashboard body template into the report layout.
func (s *Server) page(w http.ResponseWriter, title, tmpl string, data any, charts []page.Chart, script string) {
	var body bytes.Buffer
	if err := pages.ExecuteTemplate(&body, tmpl, data); err != nil {
		httpError(w, err)
		return
	}
	s.writePage(w, page.Page{Title: title, Body: template.HTML(body.String()), Charts: charts, Script: template.JS(script)})
}

func (s *Server) writePage(w http.ResponseWriter, p page.Page) {
	p.Nav, p.AssetBase = nav, assetBase
	writeHTML(w, func(w io.Writer) error { return page.WritePage(w, p) })
}

// writeHTML answers with the page write writes, or with the error it returns.
func writeHTML(w http.ResponseWriter, write func(w io.Writer) error) {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		httpError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

func httpError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var ue usageError
	switch {
	case errors.Is(err, store.ErrNotFound):
		code = http.StatusNotFound
	case errors.As(err, &ue):
		code = http.StatusBadRequest
	}
	http.Error(w, err.Error(), code)
}

type usageError struct{ error }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := finite.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// writeList writes xs as a JSON array ([] when empty, never null), or err.
func writeList[T any](w http.ResponseWriter, xs []T, err error) {
	if err != nil {
		httpError(w, err)
		return
	}
	if xs == nil {
		xs = []T{}
	}
	writeJSON(w, xs)
}

// runsView is templates/runs.tmpl's data.
type runsView struct {
	Runs       []runRow
	Benchmarks []string
	Baselines  []store.Baseline
	Live       LiveState
}

type runRow struct {
	store.RunInfo
	Href, Prev string
}

// maxListed bounds the runs on the dashboard's front page.
const maxListed = 200

// maxHistory bounds the points of a trend or an /api/history answer.
const maxHistory = 5000

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	infos, err := s.store.List(ctx, store.Filter{Limit: maxListed})
	if err != nil {
		httpError(w, err)
		return
	}
	v := runsView{Live: s.hub.State()}
	for i, in := range infos {
		row := runRow{RunInfo: in, Href: runHref(in.ID)}
		if i+1 < len(infos) {
			row.Prev = infos[i+1].ID
		}
		v.Runs = append(v.Runs, row)
	}
	if len(infos) > 0 {
		if latest, err := s.store.Get(ctx, infos[0].ID); err == nil {
			v.Benchmarks = benchmarks(latest)
		}
	}
	v.Baselines, _ = s.store.ListBaselines(ctx)
	s.page(w, "inferbench runs", "runs", v, nil, "")
}

// benchmarks lists a run's benchmarks in the order they first appear.
func benchmarks(r *result.Run) []string {
	var out []string
	seen := map[string]bool{}
	for _, sc := range r.Scenarios {
		if !seen[sc.Benchmark] {
			seen[sc.Benchmark] = true
			out = append(out, sc.Benchmark)
		}
	}
	return out
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	run, err := store.Resolve(r.Context(), s.store, r.PathValue("id"))
	if err != nil {
		httpError(w, err)
		return
	}
	writeHTML(w, func(w io.Writer) error { return report.RunHTML(w, run, reportOptions()) })
}

// resolvePair finds the two runs of a compare: head defaults to the newest, base to the run
// before head.
func (s *Server) resolvePair(ctx context.Context, q url.Values) (base, head *result.Run, err error) {
	headRef, baseRef := q.Get("head"), q.Get("base")
	if headRef == "" {
		headRef = "latest"
	}
	if head, err = store.Resolve(ctx, s.store, headRef); err != nil {
		return nil, nil, err
	}
	if baseRef == "" {
		infos, err := s.store.List(ctx, store.Filter{Until: head.StartedAt, Limit: 1})
		if err != nil {
			return nil, nil, err
		}
		if len(infos) == 0 {
			return nil, nil, usageError{fmt.Errorf("no run before %s to compare with: pass ?base=RUN", head.ID)}
		}
		baseRef = infos[0].ID
	}
	if base, err = store.Resolve(ctx, s.store, baseRef); err != nil {
		return nil, nil, err
	}
	return base, head, nil
}

func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	base, head, err := s.resolvePair(r.Context(), r.URL.Query())
	if err != nil {
		httpError(w, err)
		return
	}
	rep := s.compare(base, head)
	section, err := explain.HTML(s.explain(base, head, rep))
	if err != nil {
		httpError(w, err)
		return
	}
	opts := report.CompareOptions{HTMLOptions: reportOptions()}
	opts.Explain = section
	writeHTML(w, func(w io.Writer) error { return report.CompareHTML(w, base, head, rep, opts) })
}

// trendsView is templates/trends.tmpl's data (the query form above the report's trend page).
type trendsView struct {
	Benchmark, Scenario, Metric string
	Benchmarks                  []string
	Metrics                     []string
}

// trendMetrics are offered in the trends form.
var trendMetrics = []string{"latency_ms.p50", "latency_ms.p95", "latency_ms.p99", "cpu_ms.p50", "instructions", "throughput_ips", "memory_mb",
	"ttft_ms.p50", "ttft_ms.p95", "itl_ms.p50", "tpot_ms.p50", "e2e_ms.p95", "output_tokens_per_s", "requests_per_s"}

// trends answers the trends form: every benchmark in the store is offered; a series is a full
// scenario identity (benchmark and every parameter), as in history, and how it was measured and
// whether its tree was dirty (history.Build): timed and counted runs, and runs of uncommitted
// changes, are never one line.
func (s *Server) trends(ctx context.Context, q url.Values) ([]page.Trend, trendsView, error) {
	v := trendsView{Benchmark: q.Get("benchmark"), Scenario: q.Get("scenario"), Metric: q.Get("metric"), Metrics: trendMetrics}
	if v.Metric == "" {
		v.Metric = "latency_ms.p50"
	}
	if _, _, err := store.SplitMetric(v.Metric); err != nil {
		return nil, v, usageError{err}
	}
	if !slices.Contains(v.Metrics, v.Metric) {
		v.Metrics = append(v.Metrics, v.Metric)
	}
	bs, err := s.store.Benchmarks(ctx)
	if err != nil {
		return nil, v, err
	}
	v.Benchmarks = bs
	if v.Benchmark == "" && len(v.Benchmarks) > 0 {
		v.Benchmark = v.Benchmarks[0]
	}
	series, err := history.Query(ctx, s.store, store.Query{Benchmark: v.Benchmark, Scenario: v.Scenario, Metric: v.Metric, Limit: maxHistory}, stats.ChangeOptions{})
	if err != nil && series == nil {
		return nil, v, err
	}
	return history.Trends(series, v.Metric), v, nil
}

func (s *Server) trendsPage(w http.ResponseWriter, r *http.Request) {
	trends, v, err := s.trends(r.Context(), r.URL.Query())
	if err != nil {
		httpError(w, err)
		return
	}
	p, err := page.HistoryPage(trends)
	if err != nil {
		httpError(w, err)
		return
	}
	var form bytes.Buffer
	if err := pages.ExecuteTemplate(&form, "trends", v); err != nil {
		httpError(w, err)
		return
	}
	p.Body = template.HTML(form.String()) + p.Body
	s.writePage(w, p)
}

func (s *Server) baselinesPage(w http.ResponseWriter, r *http.Request) {
	bs, err := s.store.ListBaselines(r.Context())
	if err != nil {
		httpError(w, err)
		return
	}
	s.page(w, "inferbench baselines", "baselines", bs, nil, "")
}

func (s *Server) livePage(w http.ResponseWriter, r *http.Request) {
	s.page(w, "inferbench live", "live", s.hub.State(), nil, liveScript)
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) { s.apiRunsPaged(w, r) }

func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	run, err := store.Resolve(r.Context(), s.store, r.PathValue("id"))
	if err != nil {
		httpError(w, err)
		return
	}
	writeJSON(w, run)
}

func (s *Server) apiBaselines(w http.ResponseWriter, r *http.Request) {
	bs, err := s.store.ListBaselines(r.Context())
	writeList(w, bs, err)
}

func (s *Server) apiHistory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	metric := q.Get("metric")
	if metric == "" {
		httpError(w, usageError{errors.New("metric: required, e.g. ?metric=latency_ms.p95")})
		return
	}
	if _, _, err := store.SplitMetric(metric); err != nil {
		httpError(w, usageError{err})
		return
	}
	s.apiHistoryPaged(w, r, store.Query{Benchmark: q.Get("benchmark"), Scenario: q.Get("scenario"), Metric: metric})
}

func (s *Server) apiCompare(w http.ResponseWriter, r *http.Request) {
	base, head, err := s.resolvePair(r.Context(), r.URL.Query())
	if err != nil {
		httpError(w, err)
		return
	}
	writeJSON(w, s.compare(base, head))
}

// explain explains a comparison's regressed scenarios from the profiles in the runs' folders
// under runsDir (the explanation says so when a folder is not there).
func (s *Server) explain(base, head *result.Run, rep *compare.Report) []explain.Scenario {
	if rep.Regressions == 0 {
		return nil
	}
	folder := func(id string) string {
		if s.runsDir == "" {
			return ""
		}
		d := filepath.Join(s.runsDir, id)
		if _, err := os.Stat(filepath.Join(d, result.RunFile)); err != nil {
			return ""
		}
		return d
	}
	return explain.Runs(folder(base.ID), folder(head.ID), explain.Pairs(base, head, rep, false), explain.Options{})
}

// certificatesBadge shows a run's serving certificates in its row of the runs list: the worst
// verdict with how many scenarios have it ("fail 2 of 5"), a badge coloured by it; nothing for a
// run without serving scenarios.
func certificatesBadge(c result.CertCounts) template.HTML {
	total := c.Pass + c.Warn + c.Fail
	for _, v := range []struct {
		verdict, class string
		n              int
	}{{result.CertFail, "bad", c.Fail}, {result.CertWarn, "warn", c.Warn}, {result.CertPass, "ok", c.Pass}} {
		if n := v.n; n > 0 {
			what := fmt.Sprintf("%s %d of %d", v.verdict, n, total)
			if v.verdict == result.CertPass && n == total {
				what = "pass"
			}
			return template.HTML(fmt.Sprintf(`<span class="badge %s" title="serving certificates: is it the server's number? (docs/certificate.md)">%s</span>`, v.class, template.HTMLEscapeString(what)))
		}
	}
	return ""
}
