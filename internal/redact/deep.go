package redact

import (
	"encoding/json"
	"reflect"
)

// Deep masks, in place, every string held anywhere in the value v points to: the fields of
// structs, the values of maps, the elements of slices and arrays, what interfaces and pointers
// hold, and the strings inside raw JSON (json.RawMessage). It is what makes "a value that is a
// secret is masked in the whole file" hold for a run whatever field a later version adds: a
// run's result passes through it before each write. Map keys are left as they are (names, not
// values), and so are unexported fields (time.Time's).
func Deep(red Masker, v any) {
	if red == nil || v == nil {
		return
	}
	deep(red, reflect.ValueOf(v), 0)
}

// maxDepth bounds the walk: a run's result is a tree a few levels deep; a cycle is not expected,
// but must not recurse forever.
const maxDepth = 64

var rawType = reflect.TypeFor[json.RawMessage]()

func deep(red Masker, v reflect.Value, depth int) {
	if depth > maxDepth || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		if v.Kind() == reflect.Interface {
			// What an interface holds cannot be set in place: redact a copy and put it back.
			e := v.Elem()
			if v.CanSet() && isText(e) {
				c := reflect.New(e.Type()).Elem()
				c.Set(e)
				deep(red, c, depth+1)
				v.Set(c)
				return
			}
		}
		deep(red, v.Elem(), depth+1)
	case reflect.String:
		if v.CanSet() {
			if s := v.String(); s != "" {
				if m := red.String(s); m != s {
					v.SetString(m)
				}
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				deep(red, v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Type() == rawType {
			if v.Len() > 0 && v.CanSet() {
				var x any
				if json.Unmarshal(v.Bytes(), &x) == nil {
					if b, err := json.Marshal(Value(red, x)); err == nil {
						v.SetBytes(b)
					}
				}
			}
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes, not text
		}
		fallthrough
	case reflect.Array:
		if !holdsText(v.Type().Elem(), 0) {
			return // numbers: nothing to look at, and a run's samples are many
		}
		for i := range v.Len() {
			deep(red, v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() || !holdsText(v.Type().Elem(), 0) {
			return
		}
		iter := v.MapRange()
		for iter.Next() {
			e := iter.Value()
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			deep(red, c, depth+1)
			v.SetMapIndex(iter.Key(), c)
		}
	}
}

// isText reports whether an interface's value may hold a string (worth a copy).
func isText(e reflect.Value) bool { return holdsText(e.Type(), 0) }

// holdsText reports whether a value of type t may hold a string.
func holdsText(t reflect.Type, depth int) bool {
	if depth > 8 {
		return true
	}
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		if t == rawType {
			return true
		}
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return false
		}
		return holdsText(t.Elem(), depth+1)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && holdsText(f.Type, depth+1) {
				return true
			}
		}
	}
	return false
}
