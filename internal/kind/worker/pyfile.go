package worker

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/inferbench/inferbench/subject"
)

// PyBenchmark is a seed-style benchmark found in a Python file.
type PyBenchmark struct {
	Name    string   // function or class name
	Class   bool     // a class with setup_model / measure_latency
	Line    int      // 1-based line of the def or class
	Doc     string   // first line of the docstring
	Methods []string // for a class: which of setup_model, measure_latency, measure_time_to_first_token, cleanup_model it has
	Args    []string // for a function: its arguments but logger and config
}

var (
	defRe   = regexp.MustCompile(`^def\s+((?:run|benchmark)_\w*)\s*\(`)
	anyDef  = regexp.MustCompile(`^(?:async\s+)?def\s+(\w+)\s*\(`)
	classRe = regexp.MustCompile(`^class\s+(\w+)\s*[(:]`)
	methRe  = regexp.MustCompile(`^\s+def\s+(\w+)\s*\(`)
	decoRe  = regexp.MustCompile(`^\s+@(?:\w+\.)*abstractmethod\b`)
)

var classMethods = []string{"setup_model", "measure_latency", "measure_time_to_first_token", "cleanup_model"}

// ScanPython finds benchmarks in Python source without running it, by the rules of the Python
// side's discover.py: top-level functions named run_* or benchmark_*, and classes defining
// setup_model and measure_latency (or measure_time_to_first_token) that are not abstract. A
// function whose body names one of those classes is the entry point of the classes' own runner
// and is left out; so is a run_* or benchmark_* function another function of the file calls (a
// helper such as run_training_benchmark(callbacks), called by the benchmark that compares
// its runs). Lines inside triple-quoted strings are ignored.
func ScanPython(src []byte) []PyBenchmark {
	ps := &pyScanner{methods: map[string]bool{}, bodies: map[string]*strings.Builder{}}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for n := 1; sc.Scan(); n++ {
		ps.scanLine(n, sc.Text())
	}
	ps.finishClass()
	return dropRunners(ps.funcs, ps.classes, ps.bodies)
}

// pyScanner is what ScanPython knows partway through a file: the benchmarks found so far, the
// class being read and its methods, the functions' bodies, and the string or signature open
// across lines.
type pyScanner struct {
	funcs, classes []PyBenchmark
	cls            *PyBenchmark // the class being read
	// abstract says a method of cls the benchmark needs is abstract; pendingDeco, that an
	// abstractmethod decorator waits for the def below it.
	abstract, pendingDeco bool
	methods               map[string]bool             // cls's methods
	quote                 string                      // the open triple quote, when inside one
	last                  *PyBenchmark                // the benchmark whose docstring may come next
	bodies                map[string]*strings.Builder // function name -> body text
	body                  *strings.Builder            // the body being read
	open                  *PyBenchmark                // the function whose signature goes on past the line read
	sig                   strings.Builder             // its signature so far
}

// finishClass ends the class being read: it is a benchmark when it has setup_model and a
// measure method, none of them abstract, and is not the base class itself.
func (ps *pyScanner) finishClass() {
	cls, methods := ps.cls, ps.methods
	if cls == nil {
		return
	}
	if methods["setup_model"] && (methods["measure_latency"] || methods["measure_time_to_first_token"]) &&
		!ps.abstract && cls.Name != "ModelBenchmark" {
		for _, m := range classMethods {
			if methods[m] {
				cls.Methods = append(cls.Methods, m)
			}
		}
		ps.classes = append(ps.classes, *cls)
	}
	ps.cls, ps.abstract, ps.methods = nil, false, map[string]bool{}
}

