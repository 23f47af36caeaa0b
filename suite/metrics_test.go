package suite

import (
	"strings"
	"testing"

	_ "github.com/inferbench/inferbench/internal/kind/exec"
)

// A definition declares the unit and direction of the metrics its subject reports; a direction
// other than higher or lower is an error at its file and line.
func TestMetricsBlock(t *testing.T) {
	src := "name: seed\nsubject: {kind: exec, command: \"true\", metrics: json}\nmetrics:\n  throughput: {unit: items/s, better: higher}\n  wobble: {better: sideways}\n"
	_, err := Parse("benches/x.yaml", []byte(src), nil)
	if err == nil || !strings.Contains(err.Error(), "benches/x.yaml:5") || !strings.Contains(err.Error(), "sideways") {
		t.Fatalf("bad better: error %v, want one at benches/x.yaml:5 naming sideways", err)
	}
	bs, err := Parse("benches/x.yaml", []byte(strings.Replace(src, "sideways", "lower", 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := bs[0].Metrics["throughput"]; m.Better != "higher" || m.Unit != "items/s" {
		t.Errorf("metrics: %+v", bs[0].Metrics)
	}
}

// A budget that is not an operator and a number, or a ratio that does not parse, is an error at
// its line of the definition.
func TestBudgetExpressionsChecked(t *testing.T) {
	src := "name: b\nsubject: {kind: exec, command: \"true\"}\nbudgets:\n  latency_ms.p95: \"about 5\"\n  \"ratio(a).latency_ms\": \"<= 1.05\"\n  \"ratio(cb/base).latency_ms.p50\": \"<= 1.05\"\n"
	_, err := Parse("benches/b.yaml", []byte(src), nil)
	if err == nil || !strings.Contains(err.Error(), "benches/b.yaml:4") || !strings.Contains(err.Error(), "benches/b.yaml:5") || strings.Contains(err.Error(), "benches/b.yaml:6") {
		t.Errorf("bad budgets: %v; want errors at lines 4 and 5 only", err)
	}
}

// gate: names the metrics that fail a comparison; an entry that is not a metric name is an error
// at its line.
func TestGateKey(t *testing.T) {
	src := "name: g\nsubject: {kind: exec, command: \"true\"}\ngate: [latency_ms, peak_rss_mb, latency_ms.p99]\n"
	bs, err := Parse("benches/g.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(bs[0].Gate, ","); got != "latency_ms,peak_rss_mb,latency_ms.p99" {
		t.Errorf("gate: %q", got)
	}
	src = "name: g\nsubject: {kind: exec, command: \"true\"}\ngate:\n  - latency_ms\n  - \"peak rss\"\n"
	if _, err := Parse("benches/g.yaml", []byte(src), nil); err == nil || !strings.Contains(err.Error(), "benches/g.yaml:5") {
		t.Errorf("gate with a blank in a name: %v, want an error at benches/g.yaml:5", err)
	}
}

// measure: instructions counts a benchmark's scenarios under callgrind; time is the default; any
// other value is an error at its line.
func TestMeasureKey(t *testing.T) {
	for _, c := range []struct{ value, want string }{
		{"instructions", "instructions"}, // counted
		{"time", ""},                     // said explicitly: timed, as without the key
	} {
		src := "name: g\nsubject: {kind: exec, command: \"true\"}\nmeasure: " + c.value + "\n"
		bs, err := Parse("benches/g.yaml", []byte(src), nil)
		if err != nil {
			t.Fatal(err)
		}
		if bs[0].Measure != c.want {
			t.Errorf("measure: %s gives %q, want %q", c.value, bs[0].Measure, c.want)
		}
	}
	src := "name: g\nsubject: {kind: exec, command: \"true\"}\nmeasure: cycles\n"
	if _, err := Parse("benches/g.yaml", []byte(src), nil); err == nil || !strings.Contains(err.Error(), "benches/g.yaml:3") || !strings.Contains(err.Error(), "want time or instructions") {
		t.Errorf("measure: cycles: %v, want an error at benches/g.yaml:3", err)
	}
}
