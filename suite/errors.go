package suite

import (
	"errors"
	"fmt"
	"github.com/inferbench/inferbench/internal/base/nearest"
	"reflect"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// This file holds Error and Errors, and how a problem becomes one: at a node's position (at), from
// a go-yaml error (yamlError, yamlErrorIn), with a typo's likely fix (hint).

// Error is a problem in a definition file, at a position when one is known.
type Error struct {
	File      string
	Line, Col int
	Msg       string
	Hint      string // e.g. `did you mean "batch_size"?`
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return b.String()
}

// Errors is every problem found in a set of definitions.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find each Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

func at(path string, n ast.Node, msg, hint string) *Error {
	e := &Error{File: path, Msg: msg, Hint: hint}
	if n != nil && n.GetToken() != nil {
		e.Line, e.Col = n.GetToken().Position.Line, n.GetToken().Position.Column
	}
	return e
}

func hint(s string, candidates []string) string {
	if s == "" {
		return ""
	}
	if c := nearest.Name(s, candidates); c != "" {
		return fmt.Sprintf("did you mean %q?", c)
	}
	return ""
}

// yamlErrorIn is yamlError naming the key whose value is wrong, found in root by position.
func yamlErrorIn(path string, root ast.Node, err error) *Error {
	e := yamlError(path, err)
	var te *yaml.TypeError
	if !errors.As(err, &te) || te.Token == nil {
		return e
	}
	ast.Walk(visitFunc(func(n ast.Node) {
		kv, ok := n.(*ast.MappingValueNode)
		if !ok || kv.Value == nil || kv.Value.GetToken() == nil {
			return
		}
		if p := kv.Value.GetToken().Position; p.Line == e.Line && p.Column == e.Col {
			e.Msg = fmt.Sprintf("%s: want %s, got %s", kv.Key.String(), typeName(te.DstType), typeName(te.SrcType))
		}
	}), root)
	return e
}

// yamlError turns a go-yaml error into an Error with the file's position.
func yamlError(path string, err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		msg := ye.GetMessage()
		if te, ok := ye.(*yaml.TypeError); ok && te.StructFieldName != nil {
			msg = fmt.Sprintf("%s: want %s, got %s", lastPart(*te.StructFieldName), typeName(te.DstType), typeName(te.SrcType))
		}
		return &Error{File: path, Line: ye.GetToken().Position.Line, Col: ye.GetToken().Position.Column, Msg: msg}
	}
	return &Error{File: path, Msg: err.Error()}
}

func lastPart(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func typeName(t reflect.Type) string {
	if t == nil {
		return "nothing"
	}
	if t == reflect.TypeFor[time.Duration]() { // before its kind, int64
		return "a duration like 2s"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return t.String()
}