// scanLine reads line n: the rest of a signature or a triple-quoted string, a docstring, a
// line of a function's body, a top-level definition or a line of a class.
func (ps *pyScanner) scanLine(n int, line string) {
	if ps.open != nil {
		// A line of a signature that spans several: its parameters are the function's
		// (the closing line is often not indented, and is no new definition).
		ps.sig.WriteByte('\n')
		ps.sig.WriteString(line)
		if args, ok := defArgs(ps.sig.String()); ok {
			ps.open.Args, ps.open = args, nil
		} else if n-ps.open.Line >= maxSignatureLines {
			ps.open = nil // not Python this reads: the lines after it are read as usual
		}
		return
	}
	if ps.quote != "" {
		if strings.Contains(line, ps.quote) {
			ps.quote = ""
		}
		return
	}
	trimmed := strings.TrimSpace(line)
	if ps.last != nil && trimmed != "" {
		if doc, ok := docLine(trimmed); ok {
			ps.last.Doc = doc
		}
		ps.last = nil
	}
	if q := openTriple(line); q != "" {
		ps.quote = q
	}
	if trimmed == "" || strings.HasPrefix(trimmed, "#") {
		return
	}
	indented := line[0] == ' ' || line[0] == '\t'
	if indented && ps.body != nil {
		ps.body.WriteString(line)
		ps.body.WriteByte('\n')
	}
	if !indented {
		ps.topLevel(n, line)
		return
	}
	if ps.cls != nil {
		ps.classLine(line, trimmed)
	}
}

// topLevel reads a line that is not indented: it ends the class being read and the body, and
// starts a benchmark function, another function or a class.
func (ps *pyScanner) topLevel(n int, line string) {
	ps.finishClass()
	ps.body = nil
	if m := defRe.FindStringSubmatch(line); m != nil {
		ps.funcs = append(ps.funcs, PyBenchmark{Name: m[1], Line: n})
		ps.last = &ps.funcs[len(ps.funcs)-1]
		if args, ok := defArgs(line); ok {
			ps.last.Args = args
		} else {
			ps.sig.Reset()
			ps.sig.WriteString(line)
			ps.open = ps.last
		}
		ps.body = &strings.Builder{}
		ps.bodies[m[1]] = ps.body
	} else if m := anyDef.FindStringSubmatch(line); m != nil {
		ps.body = &strings.Builder{}
		ps.bodies[m[1]] = ps.body
	} else if m := classRe.FindStringSubmatch(line); m != nil {
		ps.cls = &PyBenchmark{Name: m[1], Class: true, Line: n}
		ps.last = ps.cls
	}
}

// classLine reads an indented line of the class being read: a method, or the abstractmethod
// decorator of the one below it.
func (ps *pyScanner) classLine(line, trimmed string) {
	if decoRe.MatchString(line) {
		ps.pendingDeco = true
		return
	}
	if m := methRe.FindStringSubmatch(line); m != nil {
		ps.methods[m[1]] = true
		if ps.pendingDeco && slices.Contains(classMethods, m[1]) {
			ps.abstract = true
		}
	}
	if !strings.HasPrefix(trimmed, "@") {
		ps.pendingDeco = false
	}
}

// dropRunners returns the functions and then the classes, without the functions another
// function's body calls (helpers) and those whose body names one of the classes (the classes'
// own runner).
func dropRunners(funcs, classes []PyBenchmark, bodies map[string]*strings.Builder) []PyBenchmark {
	// One pass over each body, whatever the number of functions: the names it calls (a word
	// followed by "(", as `\bNAME\s*\(` matches it) and the words it holds. Note: a regexp per
	// function over every body was quadratic: 20,000 run_ functions took 81 s.
	called := map[string]bool{} // names some other function's body calls
	for name, b := range bodies {
		words(b.String(), func(w string, call bool) {
			if call && w != name {
				called[w] = true
			}
		})
	}
	funcs = slices.DeleteFunc(funcs, func(f PyBenchmark) bool { return called[f.Name] })
	if len(classes) > 0 {
		names := map[string]bool{}
		for _, c := range classes {
			names[c.Name] = true
		}
		funcs = slices.DeleteFunc(funcs, func(f PyBenchmark) bool {
			mentions := false
			if b := bodies[f.Name]; b != nil {
				words(b.String(), func(w string, _ bool) { mentions = mentions || names[w] })
			}
			return mentions
		})
	}
	return append(funcs, classes...)
}

