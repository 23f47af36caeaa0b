package inferbench

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// publicPackages parses the non-test Go files of every public package of the module (outside
// internal/, cmd/, examples/ and testdata) and returns them by folder, with their file set.
func publicPackages(t *testing.T) (*token.FileSet, map[string][]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	pkgs := map[string][]*ast.File{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || slices.Contains([]string{"testdata", "node_modules", "internal", "cmd", "examples"}, base)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(base, ".go") || strings.HasSuffix(base, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name != "main" {
			dir := filepath.ToSlash(filepath.Dir(path))
			pkgs[dir] = append(pkgs[dir], f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fset, pkgs
}

// internalNames returns the package names of the module's internal packages that a doc comment
// could name as NAME.Ident, leaving out those that are also a standard library package's name
// (os/exec's exec), whose mention is the library's.
func internalNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir("internal", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			names[filepath.Base(filepath.Dir(path))] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, std := range []string{"exec", "internal"} {
		delete(names, std)
	}
	return names
}

// TestGoDocNamesNoInternal: what `go doc` shows of a public package (its package comment, the
// comments of its exported declarations and their declarations, a variable's value included)
// names no internal package or identifier: a Go user can neither read nor call those, so a
// comment says what the code does in words, or names a public identifier.
func TestGoDocNamesNoInternal(t *testing.T) {
	fset, pkgs := publicPackages(t)
	names := internalNames(t)
	mention := regexp.MustCompile(`\binternal/[a-z]|\b([a-z][a-z0-9]*)\.[A-Z][A-Za-z0-9]*`)
	for dir, files := range pkgs {
		p, err := doc.NewFromFiles(fset, files, "github.com/inferbench/inferbench/"+dir)
		if err != nil {
			t.Fatal(err)
		}
		check := func(what, text string) {
			for _, m := range mention.FindAllStringSubmatch(text, -1) {
				if m[1] == "" || names[m[1]] {
					t.Errorf("%s: go doc of %s names %q, which is internal: say it in words or name a public identifier", dir, what, m[0])
				}
			}
		}
		decl := func(n ast.Node) string {
			var b strings.Builder
			ast.Inspect(n, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok {
						b.WriteString(id.Name + "." + sel.Sel.Name + " ")
					}
				}
				return true
			})
			return b.String()
		}
		check("the package comment", p.Doc)
		values := func(vs []*doc.Value) {
			for _, v := range vs {
				check(strings.Join(v.Names, ", "), v.Doc+" "+decl(v.Decl))
			}
		}
		funcs := func(fs []*doc.Func) {
			for _, f := range fs {
				name := f.Name
				if f.Recv != "" {
					name = strings.TrimPrefix(f.Recv, "*") + "." + name
				}
				check(name, f.Doc+" "+decl(f.Decl.Type))
			}
		}
		values(p.Consts)
		values(p.Vars)
		funcs(p.Funcs)
		for _, ty := range p.Types {
			check(ty.Name, ty.Doc+" "+exportedDecl(ty.Decl))
			values(ty.Consts)
			values(ty.Vars)
			funcs(ty.Funcs)
			funcs(ty.Methods)
		}
	}
}

// exportedDecl returns the comments and selectors of a type declaration's exported fields and
// methods, which go doc shows (an unexported field's is not).
func exportedDecl(d *ast.GenDecl) string {
	var b strings.Builder
	for _, spec := range d.Specs {
		ts, ok := spec.(*ast.TypeSpec)
		if !ok {
			continue
		}
		var fields *ast.FieldList
		switch st := ts.Type.(type) {
		case *ast.StructType:
			fields = st.Fields
		case *ast.InterfaceType:
			fields = st.Methods
		}
		if fields == nil {
			continue
		}
		for _, f := range fields.List {
			exported := len(f.Names) == 0
			for _, n := range f.Names {
				exported = exported || n.IsExported()
			}
			if !exported {
				continue
			}
			b.WriteString(f.Doc.Text() + " " + f.Comment.Text() + " ")
		}
	}
	return b.String()
}

// builtinTypes are the predeclared types a signature may name unqualified.
var builtinTypes = map[string]bool{
	"any": true, "bool": true, "byte": true, "comparable": true, "complex64": true, "complex128": true,
	"error": true, "float32": true, "float64": true, "int": true, "int8": true, "int16": true,
	"int32": true, "int64": true, "rune": true, "string": true, "uint": true, "uint8": true,
	"uint16": true, "uint32": true, "uint64": true, "uintptr": true,
}

// TestPublicAPINoUnexportedTypes: no exported function or method of an exported type in a public
// package takes or returns an unexported type of its own package, which a Go program could hold
// but neither name nor declare.
func TestPublicAPINoUnexportedTypes(t *testing.T) {
	fset, pkgs := publicPackages(t)
	for dir, files := range pkgs {
		for _, f := range files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || !fd.Name.IsExported() {
					continue
				}
				name, generic := fd.Name.Name, map[string]bool{}
				if fd.Recv != nil {
					recv := fd.Recv.List[0].Type
					if st, ok := recv.(*ast.StarExpr); ok {
						recv = st.X
					}
					switch r := recv.(type) {
					case *ast.IndexExpr:
						recv = r.X
						if id, ok := r.Index.(*ast.Ident); ok {
							generic[id.Name] = true
						}
					case *ast.IndexListExpr:
						recv = r.X
						for _, ix := range r.Indices {
							if id, ok := ix.(*ast.Ident); ok {
								generic[id.Name] = true
							}
						}
					}
					id, ok := recv.(*ast.Ident)
					if !ok || !id.IsExported() {
						continue
					}
					name = id.Name + "." + name
				}
				if fd.Type.TypeParams != nil {
					for _, tp := range fd.Type.TypeParams.List {
						for _, n := range tp.Names {
							generic[n.Name] = true
						}
					}
				}
				var fields []*ast.Field // the parameters' and results' types, not their names
				fields = append(fields, fd.Type.Params.List...)
				if fd.Type.Results != nil {
					fields = append(fields, fd.Type.Results.List...)
				}
				for _, field := range fields {
					ast.Inspect(field.Type, func(n ast.Node) bool {
						switch n := n.(type) {
						case *ast.SelectorExpr:
							return false // another package's name
						case *ast.Ident:
							if !n.IsExported() && !builtinTypes[n.Name] && !generic[n.Name] && isTypeName(files, n.Name) {
								t.Errorf("%s: %s.%s uses the unexported type %s: export it, or return a public type", fset.Position(fd.Pos()), dir, name, n.Name)
							}
						}
						return true
					})
				}
			}
		}
	}
}

