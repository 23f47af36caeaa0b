package inferbench

import (
	"go/ast"
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
	// A folder under internal/ is a top-level folder of its own (internal/monitor/gpu is in
	// internal/monitor), and so is each package of a tier folder (internal/base/finite,
	// internal/kind/exec): the layers hold between them as anywhere.
	top := func(pkg string) string {
		parts := strings.Split(pkg, "/")
		if parts[0] == "internal" && len(parts) > 2 && tiers[parts[1]] != "" {
			return strings.Join(parts[:3], "/")
		}
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
			if msg := tierBreak(pkg, dep); msg != "" {
				t.Errorf("%s imports %s: %s", pkg, dep, msg)
			}
		}
	}
}

// tiers are the folders of internal/ that group packages by where they sit, so that the folder
// layout shows the layers: base below every user, cli above run, testkit beside the tests.
var tiers = map[string]string{
	"base":    "ground-level helpers: they import no other package of the module but base's",
	"kind":    "the subject kinds",
	"stage":   "the machinery of run's stages, between engine and run",
	"cli":     "the command line and its commands, above run",
	"testkit": "support for tests: no non-test code outside testkit imports it",
}

// tierBreak says why an import between two packages of the module (paths relative to its root,
// "." the root package) breaks the tier folders' promise, or "" when it keeps it.
func tierBreak(pkg, dep string) string {
	tier := func(p string) string {
		if parts := strings.Split(p, "/"); parts[0] == "internal" && len(parts) > 2 && tiers[parts[1]] != "" {
			return parts[1]
		}
		if p == "internal/cli" {
			return "cli"
		}
		return ""
	}
	switch {
	case tier(pkg) == "base" && tier(dep) != "base":
		return "internal/base holds " + tiers["base"] + " (move the helper up, or what it needs down)"
	case tier(dep) == "testkit" && tier(pkg) != "testkit":
		return "internal/testkit holds " + tiers["testkit"] + " (import it from a _test.go file)"
	case tier(dep) == "cli" && tier(pkg) != "cli" && pkg != "." && !strings.HasPrefix(pkg, "cmd/"):
		return "internal/cli holds " + tiers["cli"] + ": only the root package and commands import it"
	}
	return ""
}

