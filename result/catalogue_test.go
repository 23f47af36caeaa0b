package result

import "testing"

// Common metric names get the direction a user means; names that say nothing get none.
func TestGuessDirections(t *testing.T) {
	for _, c := range []struct {
		name   string
		better Direction
		unit   string
	}{
		{"throughput", Higher, "1/s"},        // seed 000
		{"accuracy", Higher, ""},             // seed 003
		{"tokens_per_s", Higher, "tokens/s"}, // rates
		{"items_per_s", Higher, "items/s"},
		{"cache_hit_rate", Higher, "ratio"},
		{"latency", Lower, ""},
		{"execution_time", Lower, ""}, // seed 000
		{"memory_used_mb", Lower, "MB"},
		{"error_rate", Lower, "ratio"}, // error wins over rate
		{"cache_miss_rate", Lower, "ratio"},
		{"time", Lower, ""},
		{"p50_ms", Lower, "ms"},
		{"gpu_energy_kwh", Lower, ""},
		{"gflops", Higher, "1/s"},
		{"widgets", Unknown, ""},
		{"count", Unknown, ""},
		{"result_size", Unknown, ""}, // seed 000: a count (len(result)), not a latency or a memory figure
		{"batch_size", Unknown, ""},
		{"model_size_mb", Lower, "MB"}, // a size in bytes is memory
	} {
		got := guess(c.name)
		if got.Better != c.better || got.Unit != c.unit {
			t.Errorf("Guess(%q) = %s, %q; want %s, %q", c.name, got.Better, got.Unit, c.better, c.unit)
		}
	}
	if i, ok := Lookup("latency_ms"); !ok || i.Better != Lower {
		t.Errorf("Lookup(latency_ms) = %+v, %v", i, ok)
	}
}

func TestDeclare(t *testing.T) {
	s := Scenario{Metrics: map[string]Metric{"widgets": NewMetric("widgets")}}
	if err := s.Declare("widgets", "1/s", "higher"); err != nil || s.Metrics["widgets"].Better != "higher" || s.Metrics["widgets"].Unit != "1/s" {
		t.Errorf("Declare: %v %+v", err, s.Metrics["widgets"])
	}
	if err := s.Declare("widgets", "", "sideways"); err == nil {
		t.Error("Declare with better sideways: no error")
	}
	if err := s.Declare("absent", "", "higher"); err != nil || len(s.Metrics) != 1 {
		t.Errorf("Declare of an absent metric: %v, %d metrics", err, len(s.Metrics))
	}
}
