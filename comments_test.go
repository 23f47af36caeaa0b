package inferbench

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCommentsStandAlone holds the module's non-test Go files to comments a reader can follow
// without the project's history: each exported declaration (a function, a method of an exported
// type, a type, a variable or a constant) of a package other than main has a doc comment right
// above it that starts with its name (after "A", "An" or "The"), as go doc shows it, apart from
// the standard interfaces' methods (standardMethods) and the members of a documented block of
// constants or variables; a documented field of an exported struct starts with its name too,
// so a comment cannot drift onto the field below its own; and no comment sends the reader to an
// issue or a seed by number ("issue 27", "seed 004"): it says the reason instead.
func TestCommentsStandAlone(t *testing.T) {
	history := regexp.MustCompile(`(?i)\bissues?\s*#?\d+|\bseeds?\s+0\d+`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata" || base == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(base, ".go") || strings.HasSuffix(base, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, g := range f.Comments {
			if m := history.FindString(g.Text()); m != "" {
				t.Errorf("%s: the comment names %q: say the reason, which a reader can check, instead of a number in the project's history", fset.Position(g.Pos()), m)
			}
		}
		if f.Name.Name == "main" {
			return nil
		}
		for _, bad := range undocumented(f) {
			t.Errorf("%s: %s", fset.Position(bad.pos), bad.why)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

type badDoc struct {
	pos token.Pos
	why string
}

// undocumented returns the exported declarations of f whose doc comment is missing, or does not
// start with the declaration's name (a misplaced comment, or one written for another name).
func undocumented(f *ast.File) []badDoc {
	var bad []badDoc
	check := func(pos token.Pos, kind string, doc *ast.CommentGroup, names ...string) {
		if doc == nil {
			bad = append(bad, badDoc{pos, kind + " " + names[0] + " has no doc comment: write one above it that starts with its name"})
			return
		}
		if !startsWithName(doc.Text(), names) {
			bad = append(bad, badDoc{doc.Pos(), kind + " " + strings.Join(names, ", ") + ": its doc comment starts " + firstWords(doc.Text()) + ", not with its name (a comment that belongs elsewhere, or one that does not say what it documents)"})
		}
	}
	fields := func(typ string, st *ast.StructType) {
		for _, fl := range st.Fields.List {
			var names []string
			for _, n := range fl.Names {
				if n.IsExported() {
					names = append(names, n.Name)
				}
			}
			if len(names) == 0 || fl.Doc == nil {
				continue // an undocumented field may be plain from its type; a line comment is fine
			}
			if !startsWithName(fl.Doc.Text(), names) {
				bad = append(bad, badDoc{fl.Doc.Pos(), "field " + typ + "." + strings.Join(names, ", ") + ": its doc comment starts " + firstWords(fl.Doc.Text()) + ", not with its name (a comment that belongs to another field, or one that does not say what it documents)"})
			}
		}
	}
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if !decl.Name.IsExported() {
				continue
			}
			kind := "func"
			if decl.Recv != nil {
				recv := receiverName(decl.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue // a method of an unexported type is not in go doc
				}
				kind = "method " + recv + "."
				if decl.Doc == nil && standardMethods[decl.Name.Name] {
					continue // documented by the standard interface it implements
				}
			}
			if kind == "func" {
				check(decl.Pos(), kind, decl.Doc, decl.Name.Name)
			} else {
				check(decl.Pos(), strings.TrimSuffix(kind, "."), decl.Doc, decl.Name.Name)
			}
		case *ast.GenDecl:
			if decl.Tok == token.IMPORT {
				continue
			}
			grouped := decl.Lparen.IsValid()
			for _, spec := range decl.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					doc := s.Doc
					if doc == nil && !grouped {
						doc = decl.Doc
					}
					check(s.Pos(), "type", doc, s.Name.Name)
					if st, ok := s.Type.(*ast.StructType); ok {
						fields(s.Name.Name, st)
					}
				case *ast.ValueSpec:
					var names []string
					for _, n := range s.Names {
						if n.IsExported() {
							names = append(names, n.Name)
						}
					}
					if len(names) == 0 {
						continue
					}
					kind := strings.ToLower(decl.Tok.String())
					switch {
					case s.Doc != nil:
						check(s.Pos(), kind, s.Doc, names...)
					case grouped && (decl.Doc != nil || s.Comment != nil):
						// one comment on the group, or a line comment, documents the members of a
						// block of constants or variables, as go doc shows them
					case grouped:
						check(s.Pos(), kind, nil, names...)
					default:
						check(s.Pos(), kind, decl.Doc, names...)
					}
				}
			}
		}
	}
	return bad
}

// standardMethods are the methods of the standard library's small interfaces (error, fmt.Stringer,
// io.Writer, io.Reader, io.Closer, the JSON and text codecs, http.Handler, slog.Handler): their
// interface says what they do, so an implementation needs no doc comment of its own. One that has
// a comment is held to it like any other.
var standardMethods = map[string]bool{
	"Error": true, "Unwrap": true, "String": true, "Write": true, "Read": true, "Close": true,
	"MarshalJSON": true, "UnmarshalJSON": true, "MarshalText": true, "UnmarshalText": true,
	"ServeHTTP": true, "Enabled": true, "Handle": true, "WithAttrs": true, "WithGroup": true,
}

// startsWithName reports whether a doc comment's first word, after an article, is one of names.
func startsWithName(text string, names []string) bool {
	words := strings.Fields(text)
	if len(words) > 1 && (words[0] == "A" || words[0] == "An" || words[0] == "The") {
		words = words[1:]
	}
	if len(words) == 0 {
		return false
	}
	first := strings.TrimRight(words[0], ".,:;")
	for _, n := range names {
		if first == n {
			return true
		}
	}
	return false
}

// firstWords quotes the first few words of a comment, for a message.
func firstWords(text string) string {
	words := strings.Fields(text)
	if len(words) > 4 {
		words = append(words[:4], "...")
	}
	return `"` + strings.Join(words, " ") + `"`
}

// receiverName is the name of a method receiver's type, without pointer or type parameters.
func receiverName(x ast.Expr) string {
	for {
		switch r := x.(type) {
		case *ast.StarExpr:
			x = r.X
		case *ast.IndexExpr:
			x = r.X
		case *ast.IndexListExpr:
			x = r.X
		case *ast.Ident:
			return r.Name
		default:
			return ""
		}
	}
}
