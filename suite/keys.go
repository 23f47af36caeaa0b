package suite

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// This file holds strict decoding (checkKeys: a key a struct has no field for is an error with a
// hint) and the lookups in a YAML tree that give errors their positions.

// checkKeys reports every mapping key under node that t (a struct) has no field for, with a hint.
func checkKeys(path string, node ast.Node, t reflect.Type) Errors {
	return checkKeysExcept(path, node, t, "")
}

func checkKeysExcept(path string, node ast.Node, t reflect.Type, allowed string) Errors {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := node.(*ast.MappingNode)
		if !ok || t == reflect.TypeFor[yaml.MapSlice]() {
			return nil // a type error, reported by the decoder with its position
		}
		fields := yamlFields(t)
		var errs Errors
		for _, kv := range m.Values {
			key := kv.Key.String()
			if key == allowed {
				continue
			}
			ft, ok := fields[key]
			if !ok {
				names := slices.Sorted(maps.Keys(fields))
				h := hint(key, names)
				if h == "" && t == reflect.TypeFor[definition]() {
					h = `parameters go under "params:" or "matrix:"`
				}
				errs = append(errs, at(path, kv.Key, fmt.Sprintf("unknown key %q", key), h))
				continue
			}
			errs = append(errs, checkKeys(path, kv.Value, ft)...)
		}
		return errs
	case reflect.Slice:
		seq, ok := node.(*ast.SequenceNode)
		if !ok {
			return nil
		}
		var errs Errors
		for _, v := range seq.Values {
			errs = append(errs, checkKeys(path, v, t.Elem())...)
		}
		return errs
	}
	return nil
}

func yamlFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields
}

// valueNode returns the value of key in a mapping node, or nil.
func valueNode(node ast.Node, key string) ast.Node {
	m, ok := node.(*ast.MappingNode)
	if !ok {
		return nil
	}
	for _, kv := range m.Values {
		if k := kv.Key.String(); k == key || strings.Trim(k, `"'`) == key {
			return kv.Value
		}
	}
	return nil
}

// seqItem returns the i-th item of a sequence node, else the node itself.
func seqItem(node ast.Node, i int) ast.Node {
	if sq, ok := node.(*ast.SequenceNode); ok && i < len(sq.Values) {
		return sq.Values[i]
	}
	return node
}

// startOf returns the node where a mapping starts (its first key), for positions.
func startOf(n ast.Node) ast.Node {
	if m, ok := n.(*ast.MappingNode); ok && len(m.Values) > 0 {
		return m.Values[0].Key
	}
	return n
}
