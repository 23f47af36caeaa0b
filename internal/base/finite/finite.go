// Package finite writes JSON as encoding/json does, except that the values encoding/json refuses
// (NaN, +Inf and -Inf in a float) are written as null instead of failing the whole document.
// Every JSON document inferbench writes (run.json, compare --format json, the API, the summaries
// on stdout) goes through it, so a confidence interval that is infinite (five samples) or a
// p-value that is NaN cannot turn an ordinary comparison into an error (docs/results.md).
//
// A document with only finite values is encoded once, by encoding/json, and comes out byte for
// byte as encoding/json writes it. Only when encoding/json refuses a value is the document
// encoded again, from a copy in which each non-finite float holds a sentinel, a huge finite value
// that the document holds nowhere else, which is then written as null.
package finite

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
)

// Marshal is json.Marshal with non-finite floats written as null.
func Marshal(v any) ([]byte, error) {
	return MarshalIndent(v, "", "")
}

// MarshalIndent is json.MarshalIndent with non-finite floats written as null (no indentation
// when prefix and indent are both empty).
func MarshalIndent(v any, prefix, indent string) ([]byte, error) {
	// The common case, every value finite: encoding/json's own call, without the Encoder's
	// buffer and copy (run.json's writer calls this per scenario and per summary).
	var out []byte
	var err error
	if prefix == "" && indent == "" {
		out, err = json.Marshal(v)
	} else {
		out, err = json.MarshalIndent(v, prefix, indent)
	}
	if !Refused(err) {
		return out, err
	}
	var b bytes.Buffer
	e := NewEncoder(&b)
	e.SetIndent(prefix, indent)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Encoder is json.Encoder with non-finite floats written as null. Each Encode writes its whole
// document at once or nothing.
type Encoder struct {
	w              io.Writer
	prefix, indent string
}

// NewEncoder returns an Encoder that writes to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// SetIndent is json.Encoder's SetIndent.
func (e *Encoder) SetIndent(prefix, indent string) { e.prefix, e.indent = prefix, indent }

// Encode writes v as JSON followed by a newline.
func (e *Encoder) Encode(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent(e.prefix, e.indent)
	err := enc.Encode(v)
	if Refused(err) {
		b.Reset()
		w := newWalker(v)
		if err = enc.Encode(w.sentinels(v)); err == nil {
			out := nulls(b.Bytes(), w.texts())
			b.Reset()
			b.Write(out)
		}
	}
	if err != nil {
		return err
	}
	_, err = e.w.Write(b.Bytes())
	return err
}

// Refused reports whether err is encoding/json refusing a value (a NaN or an infinity), also
// when a MarshalJSON method returned it.
func Refused(err error) bool {
	if err == nil {
		return false
	}
	var ue *json.UnsupportedValueError
	return errors.As(err, &ue)
}

// walker replaces the non-finite floats of a copy by sentinels: the largest finite value of each
// size that the value holds nowhere (the next one down when it does), so that a real figure is
// never taken for one.
type walker struct {
	s64 float64
	s32 float32
}

func newWalker(v any) *walker {
	seen := map[float64]bool{}
	if rv := reflect.ValueOf(v); rv.IsValid() {
		huge(rv, seen, 0)
	}
	w := &walker{s64: math.MaxFloat64, s32: math.MaxFloat32}
	for seen[w.s64] {
		w.s64 = math.Nextafter(w.s64, 0)
	}
	for seen[float64(w.s32)] {
		w.s32 = math.Nextafter32(w.s32, 0)
	}
	return w
}

// texts are the sentinels as encoding/json writes them.
func (w *walker) texts() [][]byte {
	a, _ := json.Marshal(w.s64)
	b, _ := json.Marshal(w.s32)
	return [][]byte{a, b}
}

// huge records the floats of v beyond 1e38 in magnitude, where the sentinels are.
func huge(v reflect.Value, seen map[float64]bool, depth int) {
	if depth > maxDepth {
		return
	}
	switch v.Kind() {
	case reflect.Float64, reflect.Float32:
		if f := v.Float(); math.Abs(f) >= 1e38 {
			seen[f] = true
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			huge(v.Elem(), seen, depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				huge(v.Field(i), seen, depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			huge(v.Index(i), seen, depth+1)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			huge(it.Value(), seen, depth+1)
		}
	}
}

// sentinels returns v, or a copy of v in which every non-finite float reachable through exported
// fields, pointers, slices, arrays, maps and interfaces holds the sentinel of its size. Values
// that hold no such float are shared with v, not copied; v itself is never changed.
func (w *walker) sentinels(v any) any {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return v
	}
	c, changed := w.clean(rv, 0)
	if !changed {
		return v
	}
	return c.Interface()
}

// maxDepth bounds the walk: encoding/json fails on cycles anyway.
const maxDepth = 1000

// clean returns v with its non-finite floats replaced, and whether anything was.
func (w *walker) clean(v reflect.Value, depth int) (reflect.Value, bool) {
	if depth > maxDepth {
		return v, false
	}
	t := v.Type()
	switch v.Kind() {
	case reflect.Float64, reflect.Float32:
		f := v.Float()
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			return v, false
		}
		n := reflect.New(t).Elem()
		if v.Kind() == reflect.Float32 {
			n.SetFloat(float64(w.s32))
		} else {
			n.SetFloat(w.s64)
		}
		return n, true
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return v, false
		}
		e, changed := w.clean(v.Elem(), depth+1)
		if !changed {
			return v, false
		}
		if v.Kind() == reflect.Pointer {
			p := reflect.New(t.Elem())
			p.Elem().Set(e)
			return p, true
		}
		n := reflect.New(t).Elem()
		n.Set(e)
		return n, true
	case reflect.Struct:
		return w.parts(v, v.NumField(), reflect.Value.Field, depth)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return v, false
		}
		return w.parts(v, v.Len(), reflect.Value.Index, depth)
	case reflect.Map:
		if v.IsNil() {
			return v, false
		}
		var n reflect.Value
		for it := v.MapRange(); it.Next(); {
			e, changed := w.clean(it.Value(), depth+1)
			if !changed {
				continue
			}
			if !n.IsValid() {
				n = reflect.MakeMapWithSize(t, v.Len())
				for it2 := v.MapRange(); it2.Next(); {
					n.SetMapIndex(it2.Key(), it2.Value())
				}
			}
			n.SetMapIndex(it.Key(), e)
		}
		if !n.IsValid() {
			return v, false
		}
		return n, true
	}
	return v, false
}

