package suite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the definition parser: it must never panic, and every
// benchmark it accepts must expand to scenarios with distinct names, with null spelled "null".
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/errors/*.yaml")
	more, _ := filepath.Glob("../benches/*/*.yaml")
	for _, p := range append(files, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("name: a\nsubject: {kind: mock}\nmatrix:\n  x: [1, 2]\n  y: [a, b]\nexclude: [{x: 1, y: a}]\ninclude: [{x: 3, y: c}]\n"))
	// Values holding '/' and '=' that read as the next axis: two scenarios named x=a/y=b/y=c
	// were accepted (testdata/fuzz/FuzzParse/matrix-names-clash keeps it too).
	f.Add([]byte("name: a\nsubject: {kind: mock}\nmatrix:\n  x: [\"a/y=b\", a]\n  y: [c, \"b/y=c\"]\n"))
	f.Add([]byte("name: a\nsubject: {kind: mock}\nmatrix:\n  x: [a]\n  y: [b]\ninclude: [{x: \"a/y=b\"}, {x: a, y: b}]\n"))
	f.Add([]byte("name: a\nsubject: {kind: mock}\nmatrix:\n  x: [null, \"\", [1, null]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		bs, _ := Parse("fuzz.yaml", data, noEnv)
		for _, b := range bs {
			seen := map[string]bool{}
			for _, s := range b.Expand(nil) {
				if seen[s.Name] {
					t.Fatalf("benchmark %s: scenario name %q twice", b.Name, s.Name)
				}
				seen[s.Name] = true
				if strings.Contains(s.Name, "<nil>") {
					t.Fatalf("benchmark %s: scenario %q: null is named null", b.Name, s.Name)
				}
			}
		}
	})
}

// FuzzExpandEnv checks ${VAR} expansion on arbitrary text: no panic, text without "$" unchanged,
// and the output never longer than the input plus the values substituted.
func FuzzExpandEnv(f *testing.F) {
	for _, s := range []string{"", "plain", "${MODEL}", "${UNSET:-def}", "$$", "a${MODEL}b${X:-}c", "${", "${MODEL", "$${MODEL}", "${:-x}"} {
		f.Add(s)
	}
	env := func(k string) (string, bool) {
		if k == "MODEL" {
			return "resnet50", true
		}
		return "", false
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := expandEnvVars(s, env)
		if err != nil {
			return
		}
		if !strings.Contains(s, "$") && out != s {
			t.Fatalf("expandEnvVars(%q) = %q: changed text without a $", s, out)
		}
		if len(out) > len(s)+strings.Count(s, "${")*len("resnet50") {
			t.Fatalf("expandEnvVars(%q) = %q: longer than its substitutions allow", s, out)
		}
	})
}