// words calls fn with each word of src (a longest run of ASCII letters, digits and underscores,
// as regexp's \w and \b read them) and whether it is called: followed, after white space, by "(".
func words(src string, fn func(w string, call bool)) {
	for i := 0; i < len(src); {
		if !isWord(src[i]) {
			i++
			continue
		}
		j := i
		for j < len(src) && isWord(src[j]) {
			j++
		}
		k := j
		for k < len(src) && isSpace(src[k]) {
			k++
		}
		fn(src[i:j], k < len(src) && src[k] == '(')
		i = j
	}
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isSpace is regexp's \s: space, \t, \n, \f, \r.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// openTriple returns the triple quote a line leaves open ("" when none).
func openTriple(line string) string {
	open := ""
	for i := 0; i+3 <= len(line); i++ {
		q := line[i : i+3]
		if q != `"""` && q != `'''` {
			continue
		}
		switch open {
		case "":
			open = q
		case q:
			open = ""
		default:
			continue
		}
		i += 2
	}
	return open
}

// docLine returns the first line of a docstring that starts on line s.
func docLine(s string) (string, bool) {
	for _, p := range []string{`r"""`, `"""`, `r'''`, `'''`, `"`, `'`} {
		if strings.HasPrefix(s, p) {
			s = strings.TrimPrefix(s, p)
			for _, q := range []string{`"""`, `'''`, `"`, `'`} {
				if i := strings.Index(s, q); i >= 0 {
					s = s[:i]
					break
				}
			}
			return strings.TrimSpace(s), true
		}
	}
	return "", false
}

// ParsePythonFile turns the benchmarks ScanPython finds in a file into benchmarks run by the
// pyfunc adapter, named FILE.NAME (FILE without .py). It is the worker kind's scanner of ".py"
// files under benches/ (subject.Kind.Files).
func ParsePythonFile(path string, data []byte) ([]subject.Found, error) {
	stem := strings.TrimSuffix(filepath.Base(path), ".py")
	var out []subject.Found
	imports := externalImports(path, data)
	for _, pb := range ScanPython(data) {
		params := subject.Params{"file": filepath.Base(path)}
		if pb.Class {
			params["class"] = pb.Name
		} else {
			params["function"] = pb.Name
		}
		var accepts []string
		if !pb.Class {
			accepts = pb.Args
		}
		out = append(out, subject.Found{
			Accepts:     accepts,
			Name:        stem + "." + pb.Name,
			Description: pb.Doc,
			Model:       stem,
			Tags:        []string{"python"},
			Line:        pb.Line,
			Config:      &Config{Adapter: "pyfunc", imports: imports},
			Params:      params,
		})
	}
	return out, nil
}

// externalImports returns the top-level packages a Python file imports at its top level (`import
// a.b, c`, `from d import e`), less relative imports, the standard library, and the modules of the
// project itself: a name that is a .py file or a folder beside the file or in a folder above it (or
// its src/), up to six levels, since the worker puts the file's folder first on sys.path and a
// project may install its own packages.
func externalImports(path string, data []byte) []string {
	seen := map[string]bool{}
	var out []string
	add := func(mod string) {
		name, _, _ := strings.Cut(strings.TrimSpace(mod), ".")
		if name == "" || stdlib[name] || seen[name] || !isIdent(name) || projectModule(path, name) {
			return
		}
		seen[name] = true
		out = append(out, name)
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if rest, ok := strings.CutPrefix(line, "import "); ok {
			rest, _, _ = strings.Cut(rest, "#")
			for _, part := range strings.Split(rest, ",") {
				mod, _, _ := strings.Cut(strings.TrimSpace(part), " ")
				add(mod)
			}
		} else if rest, ok := strings.CutPrefix(line, "from "); ok {
			mod, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
			if !strings.HasPrefix(mod, ".") {
				add(mod)
			}
		}
	}
	return out
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// projectModule reports whether name is a module of the project around path (see
// externalImports).
func projectModule(path, name string) bool {
	dir := filepath.Dir(path)
	for range 6 {
		for _, p := range []string{filepath.Join(dir, name+".py"), filepath.Join(dir, name), filepath.Join(dir, "src", name)} {
			if _, err := os.Stat(p); err == nil {
				return true
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return false
}

// stdlib are the standard library's modules (Python 3.11's sys.stdlib_module_names, less the
// private ones): always importable, so never a requirement to check.
var stdlib = func() map[string]bool {
	m := map[string]bool{}
	for _, name := range strings.Fields(`
abc aifc antigravity argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb
binascii bisect builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop
collections colorsys compileall concurrent configparser contextlib contextvars copy copyreg
crypt csv ctypes curses dataclasses datetime dbm decimal difflib dis distutils doctest email
encodings ensurepip enum errno faulthandler fcntl filecmp fileinput fnmatch fractions ftplib
functools gc genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq hmac html
http idlelib imaplib imghdr imp importlib inspect io ipaddress itertools json keyword lib2to3
linecache locale logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder msilib
msvcrt multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode operator optparse
os ossaudiodev pathlib pdb pickle pickletools pipes pkgutil platform plistlib poplib posix
posixpath pprint profile pstats pty pwd py_compile pyclbr pydoc pydoc_data pyexpat queue quopri
random re readline reprlib resource rlcompleter runpy sched secrets select selectors shelve
shlex shutil signal site smtpd smtplib sndhdr socket socketserver spwd sqlite3 sre_compile
sre_constants sre_parse ssl stat statistics string stringprep struct subprocess sunau symtable
sys sysconfig syslog tabnanny tarfile telnetlib tempfile termios textwrap this threading time
timeit tkinter token tokenize tomllib trace traceback tracemalloc tty turtle turtledemo types
typing unicodedata unittest urllib uu uuid venv warnings wave weakref webbrowser winreg winsound
wsgiref xdrlib xml xmlrpc zipapp zipfile zipimport zlib zoneinfo`) {
		m[name] = true
	}
	return m
}()

// maxSignatureLines bounds how far a def's parameter list is followed: one left open by a
// syntax error must not hide the benchmarks after it.
const maxSignatureLines = 200

// defArgs returns the argument names of a def, `def run_x(model_name, batch=8, *, logger)`:
// model_name and batch (logger and config are the worker's to give; *args and **kwargs take no
// name). The def may span lines: ok is false while its parameter list is not closed in src.
// Commas and parentheses inside brackets, strings and comments do not split or end it.
func defArgs(src string) (args []string, ok bool) {
	_, rest, found := strings.Cut(src, "(")
	if !found {
		return nil, true
	}
	var params []string
	depth, from := 0, 0
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; c {
		case '#':
			nl := strings.IndexByte(rest[i:], '\n')
			if nl < 0 {
				return nil, false
			}
			rest = rest[:i] + strings.Repeat(" ", nl) + rest[i+nl:] // a comment is no parameter text
		case '"', '\'':
			end := pyStringEnd(rest, i)
			if end < 0 {
				return nil, false
			}
			i = end - 1
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
				continue
			}
			if c == ')' {
				params = append(params, rest[from:i])
				return argNames(params), true
			}
		case ',':
			if depth == 0 {
				params = append(params, rest[from:i])
				from = i + 1
			}
		}
	}
	return nil, false
}

// pyStringEnd returns the index just past the Python string literal that starts at s[i] (a
// quote), or -1 when s ends inside it.
func pyStringEnd(s string, i int) int {
	q := s[i : i+1]
	if strings.HasPrefix(s[i:], q+q+q) {
		q = q + q + q
	}
	for j := i + len(q); j < len(s); j++ {
		switch {
		case s[j] == '\\':
			j++
		case strings.HasPrefix(s[j:], q):
			return j + len(q)
		case len(q) == 1 && s[j] == '\n':
			return j // an unclosed one-line string ends with its line
		}
	}
	return -1
}

// argNames returns the names of the parameters of a def that the worker can be given.
func argNames(params []string) []string {
	var out []string
	for _, a := range params {
		a = strings.TrimSpace(a)
		a, _, _ = strings.Cut(a, "=")
		a, _, _ = strings.Cut(a, ":")
		a = strings.TrimSpace(a)
		if a == "" || strings.HasPrefix(a, "*") || a == "/" || a == "logger" || a == "config" || a == "self" || !isIdent(a) {
			continue
		}
		out = append(out, a)
	}
	return out
}
