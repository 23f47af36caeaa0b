// Package schematest checks files against the JSON Schemas in docs/, for tests.
package schematest

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	once   sync.Once
	schema *jsonschema.Schema
	err    error
)

func root() string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}

// ValidateRun fails t unless data is a run.json valid under docs/run.schema.json.
func ValidateRun(t testing.TB, data []byte) {
	t.Helper()
	once.Do(func() {
		c := jsonschema.NewCompiler()
		schema, err = c.Compile(filepath.Join(root(), "docs", "run.schema.json"))
	})
	if err != nil {
		t.Fatalf("compile docs/run.schema.json: %v", err)
	}
	doc, uerr := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if uerr != nil {
		t.Fatalf("run.json is not JSON: %v", uerr)
	}
	if verr := schema.Validate(doc); verr != nil {
		t.Errorf("run.json does not validate against docs/run.schema.json:\n%v", verr)
	}
}
