package cli

import (
	"strings"
	"testing"
)

// TestFormatVocabulary: every output --format says text for the human output, reads the old
// table as text, and refuses an unknown value naming the command's values.
func TestFormatVocabulary(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"run"}, "want text, json or none"},
		{[]string{"capacity"}, "want text, json or none"},
		{[]string{"merge", "x"}, "want text, json or none"},
		{[]string{"report"}, "want html, text or json"},
		{[]string{"compare", "a", "b"}, "want text, markdown, json, junit or html"},
		{[]string{"explain", "a", "b"}, "want text, markdown or json"},
		{[]string{"history"}, "want text, json or html"},
		{[]string{"ab", "a", "b"}, "want text, json or none"},
	} {
		code, _, errOut := runCLI(t, t.TempDir(), nil, append(tc.cmd, "--format", "xml")...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v --format xml: exit %d, stderr %q; want exit 2 and %q", tc.cmd, code, errOut, tc.want)
		}
	}
	root := newRoot(&IO{})
	for _, name := range []string{"run", "capacity", "merge"} {
		c, _, _ := root.Find([]string{name})
		f := c.Flags().Lookup("format")
		if f.DefValue != "text" {
			t.Errorf("%s --format defaults to %q, want text", name, f.DefValue)
		}
		if err := f.Value.Set("table"); err != nil || f.Value.String() != "text" {
			t.Errorf("%s --format table: %v, %q; want it read as text", name, err, f.Value.String())
		}
	}
}
