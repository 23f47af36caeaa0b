// Package workers carries the Python side of the worker protocol (python/inferbench_worker, see
// docs/worker-protocol.md) inside the Go binary and unpacks it where an interpreter can import it,
// so that one binary is all a user installs.
package workers

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"sync"
)

//go:embed python/inferbench_worker/*.py
var python embed.FS

// Package is the importable name of the embedded Python package.
const Package = "inferbench_worker"

var (
	hashOnce sync.Once
	hash     string
	files    []string
)

// Hash identifies the embedded package's contents (names and bytes).
func Hash() string {
	hashOnce.Do(func() {
		_ = fs.WalkDir(python, ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return err
		})
		sort.Strings(files)
		h := sha256.New()
		for _, f := range files {
			b, _ := python.ReadFile(f)
			fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
			h.Write(b)
		}
		hash = hex.EncodeToString(h.Sum(nil))[:16]
	})
	return hash
}

var (
	unpackMu sync.Mutex
	unpacked = map[string]string{}
)

// PythonPath unpacks the embedded package under base (the user's cache directory when base is
// "") in a directory named by its content hash, and returns that directory: the entry to put on
// PYTHONPATH. An existing unpacked copy with the same hash is reused; a new one is written to a
// temporary directory and renamed into place, so concurrent callers never see a partial copy.
func PythonPath(base string) (string, error) {
	if base == "" {
		base = defaultBase()
	}
	unpackMu.Lock()
	defer unpackMu.Unlock()
	if dir, ok := unpacked[base]; ok {
		return dir, nil
	}
	dir := filepath.Join(base, "python-"+Hash())
	marker := filepath.Join(dir, Package, "__init__.py")
	if _, err := os.Stat(marker); err == nil {
		unpacked[base] = dir
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("unpacking the python worker: %w", err)
	}
	tmp, err := os.MkdirTemp(base, ".python-tmp-")
	if err != nil {
		return "", fmt.Errorf("unpacking the python worker: %w", err)
	}
	defer os.RemoveAll(tmp)
	Hash()
	for _, f := range files {
		b, err := python.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel("python", filepath.FromSlash(f))
		dst := filepath.Join(tmp, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", fmt.Errorf("unpacking the python worker: %w", err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return "", fmt.Errorf("unpacking the python worker: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process won the race: its copy has the same contents.
		if _, serr := os.Stat(marker); serr != nil {
			return "", fmt.Errorf("unpacking the python worker into %s: %w", dir, err)
		}
	}
	unpacked[base] = dir
	return dir, nil
}

// Files lists the embedded files, relative to the package directory's parent (for tests).
func Files() []string {
	Hash()
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = path.Base(path.Dir(f)) + "/" + path.Base(f)
	}
	return out
}

func defaultBase() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "inferbench")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("inferbench-%d", os.Getuid()))
}
