package inferbench

import (
	"bytes"
	"flag"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateAPI = flag.Bool("update", false, "rewrite docs/api.txt from the code")

// TestAPIFile holds docs/api.txt to the code: the file lists every exported declaration of the
// public packages (those outside internal/, cmd/ and examples/), one a line, in the form of Go's
// own api/*.txt. A change to the public surface changes that file, so every widening shows in
// review. `go test -run TestAPIFile . -update` rewrites it.
func TestAPIFile(t *testing.T) {
	got := strings.Join(apiLines(t, "."), "\n") + "\n"
	path := filepath.Join("docs", "api.txt")
	if *updateAPI {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (make it: go test -run TestAPIFile . -update)", err)
	}
	if got == string(want) {
		return
	}
	gotSet, wantSet := lineSet(got), lineSet(string(want))
	var added, removed []string
	for l := range gotSet {
		if !wantSet[l] {
			added = append(added, "+ "+l)
		}
	}
	for l := range wantSet {
		if !gotSet[l] {
			removed = append(removed, "- "+l)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	t.Errorf("docs/api.txt differs from the code's exported declarations (review, then: go test -run TestAPIFile . -update):\n%s",
		strings.Join(append(removed, added...), "\n"))
}

func lineSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l != "" {
			m[l] = true
		}
	}
	return m
}

// apiLines returns one line per exported declaration of the module's public packages, sorted.
func apiLines(t *testing.T, root string) []string {
	t.Helper()
	const module = "github.com/inferbench/inferbench"
	var lines []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "node_modules" || name == "internal" || name == "cmd" || name == "examples") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if !buildsOnLinux(f, name) {
			return nil
		}
		pkg := module
		if dir := filepath.ToSlash(filepath.Dir(path)); dir != "." {
			pkg += "/" + dir
		}
		if strings.HasSuffix(pkg, "test") { // test-support packages (storetest, ...) are not the API
			return nil
		}
		for _, l := range declLines(fset, f) {
			lines = append(lines, "pkg "+pkg+", "+l)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return slices.Compact(lines)
}

// buildsOnLinux reports whether a file is part of the linux/amd64 build with cgo: files for
// other systems repeat the declarations of their linux counterparts.
func buildsOnLinux(f *ast.File, name string) bool {
	tags := map[string]bool{"linux": true, "unix": true, "amd64": true, "cgo": true, "gc": true}
	base := strings.TrimSuffix(name, ".go")
	for _, os := range []string{"windows", "darwin", "freebsd", "openbsd", "netbsd", "plan9", "js", "wasip1", "arm64", "386", "arm"} {
		if strings.HasSuffix(base, "_"+os) {
			return false
		}
	}
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if constraint.IsGoBuild(c.Text) {
				e, err := constraint.Parse(c.Text)
				return err == nil && e.Eval(func(tag string) bool { return tags[tag] })
			}
		}
	}
	return true
}

// declLines renders the exported declarations of one file, as Go's api tool does: "func Name(T)
// R", "method (*T) Name(...)", "type T struct", "type T struct, Field F", "type I interface {
// M(...) }", "const C = ...", "var V T".
func declLines(fset *token.FileSet, f *ast.File) []string {
	expr := func(e ast.Expr) string {
		var b bytes.Buffer
		_ = printer.Fprint(&b, fset, e)
		return strings.Join(strings.Fields(b.String()), " ")
	}
	var out []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			sig := strings.TrimPrefix(expr(d.Type), "func")
			if d.Recv == nil {
				out = append(out, "func "+d.Name.Name+sig)
				continue
			}
			recv := expr(d.Recv.List[0].Type)
			base := strings.TrimPrefix(recv, "*")
			if i := strings.IndexByte(base, '['); i >= 0 {
				base = base[:i]
			}
			if !ast.IsExported(base) {
				continue
			}
			out = append(out, "method ("+recv+") "+d.Name.Name+sig)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					head := "type " + s.Name.Name
					if s.TypeParams != nil {
						head += "[" + fieldList(expr, s.TypeParams) + "]"
					}
					switch ty := s.Type.(type) {
					case *ast.StructType:
						out = append(out, head+" struct")
						for _, fld := range ty.Fields.List {
							if len(fld.Names) == 0 {
								if n := strings.TrimPrefix(expr(fld.Type), "*"); ast.IsExported(n[strings.LastIndexByte(n, '.')+1:]) {
									out = append(out, head+" struct, embedded "+expr(fld.Type))
								}
							}
							for _, n := range fld.Names {
								if n.IsExported() {
									out = append(out, head+" struct, "+n.Name+" "+expr(fld.Type))
								}
							}
						}
					case *ast.InterfaceType:
						out = append(out, head+" interface")
						for _, m := range ty.Methods.List {
							if len(m.Names) == 0 {
								out = append(out, head+" interface, embedded "+expr(m.Type))
							}
							for _, n := range m.Names {
								if n.IsExported() {
									out = append(out, head+" interface, "+n.Name+strings.TrimPrefix(expr(m.Type), "func"))
								}
							}
						}
					default:
						eq := " "
						if s.Assign.IsValid() {
							eq = " = "
						}
						out = append(out, head+eq+expr(s.Type))
					}
				case *ast.ValueSpec:
					kind := "var"
					if d.Tok == token.CONST {
						kind = "const"
					}
					for _, n := range s.Names {
						if !n.IsExported() {
							continue
						}
						l := kind + " " + n.Name
						if s.Type != nil {
							l += " " + expr(s.Type)
						}
						out = append(out, l)
					}
				}
			}
		}
	}
	return out
}

func fieldList(expr func(ast.Expr) string, fl *ast.FieldList) string {
	var parts []string
	for _, f := range fl.List {
		var names []string
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
		parts = append(parts, strings.Join(names, ", ")+" "+expr(f.Type))
	}
	return strings.Join(parts, ", ")
}
