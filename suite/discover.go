package suite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/inferbench/inferbench/subject"
)

// skipDirs are never searched for definitions.
var skipDirs = map[string]bool{
	".git": true, "node_modules": true, "vendor": true, "benchmark_results": true,
	".inferbench": true, "__pycache__": true, "testdata": true,
}

// Discover finds definition files below each root: every .yaml/.yml file (and every file of a
// registered type, such as .py) under a directory named "benches" (benches/, models/NAME/benches/,
// ...) or under "benchmarks/unit", "benchmarks/integration" or "benchmarks/performance" (the layout
// of projects with benchmarks/{unit,integration,performance}/ and
// src/**/models/NAME/benchmarks/{unit,...}/). Python files named test_*.py or bench_*.py directly
// in a benchmarks folder are found too (pytest-benchmark's flat layout, flatBenchmark). A root that
// is a file is taken as a definition file itself. The result is sorted.
//
// The rules read the folders the root lies in as well as those below it, up to the project's
// folder (projectRoot), so that naming a folder never changes what is a benchmark: `cd benches &&
// inferbench run .` finds what `inferbench run` finds from the project, and so do
// `benchmarks/unit` and `../benches`; naming `benchmarks` does not make its helper files
// (config.py) benchmarks.
//
// Note: a directory named benchmarks is searched only in its category folders, because projects
// keep scripts and fixtures there too (this repository's benchmarks/scripts).
func Discover(roots ...string) ([]string, error) {
	files, _, err := discover(roots)
	return files, err
}

// Unread returns the YAML files below roots that lie in a benchmarks folder but not where
// definitions are read (benchmarks/x.yaml beside flat test_*.py files,
// benchmarks/scripts/...): the commands name each with the way to have it read, so that no file
// of a benchmark folder is passed over silently.
func Unread(roots ...string) []string {
	_, unread, _ := discover(roots)
	return unread
}

