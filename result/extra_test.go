package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/testkit/schematest"
)

// TestReadV1Files loads run.json files written before the extra sections were typed
// (testdata/v1, see its README), checks that every section lands in its typed field, and writes
// them back: the bytes must be the ones read.
func TestReadV1Files(t *testing.T) {
	seen := map[string]int{}
	files, _ := filepath.Glob("testdata/v1/*.json")
	if len(files) == 0 {
		t.Fatal("no testdata/v1 files")
	}
	for _, path := range files {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		schematest.ValidateRun(t, want)
		r, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, s := range r.Scenarios {
			e := s.Extra
			if len(e.Other) > 0 {
				t.Errorf("%s %s: sections left untyped: %v", path, s.ID(), keys(e.Other))
			}
			count := func(name string, present bool) {
				if present {
					seen[name]++
				}
			}
			count(SectionResources, e.Resources != nil && len(e.Resources.Metrics) > 0 && e.Resources.Tree != "")
			count("timelines", e.Resources != nil && len(e.Resources.Timelines) > 0 && len(e.Resources.Timelines[0].T) > 0)
			count("memory_growth", e.Resources != nil && e.Resources.Growth != nil && e.Resources.Growth.N > 0)
			count("monitor_overhead", e.Resources != nil && e.Resources.Overhead != nil && e.Resources.Overhead.LatencyOffMS > 0)
			count(sectionServer, e.Server != nil && e.Server.Command != "")
			count(SectionSLO, e.SLO != nil && len(e.SLO.Objectives) > 0)
			count(SectionSteadyWindow, e.SteadyWindow != nil && e.SteadyWindow.End.After(e.SteadyWindow.Start))
			count(SectionSweep, len(e.Sweep) > 0 && e.Sweep[0].Name != "")
			count(SectionClientBound, e.ClientBound)
			count(sectionErrorsByKind, len(e.ErrorsByKind) > 0)
		}
		var got bytes.Buffer
		if err := WriteJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			var a, b any
			json.Unmarshal(want, &a)
			json.Unmarshal(got.Bytes(), &b)
			t.Errorf("%s written back differs (-read +written):\n%s", path, cmp.Diff(a, b))
		}
	}
	for _, name := range []string{SectionResources, "timelines", "memory_growth", "monitor_overhead", sectionServer,
		SectionSLO, SectionSteadyWindow, SectionSweep, SectionClientBound, sectionErrorsByKind} {
		if seen[name] == 0 {
			t.Errorf("no scenario of testdata/v1 has a %s section: the fixtures no longer cover it", name)
		}
	}
}

// TestExtraOther keeps a section this version does not know, and Set converts a value of another
// type to the section's through JSON.
func TestExtraOther(t *testing.T) {
	var e Extra
	if err := e.Set("shard", map[string]int{"index": 2, "of": 4}); err != nil {
		t.Fatal(err)
	}
	if err := e.Set(SectionSLO, map[string]any{"hold": true, "objectives": map[string]float64{"ttft_ms.p99": 500}}); err != nil {
		t.Fatal(err)
	}
	if e.SLO == nil || !e.SLO.Hold || e.SLO.Objectives["ttft_ms.p99"] != 500 {
		t.Errorf("slo = %+v", e.SLO)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"shard":{"index":2,"of":4},"slo":{"failures":null,"hold":true,"objectives":{"ttft_ms.p99":500}}}`
	if string(b) != want {
		t.Errorf("json %s, want %s", b, want)
	}
	var back Extra
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if string(back.Other["shard"]) != `{"index":2,"of":4}` || back.SLO == nil {
		t.Errorf("read back %+v", back)
	}
	if err := e.Set(SectionSweep, "not steps"); err == nil {
		t.Error("a sweep of the wrong shape was accepted")
	}
	if !(Extra{}).IsZero() || e.IsZero() {
		t.Error("IsZero")
	}
}

// TestExtraSetNonFinite: a section holding a non-finite float (a capacity search's limit of
// +Inf, a step's NaN) is kept, the value written as null, not lost with a warning
// ("json: unsupported value: +Inf").
func TestExtraSetNonFinite(t *testing.T) {
	type step struct {
		Rate  float64 `json:"rate_rps"`
		Limit float64 `json:"limit_ms"`
	}
	var e Extra
	if err := e.Set("capacity", map[string]any{"steps": []step{{Rate: 2, Limit: math.Inf(1)}, {Rate: 4, Limit: math.NaN()}}}); err != nil {
		t.Fatal(err)
	}
	const want = `{"steps":[{"rate_rps":2,"limit_ms":null},{"rate_rps":4,"limit_ms":null}]}`
	if got := string(e.Other["capacity"]); got != want {
		t.Errorf("extra.capacity %s, want %s", got, want)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestCO2e(t *testing.T) {
	for _, tc := range []struct {
		name   string
		grid   Grid
		joules float64
		want   float64
	}{
		{"one kWh at the default", DefaultGrid, 3.6e6, 475},
		{"PUE scales", Grid{IntensityGPerKWh: 475, PUE: 1.5}, 3.6e6, 712.5},
		{"zero PUE means 1", Grid{IntensityGPerKWh: 100}, 36e3, 1},
		{"clean grid", Grid{IntensityGPerKWh: 0, PUE: 1.2}, 1e9, 0},
	} {
		if got := tc.grid.CO2eGrams(tc.joules); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}

func TestGridValidate(t *testing.T) {
	if err := DefaultGrid.Validate(); err != nil {
		t.Error(err)
	}
	if err := (Grid{IntensityGPerKWh: 400, PUE: 0.9}).Validate(); err == nil {
		t.Error("PUE below 1 accepted")
	}
	if err := (Grid{IntensityGPerKWh: -1, PUE: 1}).Validate(); err == nil {
		t.Error("negative intensity accepted")
	}
}

func ExampleGrid_CO2eGrams() {
	// 1.8 MJ (half a kWh) in a data centre with a PUE of 1.2 on a 300 g/kWh grid.
	g := Grid{IntensityGPerKWh: 300, PUE: 1.2}
	fmt.Printf("%.0f g CO2e\n", g.CO2eGrams(1.8e6))
	// Output: 180 g CO2e
}
