// Package doctor says what inferbench's framework adapters will run with here: which Python
// interpreter the workers start (and why that one: package pyenv), and for every adapter the
// modules it imports, with their versions or the reason they do not import; and whether
// instruction mode (valgrind) is available. The interpreter is
// asked once, in one process, importing each module for real (a wheel that installs but cannot
// load its libraries shows here, not in the middle of a run).
package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inferbench/inferbench/internal/base/callgrind"
	"github.com/inferbench/inferbench/internal/base/pyenv"
)

// Module is one Python module as the interpreter sees it.
type Module struct {
	Name     string `json:"name"`
	Version  string `json:"version,omitempty"`
	Detail   string `json:"detail,omitempty"` // devices, providers, compile support
	Error    string `json:"error,omitempty"`  // why it does not import
	Optional bool   `json:"optional,omitempty"`
}

// Adapter is one worker adapter and the modules it needs.
type Adapter struct {
	Name    string   `json:"name"`
	Ready   bool     `json:"ready"` // every required module imports
	Modules []Module `json:"modules"`
}

// Report is what doctor found.
type Report struct {
	Python     pyenv.Interpreter `json:"python"`
	Version    string            `json:"python_version,omitempty"`
	Executable string            `json:"executable,omitempty"` // sys.executable
	Prefix     string            `json:"prefix,omitempty"`     // sys.prefix: the venv's root in a venv
	Error      string            `json:"error,omitempty"`      // the interpreter did not answer
	Adapters   []Adapter         `json:"adapters"`
	// Instructions says whether instruction mode (--measure instructions) can run here.
	Instructions Instructions `json:"instructions"`
}

// Instructions is instruction mode's availability: valgrind found, and whether Go functions can
// be counted (callgrind's client requests are issued on amd64 only).
type Instructions struct {
	Available bool   `json:"available"`
	Valgrind  string `json:"valgrind,omitempty"` // its version
	Error     string `json:"error,omitempty"`    // why not, with the package to install
	GoFuncs   string `json:"go_functions,omitempty"`
}

func instructions() Instructions {
	var in Instructions
	v, err := callgrind.Find()
	if err != nil {
		in.Error = err.Error()
		return in
	}
	in.Available, in.Valgrind = true, v.Version
	if err := callgrind.Supported(); err != nil {
		in.GoFuncs = err.Error()
	}
	return in
}

// Options say what to check.
type Options struct {
	Python   pyenv.Interpreter   // the interpreter asked
	Required map[string][]string // adapter -> modules it needs (worker.Adapters)
	Optional map[string][]string // adapter -> modules some variants use (worker.Optional)
	Timeout  time.Duration       // for the interpreter's answer (default 5 minutes: imports of torch, JAX and transformers)
}

// probe imports each module named on the command line and prints one JSON object.
const probe = `
import importlib, json, platform, sys
out = {"version": platform.python_implementation() + " " + platform.python_version(),
       "executable": sys.executable, "prefix": sys.prefix, "modules": {}}
def detail(name, m):
    try:
        if name == "torch":
            cuda = m.cuda.is_available()
            return "cuda %s%s; torch.compile %s" % (m.version.cuda or "none",
                " (%d GPU)" % m.cuda.device_count() if cuda else " (no GPU)",
                "yes" if hasattr(m, "compile") else "no (torch < 2)")
        if name == "jax":
            return "devices " + ", ".join(sorted({d.platform for d in m.devices()}))
        if name == "onnxruntime":
            return "providers " + ", ".join(m.get_available_providers())
    except Exception as e:
        return "error: %s" % e
    return ""
for name in sys.argv[1:]:
    try:
        m = importlib.import_module(name)
        v = getattr(m, "__version__", None)
        if v is None:
            try:
                import importlib.metadata as md
                v = md.version(name)
            except Exception:
                v = "?"
        out["modules"][name] = {"version": str(v), "detail": detail(name, m)}
    except BaseException as e:
        out["modules"][name] = {"error": "%s: %s" % (type(e).__name__, e)}
print(json.dumps(out))
`