func discover(roots []string) (files, unread []string, err error) {
	for _, root := range roots {
		fi, err := os.Stat(root)
		if err != nil {
			return nil, nil, err
		}
		if !fi.IsDir() {
			files = append(files, root)
			continue
		}
		above := enclosing(root)
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
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return nil
			}
			parts := slices.Clone(above)
			if d := filepath.Dir(rel); d != "." {
				parts = append(parts, strings.Split(filepath.ToSlash(d), "/")...)
			}
			switch {
			case (ext == ".yaml" || ext == ".yml" || fileType(ext) != nil) && underBenches(parts) || flatBenchmark(parts, filepath.Base(p)):
				files = append(files, p)
			case (ext == ".yaml" || ext == ".yml") && slices.Contains(parts, "benchmarks"):
				unread = append(unread, p)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	sort.Strings(files)
	sort.Strings(unread)
	return files, unread, nil
}

// projectMarkers are files that mark a project's folder: the folders above it are not read as
// benchmark folders.
var projectMarkers = []string{".git", "go.mod", "pyproject.toml", "setup.py", "requirements.txt", "performance-budget.yml", "benchmark_thresholds.json", ".inferbench"}

// enclosing returns the names of the folders root lies in, outermost first, from below the
// project's folder (the nearest one up holding a projectMarkers file; at most 8 levels) to root
// itself: ["benches"] for `cd benches && inferbench run .`, ["benchmarks", "unit"] inside a
// project's benchmarks/unit.
func enclosing(root string) []string {
	dir, err := filepath.Abs(root)
	if err != nil {
		return nil
	}
	var names []string
	for range 8 {
		if marked(dir) {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		names = append([]string{filepath.Base(dir)}, names...)
		dir = parent
	}
	return names
}

func marked(dir string) bool {
	for _, m := range projectMarkers {
		if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
			return true
		}
	}
	return false
}

// fileType returns the reader of definition files that are not YAML, by extension: a subject
// kind's scanner (subject.Kind.Files, e.g. the worker's Python benchmark functions), or nil.
func fileType(ext string) func(path string, data []byte) ([]*Benchmark, error) {
	kind, scan, ok := subject.FileKind(ext)
	if !ok {
		return nil
	}
	return func(path string, data []byte) ([]*Benchmark, error) {
		found, err := scan(path, data)
		out := make([]*Benchmark, 0, len(found))
		// Names found in files come from file names: in a models/NAME/ folder
		// (src/**/models/NAME/benchmarks/) the model is NAME and the name NAME/..., so one file
		// name in two model folders is two benchmarks.
		model := modelFromPath(path)
		for _, f := range found {
			if model != "" {
				f.Name, f.Model = model+"/"+f.Name, model
			}
			out = append(out, &Benchmark{
				Name: f.Name, Description: f.Description, Model: f.Model, Tags: f.Tags,
				File: path, Line: f.Line, Dir: filepath.Dir(path), Kind: kind, Config: f.Config,
				Params: map[string]any(f.Params), Accepts: f.Accepts,
			})
		}
		return out, err
	}
}

// flatBenchmark reports whether a file (its folders, parts, and its name) is a benchmark file of
// pytest-benchmark's flat layout, such as benchmarks/test_overhead.py: a test_*.py or
// bench_*.py file directly in a folder named benchmarks (whose other files, such as config.py and
// profile_memory.py, are not benchmarks).
func flatBenchmark(parts []string, base string) bool {
	return len(parts) > 0 && parts[len(parts)-1] == "benchmarks" && filepath.Ext(base) == ".py" && fileType(".py") != nil &&
		(strings.HasPrefix(base, "test_") || strings.HasPrefix(base, "bench_"))
}

// underBenches reports whether a file in these folders (outermost first) is in a benches folder
// or a benchmarks/{unit,integration,performance} folder.
func underBenches(parts []string) bool {
	for i, part := range parts {
		if part == "benches" {
			return true
		}
		if part == "benchmarks" && i+1 < len(parts) && slices.Contains(categories, parts[i+1]) {
			return true
		}
	}
	return false
}

// SearchDescription says where Discover looks below roots and for what, for a "0 benchmarks
// found" message.
func SearchDescription(roots []string) string {
	return fmt.Sprintf("looked below %s for *.yaml and *.yml definitions (and *.py files with run_* or benchmark_* functions or benchmark classes) in benches/ folders (benches/**, models/NAME/benches/**), in benchmarks/{unit,integration,performance}/ (also src/**/models/NAME/benchmarks/...) and in benchmarks/test_*.py and benchmarks/bench_*.py; to fix, move the definitions into one of those folders, or name the folder or file: inferbench list path/to/folder",
		strings.Join(roots, ", "))
}

// modelFromPath returns NAME when path lies under a models/NAME/ folder (the innermost one), or "".
func modelFromPath(path string) string {
	parts := strings.Split(filepath.ToSlash(filepath.Dir(path)), "/")
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] == "models" && parts[i+1] != "" {
			return parts[i+1]
		}
	}
	return ""
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
		bs, err := parseFile(f, env)
		var es Errors
		if errors.As(err, &es) {
			errs = append(errs, es...)
		} else if err != nil {
			errs = append(errs, &Error{File: f, Msg: err.Error()})
		}
		for _, b := range bs {
			if prev, dup := seen[b.Name]; dup {
				errs = append(errs, &Error{File: b.File, Line: b.Line, Col: 1, Msg: "benchmark " + b.Name + " is also defined at " + prev.Source() + " (names must be unique: rename one)"})
				continue
			}
			seen[b.Name] = b
			all = append(all, b)
		}
	}
	all = declaredWins(all)
	if e := checkRunSize(all); e != nil {
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return all, errs
	}
	return all, nil
}

// declaredWins drops a benchmark found in a Python file (a kind's scanner of .py files) that a
// definition file also declares: the same subject kind, file, and class or function (the
// definition's params `file:` relative to its folder). The declared one runs with the
// definition's parameters and matrix; before, both ran, the found one with its defaults.
func declaredWins(all []*Benchmark) []*Benchmark {
	declared := map[string]bool{}
	for _, b := range all {
		if k, ok := pythonTarget(b); ok && fileType(filepath.Ext(b.File)) == nil {
			declared[k] = true
		}
	}
	if len(declared) == 0 {
		return all
	}
	kept := all[:0:0]
	for _, b := range all {
		if k, ok := pythonTarget(b); ok && fileType(filepath.Ext(b.File)) != nil && declared[k] {
			continue
		}
		kept = append(kept, b)
	}
	return kept
}

// pythonTarget names what a benchmark runs when its params hold `file` and `class` or
// `function`: kind, absolute file and name.
func pythonTarget(b *Benchmark) (string, bool) {
	file, _ := b.Params["file"].(string)
	if file == "" {
		return "", false
	}
	name := ""
	for _, k := range []string{"class", "function"} {
		if v, _ := b.Params[k].(string); v != "" {
			name = k + " " + v
		}
	}
	if name == "" {
		return "", false
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(b.Dir, file)
	}
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return b.Kind + "\x00" + filepath.Clean(file) + "\x00" + name, true
}
