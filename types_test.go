package inferbench

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestJSONTypesDeclaredOnce holds each JSON shape to one Go declaration: no two struct types of
// the module's non-test code, in different packages, read or write the same JSON object, i.e.
// the JSON keys of one (at least three) are all among the other's. A copy of a section of
// run.json's extra (a time slice, a turn) in a package that only reads it drifts from the one
// that writes it; declare it once in result and read the field there.
func TestJSONTypesDeclaredOnce(t *testing.T) {
	type shape struct {
		where string // package.Type
		keys  []string
	}
	var shapes []shape
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			var keys []string
			for _, fld := range st.Fields.List {
				if fld.Tag == nil {
					continue
				}
				tag, _ := strconv.Unquote(fld.Tag.Value)
				key, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if key != "" && key != "-" {
					keys = append(keys, key)
				}
			}
			if len(keys) >= 3 {
				slices.Sort(keys)
				shapes = append(shapes, shape{pkg + "." + ts.Name.Name, keys})
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Pairs that share keys but not a meaning, each with the reason.
	allowed := map[string]string{
		"internal/history.ChangePoint": "a change point names the stored point it starts at (store.Point's commit, run and time) beside its statistics",
		"report.timeline":              "the gauges of an extra section this version does not know, read by their common keys",
	}
	pkgOf := func(where string) string { return where[:strings.LastIndexByte(where, '.')] }
	for i, a := range shapes {
		for _, b := range shapes[i+1:] {
			if pkgOf(a.where) == pkgOf(b.where) {
				continue
			}
			small, big := a, b
			if len(small.keys) > len(big.keys) {
				small, big = big, small
			}
			if allowed[small.where] != "" {
				continue
			}
			if !slices.ContainsFunc(small.keys, func(k string) bool { return !slices.Contains(big.keys, k) }) {
				t.Errorf("%s declares the JSON of %s again (keys %s): declare it once and read that type", small.where, big.where, strings.Join(small.keys, ", "))
			}
		}
	}
}