// Check asks the interpreter about every adapter's modules.
func Check(ctx context.Context, o Options) Report {
	r := Report{Python: o.Python, Instructions: instructions()}
	set := map[string]bool{}
	for _, mods := range o.Required {
		for _, m := range mods {
			set[m] = true
		}
	}
	for _, mods := range o.Optional {
		for _, m := range mods {
			set[m] = true
		}
	}
	names := slices.Sorted(maps.Keys(set))
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var answer struct {
		Version, Executable, Prefix string
		Modules                     map[string]struct{ Version, Detail, Error string }
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, o.Python.Path, append([]string{"-c", probe}, names...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err == nil {
		err = json.Unmarshal(out, &answer)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 500 {
			msg = "..." + msg[len(msg)-500:]
		}
		r.Error = fmt.Sprintf("%s did not answer: %v %s", o.Python.Path, err, msg)
	}
	r.Version, r.Executable, r.Prefix = answer.Version, answer.Executable, answer.Prefix
	module := func(name string, optional bool) Module {
		m := Module{Name: name, Optional: optional}
		a, ok := answer.Modules[name]
		switch {
		case !ok:
			m.Error = "not checked"
		case a.Error != "":
			m.Error = a.Error
		default:
			m.Version, m.Detail = a.Version, a.Detail
		}
		return m
	}
	for _, name := range slices.Sorted(maps.Keys(o.Required)) {
		a := Adapter{Name: name, Ready: r.Error == ""}
		for _, m := range o.Required[name] {
			mod := module(m, false)
			a.Ready = a.Ready && mod.Error == ""
			a.Modules = append(a.Modules, mod)
		}
		for _, m := range o.Optional[name] {
			a.Modules = append(a.Modules, module(m, true))
		}
		r.Adapters = append(r.Adapters, a)
	}
	return r
}

// WriteText prints the report as a table.
func (r Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "python: %s (chosen by %s)", r.Python.Path, sourceText(r.Python.Source))
	if r.Version != "" {
		fmt.Fprintf(w, ": %s, sys.prefix %s", r.Version, r.Prefix)
	}
	fmt.Fprintln(w)
	if r.Error != "" {
		fmt.Fprintf(w, "error: %s\n", r.Error)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "adapter\tstatus\tmodule\tversion\tdetail")
	for _, a := range r.Adapters {
		status := "ready"
		if !a.Ready {
			status = "missing"
		}
		if len(a.Modules) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\t\t(standard library only)\n", a.Name, status)
		}
		for i, m := range a.Modules {
			name, st := a.Name, status
			if i > 0 {
				name, st = "", ""
			}
			mod := m.Name
			if m.Optional {
				mod += " (optional)"
			}
			ver, detail := m.Version, m.Detail
			if m.Error != "" {
				ver, detail = "-", m.Error
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, st, mod, ver, detail)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	in := r.Instructions
	switch {
	case !in.Available:
		_, err := fmt.Fprintf(w, "instruction mode (--measure instructions): unavailable: %s\n", in.Error)
		return err
	case in.GoFuncs != "":
		_, err := fmt.Fprintf(w, "instruction mode (--measure instructions): valgrind %s, commands and Python; not Go functions: %s\n", in.Valgrind, in.GoFuncs)
		return err
	}
	_, err := fmt.Fprintf(w, "instruction mode (--measure instructions): available (valgrind %s): commands, Go functions, Python functions and models\n", in.Valgrind)
	return err
}

func sourceText(s string) string {
	switch s {
	case "INFERBENCH_PYTHON":
		return "$INFERBENCH_PYTHON"
	case "VIRTUAL_ENV":
		return "the active virtual environment, $VIRTUAL_ENV"
	case "CONDA_PREFIX":
		return "the active conda environment, $CONDA_PREFIX"
	case "PATH":
		return "python3 on $PATH"
	case "flag":
		return "--python"
	}
	return "default: no venv active, no python3 on $PATH"
}
