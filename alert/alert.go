// Package alert evaluates alert rules against a finished run and posts what fires to a webhook
// as Slack-compatible JSON, or mails it over SMTP (email.go) when the rule ends in
// "-> email ADDR[,ADDR]". Rules read like the conditions people write in runbooks:
//
//	latency_ms.p95 > baseline * 1.3      the p95 latency grew 30% over the baseline's
//	throughput_ips < baseline * 0.9      throughput fell 10%
//	memory_mb.max > 2048                 an absolute limit
//	growth(memory_mb, 7d) > 10%          memory grew 10% over the stored runs of the last 7 days
//
// A rule is checked for every scenario that has the metric. Posting never fails a run: the caller
// reports the error and carries on.
package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"time"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/budget"
	"github.com/inferbench/inferbench/result"
)

// WebhookEnv is the default variable holding the webhook URL.
const WebhookEnv = "INFERBENCH_ALERT_WEBHOOK"

// Rule is one parsed alert condition.
type Rule struct {
	Text   string
	Metric string        // "latency_ms.p95"
	Growth time.Duration // > 0: the relative growth of Metric over this window
	Op     string        // >, >=, <, <=
	// Baseline, Factor and Value are the right-hand side: Value, or with Baseline the baseline's
	// value of Metric times Factor.
	Baseline bool
	Factor   float64
	Value    float64
	// Action is where a firing goes: "webhook" (the default) or "email" to To, written after
	// the condition: "memory_mb.max > 2048 -> email dev-team@company.com,ops@company.com".
	Action string
	To     []string
}

// Parse reads a rule: a condition, then optionally "-> email ADDR[,ADDR...]" or "-> webhook".
func Parse(s string) (Rule, error) {
	r := Rule{Text: strings.TrimSpace(s), Action: "webhook"}
	bad := func(why string) (Rule, error) {
		return Rule{}, fmt.Errorf("alert rule %q: %s (e.g. \"latency_ms.p95 > baseline * 1.3\", \"memory_mb.max > 2048 -> email dev@example.com\", \"growth(memory_mb, 7d) > 10%%\")", s, why)
	}
	if cond, action, ok := strings.Cut(r.Text, "->"); ok {
		r.Text = strings.TrimSpace(cond)
		f := strings.Fields(action)
		switch {
		case len(f) == 1 && f[0] == "webhook":
		case len(f) >= 2 && f[0] == "email":
			r.Action = "email"
			for _, a := range strings.Split(strings.Join(f[1:], ""), ",") {
				if a = strings.TrimSpace(a); a != "" {
					if !strings.Contains(a, "@") || strings.ContainsAny(a, "<>\r\n") {
						return bad(fmt.Sprintf("%q is not an email address", a))
					}
					r.To = append(r.To, a)
				}
			}
			if len(r.To) == 0 {
				return bad("email needs recipients: -> email dev-team@company.com")
			}
		default:
			return bad("after ->, 'webhook' or 'email ADDR[,ADDR]'")
		}
	}
	var lhs, rhs string
	for _, op := range []string{">=", "<=", ">", "<"} {
		if i := strings.Index(r.Text, op); i > 0 {
			lhs, rhs, r.Op = strings.TrimSpace(r.Text[:i]), strings.TrimSpace(r.Text[i+len(op):]), op
			break
		}
	}
	if r.Op == "" {
		return bad("no comparison (>, >=, <, <=)")
	}
	if strings.HasPrefix(lhs, "growth(") && strings.HasSuffix(lhs, ")") {
		m, win, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(lhs, "growth("), ")"), ",")
		if !ok {
			return bad("growth needs a metric and a window: growth(memory_mb, 7d)")
		}
		d, err := parseWindow(strings.TrimSpace(win))
		if err != nil {
			return bad(err.Error())
		}
		r.Metric, r.Growth = strings.TrimSpace(m), d
		pct, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(rhs, "%")), 64)
		if err != nil || !strings.HasSuffix(rhs, "%") || !finite(pct) {
			return bad("growth compares with a percentage: > 10%")
		}
		r.Value = pct
		return r, nil
	}
	if lhs == "" || strings.ContainsAny(lhs, " ()") {
		return bad("the left side is a metric such as latency_ms.p95")
	}
	r.Metric = lhs
	if strings.HasPrefix(rhs, "baseline") {
		r.Baseline, r.Factor = true, 1
		rest := strings.TrimSpace(strings.TrimPrefix(rhs, "baseline"))
		if rest != "" {
			f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(rest, "*")), 64)
			if err != nil || !strings.HasPrefix(rest, "*") || !finite(f) {
				return bad("after baseline, only '* FACTOR'")
			}
			r.Factor = f
		}
		return r, nil
	}
	v, err := strconv.ParseFloat(rhs, 64)
	if err != nil || !finite(v) {
		return bad("the right side is a number, 'baseline' or 'baseline * FACTOR'")
	}
	r.Value = v
	return r, nil
}

// email is "email" for a rule whose firings are mailed, "" for the webhook's.
func (r Rule) email() string {
	if r.Action == "email" {
		return "email"
	}
	return ""
}

// finite reports whether v is a number a comparison can use: with NaN a rule would never fire.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func parseWindow(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		d, err := strconv.Atoi(n)
		if err != nil || d <= 0 || d > 100*365 {
			return 0, fmt.Errorf("window %q: want e.g. 7d or 36h", s)
		}
		return time.Duration(d) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("window %q: want e.g. 7d or 36h", s)
	}
	return d, nil
}

