package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/redact"
)

// TestOutputLogCapped: a chatty benchmark's output is bounded: the log keeps its first and last
// bytes and says how many were cut between them; secrets are masked before anything is kept.
func TestOutputLogCapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "b__s.log")
	o := newOutputLog(path, 2000, redact.New("s3cr3t-value"))
	var all strings.Builder
	for i := range 100 {
		line := fmt.Sprintf("line %03d s3cr3t-value %s\n", i, strings.Repeat("x", 70))
		all.WriteString(line)
		o.Write([]byte(line[:10])) // in pieces, as a pipe delivers them
		o.Write([]byte(line[10:]))
	}
	wrote, err := o.Close()
	if err != nil || !wrote {
		t.Fatalf("Close: %v, %v", wrote, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	// Whole lines either side of the cut: the first 10 of the 93-byte lines fit in 1000 bytes,
	// as do the last 10.
	lines := strings.SplitAfter(all.String(), "\n")
	head, tail := strings.Join(lines[:10], ""), strings.Join(lines[90:100], "")
	marker := fmt.Sprintf("\n[inferbench: %d bytes of output cut here; this log keeps about the first 1000 and the last 1000 bytes]\n", all.Len()-len(head)-len(tail))
	want := strings.ReplaceAll(head+marker+tail, "s3cr3t-value", redact.Mask)
	if text != want {
		t.Errorf("log:\n%s\nwant:\n%s", text, want)
	}

	// Nothing written: no file.
	path = filepath.Join(t.TempDir(), "quiet.log")
	if wrote, err := newOutputLog(path, 2000, nil).Close(); wrote || err != nil {
		t.Errorf("a silent subject: wrote %v, %v", wrote, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a silent subject left %s", path)
	}

	// Under the cap: everything, no marker.
	path = filepath.Join(t.TempDir(), "small.log")
	o = newOutputLog(path, 2000, nil)
	o.Write([]byte("one\ntwo"))
	o.Close()
	if b, _ := os.ReadFile(path); string(b) != "one\ntwo" {
		t.Errorf("small log %q", b)
	}
}