// isTypeName reports whether a package's files declare name as a type.
func isTypeName(files []*ast.File, name string) bool {
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				if s.(*ast.TypeSpec).Name.Name == name {
					return true
				}
			}
		}
	}
	return false
}

// publicInternalImports is the most imports of internal packages the public packages may make
// together, each package counting each internal package it imports once (docs/architecture.md).
// Lower it when a change removes some; a change that needs more says why in review.
const publicInternalImports = 51

// TestPublicInternalImports holds the public packages' imports of internal packages to
// publicInternalImports: machinery that only the module's own code calls belongs inside, not in
// a public package that reaches into it.
func TestPublicInternalImports(t *testing.T) {
	_, pkgs := publicPackages(t)
	n := 0
	var each []string
	for dir, files := range pkgs {
		seen := map[string]bool{}
		for _, f := range files {
			for _, s := range f.Imports {
				p := strings.Trim(s.Path.Value, `"`)
				if strings.HasPrefix(p, "github.com/inferbench/inferbench/") && strings.Contains(p, "/internal/") && !seen[p] {
					seen[p] = true
				}
			}
		}
		n += len(seen)
		each = append(each, fmt.Sprintf("%s %d", dir, len(seen)))
	}
	slices.Sort(each)
	if n > publicInternalImports {
		t.Errorf("public packages import internal packages %d times, more than %d: %s", n, publicInternalImports, strings.Join(each, ", "))
	}
	if n < publicInternalImports {
		t.Logf("public packages import internal packages %d times, fewer than %d: lower publicInternalImports", n, publicInternalImports)
	}
}
