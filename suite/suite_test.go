package suite

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	_ "github.com/inferbench/inferbench/internal/kind/exec"
	_ "github.com/inferbench/inferbench/internal/kind/mock"
	"github.com/inferbench/inferbench/subject"
)

var update = flag.Bool("update", false, "rewrite golden files")

func noEnv(string) (string, bool) { return "", false }

// TestDefinitionErrorsGolden checks the message of every broken definition in testdata/errors
// against its .golden file: file:line:col, the problem, and the hint.
func TestDefinitionErrorsGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/errors/*.yaml")
	if len(files) == 0 {
		t.Fatal("no test definitions")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := parseFile(f, noEnv)
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("want Errors, got %v", err)
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(f, ".yaml") + ".golden"
			if *update {
				os.WriteFile(golden, []byte(got), 0o644)
			}
			want, _ := os.ReadFile(golden)
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func parse(t *testing.T, src string) *Benchmark {
	t.Helper()
	bs, err := Parse("benches/performance/x.yaml", []byte(src), func(k string) (string, bool) {
		if k == "MODEL" {
			return "resnet50", true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	return bs[0]
}

func names(scs []*Scenario) []string {
	out := make([]string, len(scs))
	for i, s := range scs {
		out[i] = s.Name
	}
	return out
}

func TestExpand(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{ // no matrix: one scenario
			"default", "name: a\nsubject: {kind: mock}\n", []string{"default"},
		},
		{ // product in definition order, last axis fastest
			"product", "name: a\nsubject: {kind: mock}\nmatrix:\n  variant: [eager, compiled]\n  batch_size: [1, 8]\n",
			[]string{"variant=eager/batch_size=1", "variant=eager/batch_size=8", "variant=compiled/batch_size=1", "variant=compiled/batch_size=8"},
		},
		{ // exclude drops matching points; a partial exclude drops every point it matches
			"exclude", "name: a\nsubject: {kind: mock}\nmatrix:\n  batch_size: [1, 8, 32]\n  variant: [eager, compiled]\nexclude:\n  - {batch_size: 32, variant: compiled}\n  - {batch_size: 8}\n",
			[]string{"batch_size=1/variant=eager", "batch_size=1/variant=compiled", "batch_size=32/variant=eager"},
		},
		{ // include adds points, with keys outside the axes, and skips duplicates
			"include", "name: a\nsubject: {kind: mock}\nmatrix:\n  batch_size: [1]\ninclude:\n  - {batch_size: 64, dtype: bf16}\n  - {batch_size: 1}\n",
			[]string{"batch_size=1", "batch_size=64/dtype=bf16"},
		},
		{ // null is named null (it was "<nil>"); values holding '/' that clash with no other name
			"null", "name: a\nsubject: {kind: mock}\nmatrix:\n  dtype: [null, float16]\n  model: [org/m]\n",
			[]string{"dtype=null/model=org/m", "dtype=float16/model=org/m"},
		},
		{ // include only, no axes
			"include-only", "name: a\nsubject: {kind: mock}\ninclude:\n  - {variant: eager}\n  - {variant: compiled}\n",
			[]string{"variant=eager", "variant=compiled"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := parse(t, c.src)
			if diff := cmp.Diff(c.want, names(b.Expand(nil))); diff != "" {
				t.Errorf("scenarios (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParamsMergeAndEnv(t *testing.T) {
	b := parse(t, `name: a
model: ${MODEL}
subject: {kind: mock}
params: {dtype: float32, device: "${DEVICE:-cpu}", batch_size: 2}
matrix:
  batch_size: [1, 8]
`)
	if b.Model != "resnet50" || b.Category != "performance" {
		t.Errorf("model %q category %q", b.Model, b.Category)
	}
	scs := b.Expand(map[string]any{"dtype": "bfloat16"})
	// the mock builds no model by name: model: stays a label, not a parameter
	want := subject.Params{"dtype": "bfloat16", "device": "cpu", "batch_size": 8}
	if diff := cmp.Diff(want, scs[1].Params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
}

func TestFilter(t *testing.T) {
	mk := func(name, cat, model string, tags ...string) *Benchmark {
		return &Benchmark{Name: name, Category: cat, Model: model, Tags: tags}
	}
	resnet := mk("resnet50", "performance", "resnet50", "vision")
	llm := mk("llm-mock", "integration", "tiny-llm", "llm")
	llama := &Benchmark{Name: "llama_benchmark.LlamaBenchmark", File: "benches/llama_benchmark.py"}
	llamaFn := &Benchmark{Name: "llama_benchmark.run_llama_benchmark", File: "benches/llama_benchmark.py"}
	mockB := &Benchmark{Name: "mock_benchmark.MockBenchmark", File: "benches/mock_benchmark.py"}
	// Two benchmarks of one YAML file named after the first (benches/performance/llm-mock.yaml).
	llm.File = "benches/llm-mock.yaml"
	vision := &Benchmark{Name: "vision-mock", File: "benches/llm-mock.yaml"}
	matmul := &Benchmark{Name: "python-matmul", File: "benches/exec-python.yaml"}
	scs := []*Scenario{
		{Benchmark: resnet, Name: "batch_size=1"},
		{Benchmark: resnet, Name: "batch_size=8"},
		{Benchmark: llm, Name: "variant=eager"},
		{Benchmark: llama, Name: "default"},
		{Benchmark: llamaFn, Name: "default"},
		{Benchmark: mockB, Name: "default"},
		{Benchmark: vision, Name: "default"},
		{Benchmark: matmul, Name: "default"},
	}
	cases := []struct {
		name string
		f    Filter
		want []string
	}{
		{"everything", Filter{}, []string{"resnet50/batch_size=1", "resnet50/batch_size=8", "llm-mock/variant=eager", "llama_benchmark.LlamaBenchmark/default", "llama_benchmark.run_llama_benchmark/default", "mock_benchmark.MockBenchmark/default", "vision-mock/default", "python-matmul/default"}},
		{"include benchmark glob", Filter{Include: []string{"res*"}}, []string{"resnet50/batch_size=1", "resnet50/batch_size=8"}},
		{"include scenario glob", Filter{Include: []string{"*/batch_size=8"}}, []string{"resnet50/batch_size=8"}},
		{"exclude wins over include", Filter{Include: []string{"res*", "llm*"}, Exclude: []string{"resnet50/batch_size=1"}}, []string{"resnet50/batch_size=8", "llm-mock/variant=eager"}},
		{"category", Filter{Category: []string{"integration"}}, []string{"llm-mock/variant=eager"}},
		{"model glob", Filter{Model: []string{"tiny-*"}}, []string{"llm-mock/variant=eager"}},
		{"tag", Filter{Tag: []string{"vision"}}, []string{"resnet50/batch_size=1", "resnet50/batch_size=8"}},
		{"class glob", Filter{Include: []string{"*batch_size=[18]"}}, []string{"resnet50/batch_size=1", "resnet50/batch_size=8"}},
		// seed 004: --include llama_benchmark names the file llama_benchmark.py (selected nothing before)
		{"include bare file name", Filter{Include: []string{"llama_benchmark"}}, []string{"llama_benchmark.LlamaBenchmark/default", "llama_benchmark.run_llama_benchmark/default"}},
		{"include bare part of a name", Filter{Include: []string{"LlamaBenchmark"}}, []string{"llama_benchmark.LlamaBenchmark/default"}},
		// seed 004: --exclude mock_benchmark drops the mock file's benchmarks (was a silent no-op)
		{"exclude bare file name", Filter{Exclude: []string{"mock_benchmark", "llama_benchmark"}}, []string{"resnet50/batch_size=1", "resnet50/batch_size=8", "llm-mock/variant=eager", "vision-mock/default", "python-matmul/default"}},
		{"bare name is not a substring", Filter{Include: []string{"llama"}}, nil},
		// a bare name that is a benchmark's name selects that benchmark, not the others of the
		// file of the same name (--include llm-mock also selected vision-mock before)
		{"bare benchmark name wins over its file", Filter{Include: []string{"llm-mock"}}, []string{"llm-mock/variant=eager"}},
		{"bare benchmark name excludes only it", Filter{Exclude: []string{"llm-mock"}, Category: []string{""}}, []string{"llama_benchmark.LlamaBenchmark/default", "llama_benchmark.run_llama_benchmark/default", "mock_benchmark.MockBenchmark/default", "vision-mock/default", "python-matmul/default"}},
		// a bare name that names no benchmark names a file: all its benchmarks
		{"bare file name naming no benchmark", Filter{Include: []string{"exec-python"}}, []string{"python-matmul/default"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, s := range c.f.Select(scs) {
				got = append(got, s.ID())
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// A pattern that names nothing is reported, not silently ignored.
	f := Filter{Include: []string{"llama_benchmark", "llama"}, Exclude: []string{"old_benchmark"}}
	if diff := cmp.Diff([]string{"--include llama", "--exclude old_benchmark"}, f.Unmatched(scs)); diff != "" {
		t.Errorf("Unmatched (-want +got):\n%s", diff)
	}
}

// TestDiscoverSeedLayouts: seed 000's benchmarks/{unit,integration,performance}/ and
// src/**/models/NAME/benchmarks/, beside benches/; the model comes from models/NAME/ when the
// definition names none. These files were not found before.
func TestDiscoverSeedLayouts(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	write("benchmarks/unit/u.yaml", "name: u\nsubject: {kind: mock}\n")
	write("benchmarks/integration/i.yaml", "name: i\nsubject: {kind: mock}\n")
	write("benchmarks/performance/p.yml", "name: p\nsubject: {kind: mock}\n")
	write("src/pkg/models/qwen3/benchmarks/performance/q.yaml", "name: q\nsubject: {kind: mock}\n")
	write("src/pkg/models/glm4/benchmarks/unit/g.yaml", "name: g\nmodel: glm-4-9b\nsubject: {kind: mock}\n")
	write("models/bert/benches/b.yaml", "name: b\nsubject: {kind: mock}\n")
	write("benchmarks/scripts/not-a-definition.yaml", "x: 1\n") // benchmarks/ outside a category folder
	write("benches/unit/a.yaml", "name: a\nsubject: {kind: mock}\n")
	bs, err := Load(noEnv, root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, b := range bs {
		got[b.Name] = b.Category + " " + b.Model
	}
	want := map[string]string{
		"a": "unit ", "u": "unit ", "i": "integration ", "p": "performance ",
		"q": "performance qwen3", "g": "unit glm-4-9b", "b": " bert",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("name → category model (-want +got):\n%s", diff)
	}
	// A root named benchmarks finds what the project finds there (its scripts/ are not read,
	// and are named as unread).
	files, err := Discover(filepath.Join(root, "benchmarks"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Errorf("Discover(benchmarks) = %v, want the 3 files of its category folders", files)
	}
	if u := Unread(filepath.Join(root, "benchmarks")); len(u) != 1 || !strings.HasSuffix(u[0], "not-a-definition.yaml") {
		t.Errorf("Unread(benchmarks) = %v, want scripts/not-a-definition.yaml", u)
	}
	d := SearchDescription([]string{root})
	for _, w := range []string{root, "*.yaml", "benches/", "benchmarks/{unit,integration,performance}/", "models/NAME/"} {
		if !strings.Contains(d, w) {
			t.Errorf("SearchDescription = %q, want it to say %q", d, w)
		}
	}
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	write("benches/unit/a.yaml", "name: a\nsubject: {kind: mock}\n")
	write("models/resnet50/benches/performance/b.yml", "name: b\nsubject: {kind: mock}\n")
	write("config/not-a-bench.yaml", "x: 1\n")
	write("node_modules/benches/c.yaml", "name: c\nsubject: {kind: mock}\n")
	bs, err := Load(noEnv, root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, b := range bs {
		got[b.Name] = b.Category
	}
	if diff := cmp.Diff(map[string]string{"a": "unit", "b": "performance"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	write("benches/dup.yaml", "name: a\nsubject: {kind: mock}\n")
	if _, err := Load(noEnv, root); err == nil || !strings.Contains(err.Error(), "also defined at") {
		t.Errorf("duplicate name: err = %v", err)
	}
}

func TestRequirements(t *testing.T) {
	b := parse(t, "name: a\nsubject: {kind: exec, command: [x]}\nrequires: [env:INFERBENCH_TEST_REQ, command:definitely-not-a-command-xyz]\n")
	sc := b.Expand(nil)[0]
	c := &Checker{LookupEnv: noEnv}
	if why := c.Check(sc); !strings.Contains(why, "INFERBENCH_TEST_REQ") {
		t.Errorf("env requirement: %q", why)
	}
	c = &Checker{LookupEnv: func(string) (string, bool) { return "1", true }}
	if why := c.Check(sc); !strings.Contains(why, "definitely-not-a-command-xyz: not on PATH") {
		t.Errorf("command requirement: %q", why)
	}
	mock := parse(t, "name: m\nsubject: {kind: mock}\n").Expand(nil)[0]
	if why := (&Checker{}).Check(mock); !strings.Contains(why, "--enable-mock") {
		t.Errorf("mock without --enable-mock: %q", why)
	}
	if why := (&Checker{EnableMock: true}).Check(mock); why != "" {
		t.Errorf("mock with --enable-mock: %q", why)
	}
}

func TestExpandEnv(t *testing.T) {
	env := func(k string) (string, bool) {
		m := map[string]string{"A": "x", "EMPTY": ""}
		v, ok := m[k]
		return v, ok
	}
	cases := []struct{ in, want, err string }{
		{"${A}", "x", ""},
		{"pre-${A}-post", "pre-x-post", ""},
		{"${B:-def}", "def", ""},
		{"${EMPTY:-def}", "def", ""},
		{"${EMPTY}", "", ""},
		{"$$HOME", "$HOME", ""},
		{"${B}", "", "B is not set"},
		{"${A", "", "unterminated"},
	}
	for _, c := range cases {
		got, err := expandEnvVars(c.in, env)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestBounds checks that a definition too large, too deep or with too many keys in one mapping
// is refused with its position, before the YAML parser (quadratic in a mapping's keys, recursive
// in depth) sees it.
func TestBounds(t *testing.T) {
	var keys strings.Builder
	keys.WriteString("name: k\nsubject: {kind: mock}\nparams:\n")
	for i := range maxKeys + 1 {
		fmt.Fprintf(&keys, "  k%d: 1\n", i)
	}
	// A list of small mappings is many keys, but not in one mapping.
	var list strings.Builder
	list.WriteString("name: l\nsubject: {kind: mock}\nparams:\n  xs:\n")
	for i := range 2 * maxKeys {
		fmt.Fprintf(&list, "    - a: %d\n      b: 2\n", i)
	}
	for _, tc := range []struct {
		name, src, want string
	}{
		// One mapping over MaxKeys: refused at the first key past the bound.
		{"keys", keys.String(), fmt.Sprintf("x.yaml:%d:3: a mapping with more than %d keys", maxKeys+4, maxKeys)},
		// Many small mappings in a list are fine.
		{"list", list.String(), ""},
		// Flow nesting far past MaxDepth.
		{"flow-depth", "name: d\nsubject: {kind: mock}\nparams: {a: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}\n", "x.yaml:3:"},
		// Block nesting past MaxDepth.
		{"block-depth", "name: d\nsubject: {kind: mock}\nparams:\n" + blockNest(maxDepth+2), "values nested more than"},
		// A file over MaxFileSize.
		{"size", "name: s\nsubject: {kind: mock}\ndescription: " + strings.Repeat("x", maxFileSize) + "\n", "over the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.src), noEnv)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func blockNest(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%sk%d:\n", strings.Repeat("  ", i+1), i)
	}
	return b.String()
}

// TestDiscoverNamedFolder: the folder a user names, however (".", a relative path, from inside
// it), finds what discovery from the project finds there, and nothing else. Before, `cd benches &&
// inferbench run .` found nothing (exit 2), as did "." inside seed 003's benchmarks/ and seed
// 000's benchmarks/unit/, while naming benchmarks made its helper config.py a benchmark file.
func TestDiscoverNamedFolder(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	write("pyproject.toml", "")
	write("benches/a.yaml", "name: a\nsubject: {kind: mock}\n")
	write("benches/unit/b.yaml", "name: b\nsubject: {kind: mock}\n")
	write("benchmarks/unit/u.yaml", "name: u\nsubject: {kind: mock}\n")
	write("benchmarks/flat.yaml", "name: f\nsubject: {kind: mock}\n")
	for _, tc := range []struct {
		cwd, root string
		want      []string // base names
	}{
		{"benches", ".", []string{"a.yaml", "b.yaml"}},
		{"benches/unit", ".", []string{"b.yaml"}},
		{"benches/unit", "..", []string{"a.yaml", "b.yaml"}},
		{"benchmarks", ".", []string{"u.yaml"}},
		{"benchmarks/unit", ".", []string{"u.yaml"}},
		{".", "benchmarks", []string{"u.yaml"}},
		{"benchmarks", "../benches", []string{"a.yaml", "b.yaml"}},
	} {
		t.Chdir(filepath.Join(root, tc.cwd))
		files, err := Discover(tc.root)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range files {
			got = append(got, filepath.Base(f))
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("in %s, Discover(%q) = %v, want %v", tc.cwd, tc.root, got, tc.want)
		}
	}
	t.Chdir(filepath.Join(root, "benchmarks"))
	if u := Unread("."); len(u) != 1 || filepath.Base(u[0]) != "flat.yaml" {
		t.Errorf("Unread(.) in benchmarks = %v, want flat.yaml named", u)
	}
}