// parts cleans the count parts of a struct (its exported fields), slice or array, part(x, i)
// being part i of x, and copies v the first time one changes: a value with no non-finite float
// in it is shared, not copied.
func (w *walker) parts(v reflect.Value, count int, part func(reflect.Value, int) reflect.Value, depth int) (reflect.Value, bool) {
	var n reflect.Value
	for i := range count {
		if v.Kind() == reflect.Struct && !v.Type().Field(i).IsExported() {
			continue
		}
		e, changed := w.clean(part(v, i), depth+1)
		if !changed {
			continue
		}
		if !n.IsValid() {
			n = copyOf(v)
		}
		part(n, i).Set(e)
	}
	if !n.IsValid() {
		return v, false
	}
	return n, true
}

// copyOf returns a copy of a struct, array or slice (with a backing array of its own) that can
// be set.
func copyOf(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Slice {
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(n, v)
		return n
	}
	n := reflect.New(v.Type()).Elem()
	n.Set(v)
	return n
}

// nulls returns doc with every sentinel number (outside strings) written as null.
func nulls(doc []byte, sentinels [][]byte) []byte {
	out := make([]byte, 0, len(doc))
	inString, escaped := false, false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			out = append(out, c)
			continue
		}
		if c == '"' {
			inString = true
			out = append(out, c)
			continue
		}
		if n := sentinelAt(doc, i, sentinels); n > 0 {
			out = append(out, "null"...)
			i += n - 1
			continue
		}
		out = append(out, c)
	}
	return out
}

// sentinelAt returns the length of the sentinel number that starts at doc[i], 0 when none does.
func sentinelAt(doc []byte, i int, sentinels [][]byte) int {
	if i > 0 && isNumberByte(doc[i-1]) {
		return 0
	}
	for _, s := range sentinels {
		if bytes.HasPrefix(doc[i:], s) && (i+len(s) == len(doc) || !isNumberByte(doc[i+len(s)])) {
			return len(s)
		}
	}
	return 0
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'
}
