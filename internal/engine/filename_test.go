package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileBase: scenario file names stay readable where they can, and are bounded, portable and
// distinct for IDs that printed alike as files before (a long parameter's log was silently not
// written: ENAMETOOLONG; a/b and a__b, m=A and m=a shared one file).
func TestFileBase(t *testing.T) {
	for id, want := range map[string]string{
		"llm-mock/variant=eager/batch_size=1": "llm-mock__variant=eager__batch_size=1",
		"echo/default":                        "echo__default",
		"m/p=0.5,q=1e-3+x":                    "m__p=0.5,q=1e-3+x",
	} {
		if got := fileBase(id); got != want {
			t.Errorf("fileBase(%q) = %q, want %q", id, got, want)
		}
	}
	long := "longp/p=" + strings.Repeat("x", 300)
	ids := []string{
		"b/p=a/b", "b/p=a__b", // "/" is written "__"
		"b/m=A", "b/m=a", // case-insensitive file systems
		"b/p=a b", "b/p=a_b", "b/p=a:b", "b/p=a\\b", "b/p=a\x00b", "b/p=a<b>|?*\"", "b/p=ü",
		long, long + "y", // cut to the same prefix
		"..", ".", "b/p=..",
	}
	dir := t.TempDir()
	seen := map[string]string{}
	for _, id := range ids {
		name := fileBase(id)
		if prev, ok := seen[strings.ToLower(name)]; ok {
			t.Errorf("%q and %q share the file name %q", prev, id, name)
		}
		seen[strings.ToLower(name)] = id
		if len(name) > maxFileBase {
			t.Errorf("fileBase(%q) is %d bytes, over %d", id, len(name), maxFileBase)
		}
		if strings.Trim(name, ".") == "" || strings.ContainsAny(name, "/\\:<>|?*\" \x00") {
			t.Errorf("fileBase(%q) = %q is not a portable file name", id, name)
		}
		if fileBase(id) != name {
			t.Errorf("fileBase(%q) is not stable", id)
		}
		// Every name can be created, with the longest extension and inside a profile folder.
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Errorf("fileBase(%q): %v", id, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), nil, 0o644); err != nil {
			t.Errorf("fileBase(%q): %v", id, err)
		}
	}
}
