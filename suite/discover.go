package suite

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// skipDirs are never searched for definitions.
var skipDirs = map[string]bool{
	".git": true, "node_modules": true, "vendor": true, "benchmark_results": true,
	".inferbench": true, "__pycache__": true, "testdata": true,
}

// Discover finds definition files: every .yaml/.yml file under a directory named "benches"
// (benches/, models/NAME/benches/, ...) below each root. A root that is a file is taken as a
// definition file itself. The result is sorted.
func Discover(roots ...string) ([]string, error) {
	var files []string
	for _, root := range roots {
		fi, err := os.Stat(root)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			files = append(files, root)
			continue
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != root && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			ext := filepath.Ext(p)
			if (ext == ".yaml" || ext == ".yml" || fileType(ext) != nil) && underBenches(root, p) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	return files, nil
}

// FileParser reads benchmarks from a definition file that is not YAML, e.g. the Python benchmark
// functions that subject/worker finds in .py files. A file without benchmarks yields none and no
// error (it may be a helper module).
type FileParser func(path string, data []byte) ([]*Benchmark, error)

var (
	fileTypesMu sync.RWMutex
	fileTypes   = map[string]FileParser{}
)

// RegisterFileType makes Discover find files with extension ext (".py") under benches/ and
// ParseFile read them with p.
func RegisterFileType(ext string, p FileParser) {
	fileTypesMu.Lock()
	defer fileTypesMu.Unlock()
	fileTypes[ext] = p
}

func fileType(ext string) FileParser {
	fileTypesMu.RLock()
	defer fileTypesMu.RUnlock()
	return fileTypes[ext]
}

func underBenches(root, p string) bool {
	if filepath.Base(filepath.Clean(root)) == "benches" {
		return true
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	for _, part := range strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/") {
		if part == "benches" {
			return true
		}
	}
	return false
}

// Load discovers and parses every definition under roots. Benchmarks that parsed are returned
// even when others failed; err is then Errors listing every problem. Two benchmarks with one name
// are an error.
func Load(env func(string) (string, bool), roots ...string) ([]*Benchmark, error) {
	files, err := Discover(roots...)
	if err != nil {
		return nil, err
	}
	var all []*Benchmark
	var errs Errors
	seen := map[string]*Benchmark{}
	for _, f := range files {
		bs, err := ParseFile(f, env)
		var es Errors
		if errors.As(err, &es) {
			errs = append(errs, es...)
		} else if err != nil {
			errs = append(errs, &Error{File: f, Msg: err.Error()})
		}
		for _, b := range bs {
			if prev, dup := seen[b.Name]; dup {
				errs = append(errs, &Error{File: b.File, Line: b.Line, Col: 1, Msg: "benchmark " + b.Name + " is also defined at " + prev.Source()})
				continue
			}
			seen[b.Name] = b
			all = append(all, b)
		}
	}
	if len(errs) > 0 {
		return all, errs
	}
	return all, nil
}
