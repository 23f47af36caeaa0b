package redact

import (
	"encoding/json"
	"slices"
	"strings"

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
		Environment(red, sc.Environment)
		Extra(red, &sc.Extra)
	}
}

// Params redacts a scenario's parameters (or environment) in place. A parameter is part of the
// scenario's identity (compare matches scenarios by their parameters), so a value is either kept
// as it is or masked whole, never masked inside: it is masked when its name is one the user
// declared secret (DeclareParams: --secret-param) or when it holds a secret, a value red knows
// (the environment's secrets, a secret flag's value) or one of a secret's shapes (a URL's
// password, a bearer token). A name alone does not make a value secret: a pytest parameter
// `key='kilometer'` is a unit, and masking it (and then "kilometer" inside every other value)
// made 104 tests 36. A declared parameter's text value is learnt, so that an echo of it is
// masked too.
func Params(red Masker, m map[string]any) {
	r, _ := red.(*Redactor)
	for k, v := range m {
		if r != nil && r.SecretParam(k) {
			r.Learn(k, v)
			m[k] = Mask
			continue
		}
		if holdsSecret(red, v, 0) {
			m[k] = Mask
		}
	}
}

// Environment redacts a scenario's environment (what a subject reported about itself) in place:
// the value of a secret name (SecretName: HF_TOKEN, api_key) is masked whole, the others'
// strings are redacted as Value does. An environment is context, not the scenario's identity.
func Environment(red Masker, m map[string]any) {
	for k, v := range m {
		if SecretName(k) {
			m[k] = Mask
			continue
		}
		m[k] = Value(red, v)
	}
}

// holdsSecret reports whether a decoded JSON-like value holds a string that red would mask.
func holdsSecret(red Masker, v any, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch v := v.(type) {
	case string:
		return v != "" && red.String(v) != v
	case map[string]any:
		for _, x := range v {
			if holdsSecret(red, x, depth+1) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if holdsSecret(red, x, depth+1) {
				return true
			}
		}
	case []string:
		for _, x := range v {
			if x != "" && red.String(x) != x {
				return true
			}
		}
	}
	return false
}

// DeclareParams makes parameters of these names secret (--secret-param): their values are masked
// whole in a scenario's parameters (Params) and learnt as secrets (Learn).
func (r *Redactor) DeclareParams(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(r.params, n) {
			r.params = append(r.params, n)
		}
	}
}

// SecretParam reports whether the user declared parameter name secret (DeclareParams).
func (r *Redactor) SecretParam(name string) bool {
	if r == nil {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Contains(r.params, name)
}

// Learn adds the value of a parameter the user declared secret (SecretParam) to the known
// secrets, so that it is masked wherever it is echoed (a command's output, a server's error). A
// value of another name, or that is no text, is not learnt.
func (r *Redactor) Learn(name string, v any) {
	if s, ok := v.(string); ok && r.SecretParam(name) {
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