// TestPublicPackagesDocumented holds the public surface to docs/library.md: every package outside
// internal/ that a Go program can import (not a command, not a folder of tests only) has a row in
// the "Packages" table and a runnable example (a func Example... in one of its _test.go files), and
// the table names no other package. The module's root package is written `inferbench`.
func TestPublicPackagesDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("docs", "library.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Packages\n")
	if !ok {
		t.Fatal(`docs/library.md: no "## Packages" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	// | `compare`, `report` | ... |: every name in the first cell of a row.
	row := regexp.MustCompile("(?m)^\\|([^|]*`[^|]*)\\|")
	name := regexp.MustCompile("`([^`]+)`")
	documented := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		for _, n := range name.FindAllStringSubmatch(m[1], -1) {
			documented[n[1]] = true
		}
	}

	type pkg struct{ name, example string }
	pkgs := map[string]*pkg{} // by folder; a package has a name once it has a non-test file
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata" || base == "node_modules" || base == "internal") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(base, ".go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if pkgs[dir] == nil {
			pkgs[dir] = &pkg{}
		}
		p := pkgs[dir]
		if !strings.HasSuffix(base, "_test.go") {
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
			if err != nil {
				return err
			}
			p.name = f.Name.Name
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Example") && p.example == "" {
				p.example = path + ": " + fn.Name.Name
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	public := map[string]bool{}
	for _, dir := range slices.Sorted(maps.Keys(pkgs)) {
		p := pkgs[dir]
		if p.name == "" || p.name == "main" {
			continue // tests only, or a command
		}
		key := dir
		if dir == "." {
			key = "inferbench"
		}
		public[key] = true
		if !documented[key] {
			t.Errorf("docs/library.md: public package %s has no row in the Packages table (document it, or move it under internal/)", key)
		}
		if p.example == "" {
			t.Errorf("%s: public package has no runnable example (a func Example... in a _test.go file)", key)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(documented)) {
		if !public[key] {
			t.Errorf("docs/library.md: the Packages table names %s, which is not a public package of the module", key)
		}
	}
}

// TestPublicAPINoInternalTypes holds the public packages to their promise: no exported
// declaration of a package outside internal/ (a function's or exported method's signature, an
// exported type with its exported fields and methods, an exported variable's or constant's declared
// type) names a type of an internal package, which a Go program could neither name nor build. It
// reads the source (go/parser): a selector pkg.Name in such a declaration is flagged when the
// file imports pkg from a path with /internal/ in it. A variable's type inferred from its value
// is not seen.
func TestPublicAPINoInternalTypes(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata" || base == "node_modules" || base == "internal") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(base, ".go") || strings.HasSuffix(base, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		internal := map[string]string{} // the file's name of each internal package it imports
		for _, s := range f.Imports {
			p, _ := strconv.Unquote(s.Path.Value)
			if !strings.Contains(p, "/internal/") {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if s.Name != nil {
				name = s.Name.Name
			}
			internal[name] = p
		}
		if len(internal) == 0 {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			pkg = "inferbench"
		}
		check := func(decl string, n ast.Node) {
			for _, ref := range internalRefs(n, internal) {
				t.Errorf("%s: %s.%s uses %s, a type of an internal package: a Go program cannot name it (give it a public type, or unexport %s)", path, pkg, decl, ref, decl)
			}
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if !decl.Name.IsExported() {
					continue
				}
				name := decl.Name.Name
				if decl.Recv != nil {
					recv := decl.Recv.List[0].Type
					for {
						switch r := recv.(type) {
						case *ast.StarExpr:
							recv = r.X
							continue
						case *ast.IndexExpr:
							recv = r.X
							continue
						case *ast.IndexListExpr:
							recv = r.X
							continue
						}
						break
					}
					id, ok := recv.(*ast.Ident)
					if !ok || !id.IsExported() {
						continue // a method of an unexported type
					}
					name = id.Name + "." + name
				}
				check(name, decl.Type)
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						if s.TypeParams != nil {
							check(s.Name.Name, s.TypeParams)
						}
						var members *ast.FieldList // named as Type.Field, Type.Method
						switch st := s.Type.(type) {
						case *ast.StructType:
							members = st.Fields
						case *ast.InterfaceType:
							members = st.Methods
						default:
							check(s.Name.Name, s.Type)
							continue
						}
						for _, m := range members.List {
							if len(m.Names) == 0 {
								check(s.Name.Name, m.Type) // embedded
							}
							for _, n := range m.Names {
								if n.IsExported() {
									check(s.Name.Name+"."+n.Name, m.Type)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Type != nil {
								check(n.Name, s.Type)
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// internalRefs returns the selectors pkg.Name in n whose pkg is one of internal (a file's names of
// the internal packages it imports), outside unexported struct fields and interface methods.
func internalRefs(n ast.Node, internal map[string]string) []string {
	var refs []string
	var visit func(ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				if p, ok := internal[id.Name]; ok {
					refs = append(refs, id.Name+"."+n.Sel.Name+" ("+p+")")
				}
			}
			return false
		case *ast.StructType, *ast.InterfaceType:
			var fields *ast.FieldList
			if st, ok := n.(*ast.StructType); ok {
				fields = st.Fields
			} else {
				fields = n.(*ast.InterfaceType).Methods
			}
			for _, f := range fields.List {
				exported := len(f.Names) == 0 // embedded: promoted
				for _, name := range f.Names {
					exported = exported || name.IsExported()
				}
				if exported {
					ast.Inspect(f.Type, visit)
				}
			}
			return false
		}
		return true
	}
	ast.Inspect(n, visit)
	return refs
}

// TestOneWriterOfRunFolders: a run folder is made (recovery.NewDir) and run.json written
// (result.Save) by the run package's stages alone, so that every run, a run against a git ref
// included (run.Paired) and a group's merged run (run.Made), gets the same folder, journal, log,
// store record and reports.
func TestOneWriterOfRunFolders(t *testing.T) {
	allowed := map[string]bool{"run": true}
	call := regexp.MustCompile(`\b(recovery\.NewDir|result\.Save)\(`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if m := call.Find(src); m != nil && !allowed[filepath.Dir(path)] && !strings.HasPrefix(path, "result"+string(filepath.Separator)) && !strings.HasPrefix(path, filepath.Join("internal", "stage", "recovery")) {
			t.Errorf("%s calls %s: only the run package's stages write run folders (run.Paired for a run beside another side)", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestABIsARun: the interleaved engine (package ab's Run) is called only where a run.Paired
// measures a scenario (internal/cli/ab/pairrun.go), so that every A/B, `inferbench ab A B` and
// `run --baseline-ref REF` alike, is a stage of run.Run, whose folder, journal, store record and
// verdict it gets (TestOneWriterOfRunFolders), and no command runs the engine on its own.
func TestABIsARun(t *testing.T) {
	abDir := filepath.Join("internal", "cli", "ab")
	engine := filepath.Join(abDir, "pairrun.go")
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == engine {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		inAB := filepath.Dir(path) == abDir
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				if inAB && fn.Name == "Run" {
					t.Errorf("%s calls Run: package ab's engine runs only in a run.Paired's Measure (pairrun.go), so that the A/B is a run.Run", path)
				}
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); ok && x.Name == "ab" && fn.Sel.Name == "Run" {
					t.Errorf("%s calls ab.Run: an A/B is a run.Run with a run.Paired (ab.Compare, ab.RefRun)", path)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Lengths a newcomer can hold: no function or method of a non-test Go file runs past
// maxFunctionLines (from its func keyword to its closing brace), and no non-test Go file, nor a
// Python file of the worker or the Python package, runs past maxFileLines.
const (
	maxFunctionLines = 100
	maxFileLines     = 600
)

// pythonRoots are the folders whose Python files TestFileLength holds to maxFileLines.
var pythonRoots = []string{"internal/workers/python/inferbench_worker", "python/src/inferbench"}

// TestFunctionLength holds every function of the module's non-test Go files, internal/testkit
// included (it is support code a reader has to follow like any other), to maxFunctionLines, and
// names each one that is longer by file:line and length. Generated files ("Code generated ...
// DO NOT EDIT.") are not held.
func TestFunctionLength(t *testing.T) {
	err := walkSource(".", ".go", func(path string) error {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Type.Func), fset.Position(fn.Body.Rbrace)
			if n := end.Line - start.Line + 1; n > maxFunctionLines {
				t.Errorf("%s:%d: %s is %d lines long (at most %d): split it by what its parts do", path, start.Line, fn.Name.Name, n, maxFunctionLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFileLength holds every non-test Go file of the module and every non-test Python file
// under pythonRoots to maxFileLines, and names each one that is longer with its length.
func TestFileLength(t *testing.T) {
	check := func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := strings.Count(string(b), "\n"); n > maxFileLines {
			t.Errorf("%s:1: %d lines long (at most %d): split it in two by what each part does", path, n, maxFileLines)
		}
		return nil
	}
	if err := walkSource(".", ".go", check); err != nil {
		t.Fatal(err)
	}
	for _, root := range pythonRoots {
		if err := walkSource(root, ".py", check); err != nil {
			t.Fatal(err)
		}
	}
}

// walkSource calls check on each non-test file below root whose name ends in ext, skipping
// hidden folders (.venv, .git), underscore folders, testdata and node_modules, as go list does.
// A Go test file ends in _test.go; a Python one starts with test_ or ends in _test.py.
func walkSource(root, ext string, check func(path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		base := strings.TrimSuffix(name, ext)
		if base == name || strings.HasSuffix(base, "_test") || (ext == ".py" && strings.HasPrefix(base, "test_")) {
			return nil
		}
		return check(filepath.ToSlash(path))
	})
}
