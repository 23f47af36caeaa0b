package inferbench

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestEventNamesMatchMethods: each event a run can be observed by is a one-method interface named
// for its method (RunStarter.RunStarted, CallCounter.CallCounted, CallHooker.CallHook), so a reader
// who sees the method knows the event, and a type that merely has a method of that name is
// looked at twice.
func TestEventNamesMatchMethods(t *testing.T) {
	stem := func(s string) string {
		for _, suf := range []string{"er", "ed"} {
			if strings.HasSuffix(s, suf) {
				return strings.TrimSuffix(s, suf)
			}
		}
		return s
	}
	for _, path := range []string{"run/observer.go", "internal/engine/observer.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
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
				t.Errorf("%s: event %s has method %s: name the interface for its method (or the method for its event)", path, ts.Name.Name, m)
			}
			return true
		})
		if n == 0 {
			t.Errorf("%s declares no event", path)
		}
	}
}
