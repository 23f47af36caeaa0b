package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"
)

// formatValue is an output format flag: one of a command's values. Every command says text for
// its human table; "table", which run, capacity, merge and report called it, is read as text.
type formatValue struct {
	p      *string
	values []string
}

func (v *formatValue) String() string { return *v.p }
func (v *formatValue) Type() string   { return "string" }

func (v *formatValue) Set(s string) error {
	if s == "table" && slices.Contains(v.values, "text") {
		s = "text"
	}
	if !slices.Contains(v.values, s) {
		return fmt.Errorf("want %s", orWords(v.values))
	}
	*v.p = s
	return nil
}

// formatFlag registers --format, an output format: one of values, def by default; usage says what
// each prints (the values are listed before it).
func formatFlag(f *pflag.FlagSet, p *string, def, usage string, values ...string) {
	*p = def
	if usage != "" {
		usage = ": " + usage
	}
	f.Var(&formatValue{p, values}, "format", orWords(values)+usage)
	f.Lookup("format").DefValue = def
}

// orWords writes "a", "a or b", "a, b or c".
func orWords(ws []string) string {
	switch len(ws) {
	case 0:
		return ""
	case 1:
		return ws[0]
	}
	s := ws[0]
	for _, w := range ws[1 : len(ws)-1] {
		s += ", " + w
	}
	return s + " or " + ws[len(ws)-1]
}
