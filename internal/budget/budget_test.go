package budget

import "testing"

func TestParseGate(t *testing.T) {
	for _, ok := range []string{"latency_ms", "latency_ms.p95", "resnet:peak_rss_mb", "all"} {
		if _, err := ParseGate(ok); err != nil {
			t.Errorf("ParseGate(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", ":latency_ms", "resnet:"} {
		if _, err := ParseGate(bad); err == nil {
			t.Errorf("ParseGate(%q): no error", bad)
		}
	}
}

func TestParseRatio(t *testing.T) {
	r, err := ParseRatio(" ratio(callback/baseline).latency_ms.p50 ")
	if err != nil || r != (Ratio{Num: "callback", Den: "baseline", Metric: "latency_ms.p50"}) {
		t.Errorf("ParseRatio: %+v, %v", r, err)
	}
	if _, err := ParseRatio("ratio(a).latency_ms"); err == nil {
		t.Error("ParseRatio(ratio(a).latency_ms): no error")
	}
}
