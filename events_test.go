package inferbench

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// eventsPage is the one file that declares the events a run can be observed by.
const eventsPage = "run/observer.go"

// events returns the events eventsPage declares: each one-method interface's method, by name,
// with its signature (signature).
func events(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), eventsPage, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	ev := map[string]string{}
	ast.Inspect(f, func(nd ast.Node) bool {
		if ts, ok := nd.(*ast.TypeSpec); ok {
			if it, ok := ts.Type.(*ast.InterfaceType); ok && len(it.Methods.List) == 1 && len(it.Methods.List[0].Names) == 1 {
				m := it.Methods.List[0]
				ev[m.Names[0].Name] = signature(m.Type.(*ast.FuncType))
			}
		}
		return true
	})
	if len(ev) == 0 {
		t.Fatalf("%s declares no event", eventsPage)
	}
	return ev
}

// qualifier matches a package qualifier, dropped from signatures so that run's *Verdict and
// another package's *run.Verdict read the same.
var qualifier = regexp.MustCompile(`\b[a-z][A-Za-z0-9_]*\.`)

// signature is a function type's parameter and result types, without names or qualifiers.
func signature(ft *ast.FuncType) string {
	list := func(fl *ast.FieldList) string {
		if fl == nil {
			return ""
		}
		var types []string
		for _, f := range fl.List {
			var b bytes.Buffer
			printer.Fprint(&b, token.NewFileSet(), f.Type)
			for range max(len(f.Names), 1) {
				types = append(types, qualifier.ReplaceAllString(b.String(), ""))
			}
		}
		return strings.Join(types, ", ")
	}
	return "(" + list(ft.Params) + ") (" + list(ft.Results) + ")"
}

// notice reports whether a method reads as an event: named in the past tense (something happened)
// and returning nothing or only an error.
func notice(name string, ft *ast.FuncType) bool {
	if !strings.HasSuffix(name, "ed") {
		return false
	}
	r := signature(&ast.FuncType{Results: ft.Results})
	return r == "() ()" || r == "() (error)"
}

// TestEventsOnOnePage: every event a run can be observed by is declared in run/observer.go, and
// nowhere else: no other file declares an interface with an event's method or another
// one-method interface of a past-tense method returning nothing or an error (an event under
// another name); every method and
// hook elsewhere named for an event has the event's signature (a type whose method merely shares
// an event's name with another signature would seem to observe it and would not); and the
// engine's hooks are each one of the page's events.
func TestEventsOnOnePage(t *testing.T) {
	ev := events(t)
	fset := token.NewFileSet()
	hooks := 0 // engine.Hooks' fields
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || filepath.ToSlash(path) == eventsPage {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		check := func(pos token.Pos, what, name string, ft *ast.FuncType) {
			if want, ok := ev[name]; ok && signature(ft) != want {
				t.Errorf("%s: %s %s%s is named for the event %s%s (%s): give it the event's signature or another name", fset.Position(pos), what, name, signature(ft), name, want, eventsPage)
			}
		}
		ast.Inspect(f, func(nd ast.Node) bool {
			switch nd := nd.(type) {
			case *ast.InterfaceType:
				for _, m := range nd.Methods.List {
					if len(m.Names) != 1 {
						continue
					}
					name := m.Names[0].Name
					_, isEvent := ev[name]
					if isEvent || len(nd.Methods.List) == 1 && notice(name, m.Type.(*ast.FuncType)) {
						t.Errorf("%s: an interface of %s declares an event outside %s: declare it there", fset.Position(m.Pos()), name, eventsPage)
					}
				}
			case *ast.FuncDecl:
				if nd.Recv != nil {
					check(nd.Pos(), "method", nd.Name.Name, nd.Type)
				}
			case *ast.StructType:
				for _, fld := range nd.Fields.List {
					if ft, ok := fld.Type.(*ast.FuncType); ok {
						for _, n := range fld.Names {
							check(n.Pos(), "hook", n.Name, ft)
						}
					}
				}
			}
			return true
		})
		if filepath.ToSlash(filepath.Dir(path)) == "internal/engine" {
			ast.Inspect(f, func(nd ast.Node) bool {
				if ts, ok := nd.(*ast.TypeSpec); ok && ts.Name.Name == "Hooks" {
					for _, fld := range ts.Type.(*ast.StructType).Fields.List {
						for _, n := range fld.Names {
							hooks++
							if _, ok := ev[n.Name]; !ok {
								t.Errorf("%s: engine.Hooks.%s is no event of %s: declare it there", fset.Position(n.Pos()), n.Name, eventsPage)
							}
						}
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if hooks == 0 {
		t.Error("internal/engine declares no Hooks with the engine's events")
	}
}

// TestEventNamesMatchMethods: each event a run can be observed by is a one-method interface named
// for its method (RunStarter.RunStarted, CallCounter.CallCounted, callHooker.CallHook), so a reader
// who sees the method knows the event, and a type that merely has a method of that name is
// looked at twice.
func TestEventNamesMatchMethods(t *testing.T) {
	stem := func(s string) string {
		s = strings.ToLower(s)
		for _, suf := range []string{"er", "ed"} {
			if strings.HasSuffix(s, suf) {
				return strings.TrimSuffix(s, suf)
			}
		}
		return s
	}
	f, err := parser.ParseFile(token.NewFileSet(), eventsPage, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(nd ast.Node) bool {
		ts, ok := nd.(*ast.TypeSpec)
		if !ok {
			return true
		}
		it, ok := ts.Type.(*ast.InterfaceType)
		if !ok || len(it.Methods.List) != 1 || len(it.Methods.List[0].Names) != 1 {
			return true
		}
		n++
		if m := it.Methods.List[0].Names[0].Name; stem(m) != stem(ts.Name.Name) {
			t.Errorf("%s: event %s has method %s: name the interface for its method (or the method for its event)", eventsPage, ts.Name.Name, m)
		}
		return true
	})
	if n == 0 {
		t.Errorf("%s declares no event", eventsPage)
	}
}
