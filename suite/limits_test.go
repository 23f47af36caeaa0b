package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIncludeCounts: include entries count toward MaxScenarios with the matrix (50,000 entries
// were taken, past the bound a matrix has).
func TestIncludeCounts(t *testing.T) {
	var src strings.Builder
	src.WriteString("name: x\nsubject: {kind: exec, command: [\"true\"]}\nmatrix: {a: [0, 1]}\ninclude:\n")
	for i := range MaxScenarios {
		fmt.Fprintf(&src, "  - {a: %d}\n", i+2)
	}
	_, err := Parse("x.yaml", []byte(src.String()), noEnv)
	if err == nil || !strings.Contains(err.Error(), "x.yaml:5:3: the matrix and include make more than 10000 scenarios (MaxScenarios)") {
		t.Fatalf("Parse: %v", err)
	}
}

// TestRunScenarioLimit: the documents of a run are bounded together. Each benchmark within
// MaxScenarios, hundreds of documents made 3 million scenarios, expanded in memory.
func TestRunScenarioLimit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "benches")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := func(i int) string {
		return fmt.Sprintf("---\nname: b%d\nsubject: {kind: exec, command: [\"true\"]}\nmatrix: {a: [0,1,2,3,4,5,6,7,8,9], b: [0,1,2,3,4,5,6,7,8,9], c: [0,1,2,3,4,5,6,7,8,9], d: [0,1,2,3,4,5,6,7,8,9]}\n", i)
	}
	// Two files of 10,000 scenarios a document: the bound is on the run, not on a file.
	var one, two strings.Builder
	for i := range maxRunScenarios/MaxScenarios + 1 {
		if i%2 == 0 {
			one.WriteString(doc(i))
		} else {
			two.WriteString(doc(i))
		}
	}
	for name, s := range map[string]string{"one.yaml": one.String(), "two.yaml": two.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Load(noEnv, dir)
	if err == nil || !strings.Contains(err.Error(), "the definitions make more than 100000 scenarios together (MaxRunScenarios)") {
		t.Fatalf("Load: %v", err)
	}
	// One file alone is within the bound.
	if _, err := Load(noEnv, filepath.Join(dir, "one.yaml")); err != nil {
		t.Fatalf("Load(one.yaml): %v", err)
	}
}

// TestExpandedValueSize: a value is bounded after ${VAR} expansion, and so is what the
// expansions of one file add: a 6 KB definition made a 200 MB parameter.
func TestExpandedValueSize(t *testing.T) {
	big := strings.Repeat("x", 100_000)
	env := func(string) (string, bool) { return big, true }
	head := "name: x\nsubject: {kind: exec, command: [\"true\"]}\nparams:\n"
	// One value of 11 references: 1.1 MB.
	one := head + "  p: \"" + strings.Repeat("${BIG}", 11) + "\"\n"
	if _, err := Parse("x.yaml", []byte(one), env); err == nil || !strings.Contains(err.Error(), "x.yaml:4:6: a value is over 1048576 bytes after ${VAR} expansion (MaxValueSize)") {
		t.Errorf("one value: %v", err)
	}
	// Fifty values of 10 references: 50 MB in all, each under MaxValueSize.
	var many strings.Builder
	many.WriteString(head)
	for i := range 50 {
		fmt.Fprintf(&many, "  p%d: \"%s\"\n", i, strings.Repeat("${BIG}", 10))
	}
	if _, err := Parse("x.yaml", []byte(many.String()), env); err == nil || !strings.Contains(err.Error(), "the ${VAR} expansions of this file add more than MaxFileSize bytes") {
		t.Errorf("many values: %v", err)
	}
	// Within both bounds.
	if _, err := Parse("x.yaml", []byte(head+"  p: \"${BIG}\"\n"), env); err != nil {
		t.Errorf("one reference: %v", err)
	}
}
