package page

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"testing"
)

func TestNum(t *testing.T) {
	b, _ := json.Marshal([]Num{1, 2.5, 1234.5678, 0.000123456, Num(math.NaN()), Num(math.Inf(1)), 1e20})
	if got, want := string(b), "[1,2.5,1235,0.0001235,null,null,1e+20]"; got != want {
		t.Errorf("Num JSON = %s, want %s", got, want)
	}
}

// TestEChartsPinned checks that the embedded chart library is the one web/package-lock.json pins,
// when `npm ci` has installed it.
func TestEChartsPinned(t *testing.T) {
	installed, err := os.ReadFile("../cli/web/node_modules/echarts/dist/echarts.min.js")
	if err != nil {
		t.Skip("web/node_modules absent (run make assets): cannot compare the embedded ECharts with the pinned one")
	}
	if !bytes.Equal(installed, ECharts()) {
		t.Error("internal/page/assets/echarts.min.js differs from web/node_modules/echarts: run make assets and commit the copy")
	}
}
