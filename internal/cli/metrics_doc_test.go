package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// TestEveryMetricDocumented checks that every metric in the catalogue (defined by every package
// the command links) is defined in docs/metrics.md, or its serving part docs/metrics-serving.md,
// with its unit.
func TestEveryMetricDocumented(t *testing.T) {
	var doc string
	for _, page := range []string{"metrics.md", "metrics-serving.md"} {
		data, err := os.ReadFile(filepath.Join(testdata, "..", "..", "..", "docs", page))
		if err != nil {
			t.Fatal(err)
		}
		doc += string(data)
	}
	for _, m := range result.Catalogue() {
		if !strings.Contains(doc, "`"+m.Name+"`") {
			t.Errorf("metric %s (%s, %s is better) is not defined in docs/metrics.md", m.Name, m.Unit, m.Better)
		}
	}
}
