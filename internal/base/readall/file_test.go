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

// OpenIn opens a regular file inside its folder and refuses, at once and naming the path, one
// whose name or a link leads outside (a run folder's run.json naming ../../victim, or a link to
// /dev/zero), a named pipe (which would block the open) and a device inside it.
func TestOpenIn(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "run")
	os.MkdirAll(filepath.Join(dir, "profiles"), 0o755)
	os.WriteFile(filepath.Join(dir, "profiles", "ok"), []byte("ok"), 0o644)
	os.WriteFile(filepath.Join(parent, "victim"), []byte("secret"), 0o644)
	os.Symlink("../../victim", filepath.Join(dir, "profiles", "out"))
	os.Symlink("/dev/zero", filepath.Join(dir, "profiles", "zero"))
	os.Symlink("ok", filepath.Join(dir, "profiles", "in"))
	if err := syscall.Mkfifo(filepath.Join(dir, "profiles", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"profiles/ok", ""},                              // a file of the folder
		{"profiles/in", ""},                              // a link that stays inside
		{"../victim", "leads outside the folder"},        // a name with ..
		{parent + "/victim", "leads outside the folder"}, // an absolute name
		{"profiles/out", "leads outside the folder"},     // a link out of it
		{"profiles/zero", "leads outside the folder"},    // a link to a device
		{"profiles/fifo", "a named pipe, not a regular file"},
		{"profiles", "a directory, not a regular file"},
		{"profiles/none", "no such file"},
	} {
		f, err := readall.OpenIn(dir, tc.name)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			f.Close()
			continue
		}
		if err == nil {
			f.Close()
			t.Errorf("%s: opened, want %q", tc.name, tc.want)
		} else if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) && tc.want != "no such file" {
			t.Errorf("%s: %v, want %q naming the path", tc.name, err, tc.want)
		}
	}
}
