package result

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestImportPytestExtraInfoAndIdentity: a test's benchmark.extra_info is the scenario's extra
// section "extra_info" (before, it was dropped); two tests of one name and parameters in two
// modules, or of one group parametrized alike, are named by their full names, so that each has a
// matching key of its own, and a test alone keeps its short name.
func TestImportPytestExtraInfoAndIdentity(t *testing.T) {
	doc := `{"benchmarks": [
	 {"group": null, "name": "test_x[1]", "fullname": "a.py::test_x[1]", "params": {"n": 1}, "extra_info": {"rows": 3, "model": "m"},
	  "stats": {"min": 1, "max": 1, "mean": 1, "stddev": 0, "median": 1, "q1": 1, "q3": 1, "rounds": 2, "data": [1, 1]}},
	 {"group": null, "name": "test_x[1]", "fullname": "b.py::test_x[1]", "params": {"n": 1},
	  "stats": {"min": 1, "max": 1, "mean": 1, "stddev": 0, "median": 1, "q1": 1, "q3": 1, "rounds": 2, "data": [1, 1]}},
	 {"group": "parse", "name": "test_a[1]", "fullname": "c.py::test_a[1]", "params": {"n": 1},
	  "stats": {"min": 1, "max": 1, "mean": 1, "stddev": 0, "median": 1, "q1": 1, "q3": 1, "rounds": 2, "data": [1, 1]}},
	 {"group": "parse", "name": "test_b[1]", "fullname": "c.py::test_b[1]", "params": {"n": 1},
	  "stats": {"min": 1, "max": 1, "mean": 1, "stddev": 0, "median": 1, "q1": 1, "q3": 1, "rounds": 2, "data": [1, 1]}},
	 {"group": null, "name": "test_y[2]", "fullname": "a.py::test_y[2]", "params": {"n": 2},
	  "stats": {"min": 1, "max": 1, "mean": 1, "stddev": 0, "median": 1, "q1": 1, "q3": 1, "rounds": 2, "data": [1, 1]}}]}`
	r, err := readPytestBenchmark(strings.NewReader(doc), "s.json", "id")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range r.Scenarios {
		got = append(got, s.ID())
	}
	want := []string{"a.py::test_x/1", "b.py::test_x/1", "c.py::test_a/test_a[1]", "c.py::test_b/test_b[1]", "test_y/2"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("scenarios %v, want %v", got, want)
	}
	var extra map[string]any
	if err := json.Unmarshal(r.Scenarios[0].Extra.Other["extra_info"], &extra); err != nil || extra["rows"] != 3.0 || extra["model"] != "m" {
		t.Errorf("extra_info: %v %v", extra, err)
	}
	b, _ := json.Marshal(r.Scenarios[0])
	if !strings.Contains(string(b), `"extra_info":{"model":"m","rows":3}`) {
		t.Errorf("run.json's scenario: %s", b)
	}
}