// Firing is a rule that fired on a scenario.
type Firing struct {
	Rule     string   `json:"rule"`
	Action   string   `json:"action,omitempty"` // email; empty for the webhook
	To       []string `json:"to,omitempty"`     // the email's recipients
	Scenario string   `json:"scenario"`         // benchmark/scenario
	Value    float64  `json:"value"`
	Limit    float64  `json:"limit"`
	Message  string   `json:"message"`
}

// History returns a scenario's values of a metric ("memory_mb.max") in stored runs started at or
// after since, oldest first.
type History func(ctx context.Context, benchmark, scenario, metric string, since time.Time) ([]float64, error)

// Evaluate checks the rules against run. baseline may be nil (rules on it are skipped), and so
// may hist (growth rules are skipped). Notes say what could not be checked.
func Evaluate(ctx context.Context, rules []Rule, run, baseline *result.Run, hist History) (fired []Firing, notes []string) {
	var base map[string]*result.Scenario
	if baseline != nil {
		base = map[string]*result.Scenario{}
		for i := range baseline.Scenarios {
			base[compare.Key(&baseline.Scenarios[i])] = &baseline.Scenarios[i]
		}
	}
	for _, rule := range rules {
		switch {
		case rule.Baseline && baseline == nil:
			notes = append(notes, fmt.Sprintf("alert %q: no baseline to compare with (run --baseline NAME)", rule.Text))
			continue
		case rule.Growth > 0 && hist == nil:
			notes = append(notes, fmt.Sprintf("alert %q: no history store", rule.Text))
			continue
		}
		for i := range run.Scenarios {
			s := &run.Scenarios[i]
			if s.Status != result.StatusOK {
				continue
			}
			v, ok := compare.MetricStat(s, rule.Metric)
			if !ok {
				continue
			}
			limit := rule.Value
			switch {
			case rule.Baseline:
				b, ok := base[compare.Key(s)]
				if !ok {
					continue
				}
				bv, ok := compare.MetricStat(b, rule.Metric)
				if !ok {
					continue
				}
				limit = bv * rule.Factor
			case rule.Growth > 0:
				at := run.StartedAt
				if at.IsZero() {
					at = time.Now()
				}
				xs, err := hist(ctx, s.Benchmark, s.Scenario, rule.Metric, at.Add(-rule.Growth))
				if err != nil {
					notes = append(notes, fmt.Sprintf("alert %q: %v", rule.Text, err))
					continue
				}
				if len(xs) == 0 || xs[0] == 0 {
					continue
				}
				growth := 100 * (v/xs[0] - 1)
				if budget.Holds(growth, rule.Op, rule.Value) {
					fired = append(fired, Firing{Rule: rule.Text, Action: rule.email(), To: rule.To, Scenario: s.ID(), Value: growth, Limit: rule.Value,
						Message: fmt.Sprintf("%s: %s grew %+.1f%% over %s (from %.4g to %.4g)", s.ID(), rule.Metric, growth, rule.Growth, xs[0], v)})
				}
				continue
			}
			if budget.Holds(v, rule.Op, limit) {
				fired = append(fired, Firing{Rule: rule.Text, Action: rule.email(), To: rule.To, Scenario: s.ID(), Value: v, Limit: limit,
					Message: fmt.Sprintf("%s: %s = %.4g %s %.4g (%s)", s.ID(), rule.Metric, v, rule.Op, limit, rule.Text)})
			}
		}
	}
	return fired, notes
}

// slackMessage is the JSON posted: Slack's incoming-webhook shape ("text"), which Mattermost,
// Rocket.Chat, Discord's /slack endpoint and most chat bridges accept; Firings is extra detail.
type slackMessage struct {
	Text    string   `json:"text"`
	Run     string   `json:"run"`
	Firings []Firing `json:"firings"`
}

// defaultTimeout bounds a webhook's post (and an email's delivery) when $INFERBENCH_ALERT_TIMEOUT
// does not: an endpoint that accepts the connection and never answers costs a run at most this.
const defaultTimeout = 2 * time.Second

// timeoutEnv names the variable that sets the alerts' deadline (a Go duration: 5s, 1500ms).
const timeoutEnv = "INFERBENCH_ALERT_TIMEOUT"

// alertTimeout returns the alerts' deadline: $INFERBENCH_ALERT_TIMEOUT read through lookup, else
// defaultTimeout. A value that is not a positive duration is an error naming the variable.
func alertTimeout(lookup func(string) (string, bool)) (time.Duration, error) {
	v, ok := lookup(timeoutEnv)
	if !ok || strings.TrimSpace(v) == "" {
		return defaultTimeout, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 5s", timeoutEnv, v)
	}
	return d, nil
}

// postWebhook sends the firings to a webhook. It returns the error for the caller to report; the caller
// must not fail the run on it.
func postWebhook(ctx context.Context, client *http.Client, url string, run *result.Run, fired []Firing) error {
	if len(fired) == 0 {
		return nil
	}
	if client == nil {
		client = &http.Client{Timeout: defaultTimeout}
	}
	var b strings.Builder
	fmt.Fprintf(&b, ":rotating_light: inferbench run %s: %d alert(s)\n", run.ID, len(fired))
	for i, f := range fired {
		if i == 20 {
			fmt.Fprintf(&b, "… and %d more\n", len(fired)-20)
			break
		}
		fmt.Fprintf(&b, "• %s\n", f.Message)
	}
	body, err := json.Marshal(slackMessage{Text: b.String(), Run: run.ID, Firings: fired})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("alert webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL holds the webhook's secret: keep it out of logs
		}
		return fmt.Errorf("alert webhook: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("alert webhook: %s", resp.Status)
	}
	return nil
}
