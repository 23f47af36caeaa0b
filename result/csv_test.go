package result

import (
	"bytes"
	"encoding/csv"
	"testing"

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
