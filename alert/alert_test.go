package alert

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want Rule
		bad  bool
	}{
		{in: "latency_ms.p95 > baseline * 1.3", want: Rule{Metric: "latency_ms.p95", Op: ">", Baseline: true, Factor: 1.3}},
		{in: "throughput_ips < baseline", want: Rule{Metric: "throughput_ips", Op: "<", Baseline: true, Factor: 1}},
		{in: "memory_mb.max >= 2048", want: Rule{Metric: "memory_mb.max", Op: ">=", Value: 2048}},
		{in: "growth(memory_mb, 7d) > 10%", want: Rule{Metric: "memory_mb", Op: ">", Growth: 7 * 24 * time.Hour, Value: 10}},
		{in: "growth(memory_mb, 36h) > 10%", want: Rule{Metric: "memory_mb", Op: ">", Growth: 36 * time.Hour, Value: 10}},
		{in: "latency_ms.p95", bad: true},                // no comparison
		{in: "latency_ms.p95 > baseline + 3", bad: true}, // only * after baseline
		{in: "growth(memory_mb) > 10%", bad: true},       // no window
		{in: "growth(memory_mb, 7d) > 10", bad: true},    // growth wants a percentage
		{in: "latency ms > 3", bad: true},                // not a metric
		// seed 002's email_notification with recipients
		{in: "memory_mb.max > 2048 -> email dev-team@company.com, ops@company.com", want: Rule{Text: "memory_mb.max > 2048", Metric: "memory_mb.max", Op: ">", Value: 2048, Action: "email", To: []string{"dev-team@company.com", "ops@company.com"}}},
		{in: "latency_ms.p50 < 3 -> webhook", want: Rule{Text: "latency_ms.p50 < 3", Metric: "latency_ms.p50", Op: "<", Value: 3}},
		{in: "latency_ms.p50 > 3 -> email", bad: true},        // no recipient
		{in: "latency_ms.p50 > 3 -> email nobody", bad: true}, // not an address
		{in: "latency_ms.p50 > 3 -> pager x", bad: true},      // no such action
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("Parse(%q) = %+v, want an error", c.in, got)
			}
			continue
		}
		if c.want.Text == "" {
			c.want.Text = c.in
		}
		if c.want.Action == "" {
			c.want.Action = "webhook"
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func TestEvaluateAndPost(t *testing.T) {
	v := func(x float64) result.Metric { return result.Metric{Value: &x} }
	sc := func(lat, mem float64) result.Scenario {
		return result.Scenario{Benchmark: "m", Scenario: "s", Status: result.StatusOK, Metrics: map[string]result.Metric{"latency_ms": v(lat), "memory_mb": v(mem)}}
	}
	base := &result.Run{ID: "base", Scenarios: []result.Scenario{sc(10, 100)}}
	run := &result.Run{ID: "new", StartedAt: time.Now(), Scenarios: []result.Scenario{sc(14, 130)}}
	var rules []Rule
	for _, s := range []string{"latency_ms.p95 > baseline * 1.3", "latency_ms > baseline * 1.5", "growth(memory_mb, 7d) > 20%", "memory_mb > 500"} {
		r, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	hist := func(ctx context.Context, b, s, m string, since time.Time) ([]float64, error) {
		return []float64{100, 110, 120}, nil
	}
	fired, notes := Evaluate(context.Background(), rules, run, base, hist)
	if len(fired) != 2 || fired[0].Rule != rules[0].Text || fired[1].Rule != rules[2].Text || len(notes) != 0 {
		t.Fatalf("fired %+v notes %v; want the 1.3× latency rule and the 30%% growth", fired, notes)
	}
	_, notes = Evaluate(context.Background(), rules, run, nil, nil)
	if len(notes) != 3 {
		t.Errorf("without baseline and history: notes %v, want 3", notes)
	}

	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
	}))
	defer srv.Close()
	if err := postWebhook(context.Background(), nil, srv.URL, run, fired); err != nil || !strings.Contains(got, `"text":`) || !strings.Contains(got, "grew +30.0%") {
		t.Errorf("Post: %v, body %s", err, got)
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(500 * time.Millisecond) }))
	defer slow.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := postWebhook(ctx, nil, slow.URL+"/secret-token", run, fired)
	if err == nil || strings.Contains(err.Error(), "secret-token") {
		t.Errorf("Post to a hanging webhook = %v, want a timeout error without the URL", err)
	}
}
