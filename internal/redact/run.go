package redact

import (
	"encoding/json"

	"github.com/inferbench/inferbench/result"
)

// Run redacts the text of a run read back from a file or a store, in place: its command line,
// and each scenario's error, iteration errors, warnings, and string parameters and description.
// A run recorded by an inferbench older than this package may hold a token or a key there; what
// reads runs back to show them (serve, report, compare, export) passes them through Run.
func Run(r *result.Run) {
	if r == nil {
		return
	}
	red := New()
	r.Config.Args = red.Args(r.Config.Args)
	for k, v := range r.Config.Set {
		if SecretName(k) {
			v = Mask
		}
		r.Config.Set[k] = red.String(v)
	}
	if r.Merged != nil {
		for i := range r.Merged.Parts {
			r.Merged.Parts[i].Args = red.Args(r.Merged.Parts[i].Args)
		}
	}
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		sc.Error = red.String(sc.Error)
		for j := range sc.Errors {
			sc.Errors[j].Error = red.String(sc.Errors[j].Error)
		}
		for j := range sc.Warnings {
			sc.Warnings[j] = red.String(sc.Warnings[j])
		}
		Params(red, sc.Params)
		Params(red, sc.Environment)
		Extra(red, &sc.Extra)
	}
}

// Params redacts a scenario's parameters (or environment) in place: the value of a name that is
// secret (SecretName: hf_token, api_key, access_token; not max_tokens) is masked whole, whatever
// its shape, and learnt when red is a *Redactor; the others' strings are redacted as Value does.
func Params(red Masker, m map[string]any) {
	for k, v := range m {
		if SecretName(k) {
			if r, ok := red.(*Redactor); ok {
				r.Learn(k, v)
			}
			m[k] = Mask
			continue
		}
		m[k] = Value(red, v)
	}
}

// Learn adds a value of a secret name (SecretName) to the known secrets: a parameter's given in
// a definition or with --set, so that it is masked wherever it is echoed (a command's output, a
// server's error). A value of another name, or that is no text, is not learnt.
func (r *Redactor) Learn(name string, v any) {
	if s, ok := v.(string); ok && SecretName(name) {
		r.Add(s)
	}
}

// Value redacts the strings in a decoded JSON-like value (maps, slices, strings), in place where
// it can, and returns it.
func Value(red Masker, v any) any {
	switch v := v.(type) {
	case string:
		return red.String(v)
	case map[string]any:
		for k, x := range v {
			v[k] = Value(red, x)
		}
	case []any:
		for i, x := range v {
			v[i] = Value(red, x)
		}
	case []string:
		for i, x := range v {
			v[i] = red.String(x)
		}
	}
	return v
}

// Extra redacts the text of a scenario's typed sections, in place: the server's command line, the
// monitors' warnings, and the strings of sections kept as raw JSON.
func Extra(red Masker, e *result.Extra) {
	if e.Server != nil {
		e.Server.Command = red.String(e.Server.Command)
	}
	if e.Resources != nil {
		for i, w := range e.Resources.Warnings {
			e.Resources.Warnings[i] = red.String(w)
		}
	}
	for k, raw := range e.Other {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		if b, err := json.Marshal(Value(red, v)); err == nil {
			e.Other[k] = b
		}
	}
}
