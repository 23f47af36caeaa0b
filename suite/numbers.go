package suite

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// checkNumbers refuses, anywhere in a definition, a number that no key can mean: NaN and the
// infinities (`max_error_rate: .nan` let every iteration fail with status ok: every comparison
// with NaN is false), written as YAML's .nan and .inf or as a literal too large for a float
// (1e400). Each is an error at its line and column.
func checkNumbers(path string, root ast.Node) Errors {
	var errs Errors
	ast.Walk(visitFunc(func(n ast.Node) {
		var v float64
		switch x := n.(type) {
		case *ast.NanNode:
			v = math.NaN()
		case *ast.InfinityNode:
			v = x.Value
		case *ast.FloatNode:
			v = x.Value
		default:
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			errs = append(errs, at(path, n, fmt.Sprintf("%s is not a finite number", n.GetToken().Value), "a definition's numbers are finite"))
		}
	}), root)
	return errs
}

// checkDecoded refuses the values of v, decoded from node, that no definition can mean: a
// negative duration (timeout, min_time, max_time, a server's ready timeout) and a float that is
// not finite. Each error names the key and its line in path. v's keys are its fields' yaml tags.
func checkDecoded(path string, node ast.Node, v reflect.Value, key string) Errors {
	switch {
	case !v.IsValid():
		return nil
	case v.Type() == reflect.TypeFor[time.Duration]():
		if d := time.Duration(v.Int()); d < 0 {
			return Errors{at(path, node, fmt.Sprintf("%s: %v: a duration cannot be negative", key, d), "")}
		}
		return nil
	}
	child := func(n ast.Node) ast.Node {
		if n == nil {
			return node // a key not written out (a default): name the enclosing one
		}
		return n
	}
	var errs Errors
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return checkDecoded(path, node, v.Elem(), key)
		}
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			errs = append(errs, at(path, node, fmt.Sprintf("%s: %v is not a finite number", key, f), ""))
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			errs = append(errs, checkDecoded(path, child(valueNode(node, name)), v.Field(i), name)...)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return nil
		}
		for it := v.MapRange(); it.Next(); {
			k := it.Key().String()
			errs = append(errs, checkDecoded(path, child(valueNode(node, k)), it.Value(), k)...)
		}
	case reflect.Slice, reflect.Array:
		seq, _ := node.(*ast.SequenceNode)
		for i := range v.Len() {
			var n ast.Node
			if seq != nil && i < len(seq.Values) {
				n = seq.Values[i]
			}
			errs = append(errs, checkDecoded(path, child(n), v.Index(i), key+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return errs
}
