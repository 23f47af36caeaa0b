//go:build unix

package readall_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/inferbench/inferbench/internal/base/readall"
)

func TestFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	if err := os.WriteFile(small, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "x.yaml")
	if runtime.GOOS != "windows" {
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, path string
		limit      int64
		want       string // content, or the error's text
		err        bool
	}{
		// A regular file under the limit is read whole.
		{name: "regular", path: small, limit: 5, want: "hello"},
		// One over the limit is refused before it is read.
		{name: "over", path: small, limit: 4, want: "over the limit of 4 bytes", err: true},
		// A device never ends: refused at once, not read until memory runs out.
		{name: "device", path: "/dev/zero", limit: 1 << 30, want: "a character device, not a regular file", err: true},
		// A named pipe blocks the open until a writer comes: refused at once.
		{name: "fifo", path: fifo, limit: 1 << 30, want: "a named pipe, not a regular file", err: true},
		// A directory.
		{name: "dir", path: dir, limit: 1 << 30, want: "a directory, not a regular file", err: true},
		// A missing file keeps the os error (callers test fs.ErrNotExist).
		{name: "missing", path: filepath.Join(dir, "none"), limit: 10, want: "no such file", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if runtime.GOOS == "windows" && (tc.name == "fifo" || tc.name == "device") {
				t.Skip("no named pipes or /dev/zero on Windows")
			}
			got, err := readall.File(tc.path, tc.limit)
			switch {
			case tc.err && err == nil:
				t.Fatalf("File(%s) = %q, want an error with %q", tc.path, got, tc.want)
			case tc.err && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("File(%s): %v, want %q in it", tc.path, err, tc.want)
			case !tc.err && err != nil:
				t.Fatalf("File(%s): %v", tc.path, err)
			case !tc.err && string(got) != tc.want:
				t.Fatalf("File(%s) = %q, want %q", tc.path, got, tc.want)
			}
			if tc.err && err != nil && tc.name != "missing" && !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q does not name %s", err, tc.path)
			}
		})
	}
}
