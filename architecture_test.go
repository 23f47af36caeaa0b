package inferbench

import (
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestArchitectureTable holds docs/architecture.md to the code: its package table names every
// package of the module and no other, and every import between two top-level folders runs from a
// higher layer to a lower one, as the table numbers them (no arrow back up).
func TestArchitectureTable(t *testing.T) {
	const module = "github.com/inferbench/inferbench"
	doc, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	// | `run` | 8 | ... |
	row := regexp.MustCompile("(?m)^\\| `([^`]+)`[^|]*\\| (\\d+) \\|")
	layer := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		n, _ := strconv.Atoi(m[2])
		layer[m[1]] = n
	}

	// The module's packages, as go list ./... finds them, and the imports of their non-test files.
	imports := map[string][]string{}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if _, ok := imports[pkg]; !ok {
			imports[pkg] = nil
		}
		if strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, s := range f.Imports {
			p, _ := strconv.Unquote(s.Path.Value)
			switch {
			case p == module:
				imports[pkg] = append(imports[pkg], ".")
			case strings.HasPrefix(p, module+"/"):
				imports[pkg] = append(imports[pkg], strings.TrimPrefix(p, module+"/"))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	for pkg := range imports {
		if _, ok := layer[pkg]; !ok {
			t.Errorf("docs/architecture.md: package %s is not in the package table", pkg)
		}
	}
	for pkg := range layer {
		if _, ok := imports[pkg]; !ok {
			t.Errorf("docs/architecture.md: the package table names %s, which is not a package of the module", pkg)
		}
	}
	// A folder under internal/ is a top-level folder of its own: internal/subject/exec is in
	// internal/subject, and the layers hold between internal/monitor and internal/cli as anywhere.
	top := func(pkg string) string {
		parts := strings.Split(pkg, "/")
		if parts[0] == "internal" && len(parts) > 1 {
			return parts[0] + "/" + parts[1]
		}
		return parts[0]
	}
	for _, pkg := range slices.Sorted(maps.Keys(imports)) {
		for _, dep := range imports[pkg] {
			if top(pkg) != top(dep) && layer[pkg] <= layer[dep] {
				t.Errorf("%s (layer %d) imports %s (layer %d): an arrow back up; docs/architecture.md's layers say otherwise", pkg, layer[pkg], dep, layer[dep])
			}
		}
	}
}
