package suite

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// This file holds the ${VAR} and ${VAR:-default} expansion of a definition's string values.

// expandEnv replaces ${VAR} and ${VAR:-default} in every string scalar, in place.
func expandEnv(path string, root ast.Node, env func(string) (string, bool)) Errors {
	var errs Errors
	added := 0 // bytes the expansions added, bounded by MaxFileSize
	ast.Walk(visitFunc(func(n ast.Node) {
		var s *ast.StringNode
		switch v := n.(type) {
		case *ast.StringNode:
			s = v
		case *ast.LiteralNode:
			s = v.Value
		}
		if s == nil || !strings.Contains(s.Value, "${") {
			return
		}
		out, err := expandEnvVars(s.Value, env)
		if err != nil {
			errs = append(errs, at(path, n, err.Error(), ""))
			return
		}
		if added += len(out) - len(s.Value); added > maxFileSize {
			if len(errs) == 0 || errs[len(errs)-1].Msg != errExpansions {
				errs = append(errs, at(path, n, errExpansions, ""))
			}
			return
		}
		s.Value = out
	}), root)
	return errs
}

const errExpansions = "the ${VAR} expansions of this file add more than MaxFileSize bytes"

type visitFunc func(ast.Node)

func (f visitFunc) Visit(n ast.Node) ast.Visitor { f(n); return f }

// expandEnvVars expands ${VAR} and ${VAR:-default} in s. An unset variable without a default is an
// error, and so is a value over MaxValueSize bytes once expanded; "$$" stands for a literal "$".
func expandEnvVars(s string, env func(string) (string, bool)) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if b.Len() > maxValueSize {
			return "", fmt.Errorf("a value is over %d bytes after ${VAR} expansion (MaxValueSize)", maxValueSize)
		}
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			b.WriteByte('$')
			i++
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated ${ in %q", s)
			}
			expr := s[i+2 : i+end]
			name, def, hasDef := strings.Cut(expr, ":-")
			if v, ok := env(name); ok && (v != "" || !hasDef) {
				b.WriteString(v)
			} else if hasDef {
				b.WriteString(def)
			} else {
				return "", fmt.Errorf("environment variable %s is not set (give a default with ${%s:-value})", name, name)
			}
			i += end
		default:
			b.WriteByte(s[i])
		}
	}
	if b.Len() > maxValueSize {
		return "", fmt.Errorf("a value is over %d bytes after ${VAR} expansion (MaxValueSize)", maxValueSize)
	}
	return b.String(), nil
}
