package run

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// visionPython returns an interpreter with torch and torchvision: the project's .venv when it
// has them, else Debian's; the test skips with the reason when neither has.
func visionPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"../.venv/bin/python", "/usr/bin/python3"} {
		abs, _ := filepath.Abs(py)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := exec.CommandContext(ctx, abs, "-c", "import torch, torchvision").Run()
		cancel()
		if err == nil {
			return abs
		}
	}
	t.Skip("no Python with torch and torchvision (../.venv/bin/python, /usr/bin/python3): the worker cannot build a model")
	return ""
}

// TestWhatNamesAScenarioIsWhatRan: for each way a parameter is set (the definition's model: key,
// --set on an axis, a flag, ${VAR} expansion, include and exclude), the scenario's name, its
// stored parameters and model, and what the worker built (the network's parameter count, the
// variant, the tokens a function was asked for) agree. Issue 23: model: resnet18 built
// ResNet-50, and --set variant=eager ran rows named variant=compiled.
func TestWhatNamesAScenarioIsWhatRan(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: four torch worker processes (about 10 s each on a busy machine)")
	}
	py := visionPython(t)
	// Parameter counts of torchvision's networks at 1000 classes.
	const resnet18, squeezenet = "11689512", "1248424"
	vision := "subject: {kind: worker, adapter: torch_vision}\nload: {warmup_iterations: 0, measurement_iterations: 1}\n"
	tests := []struct {
		name string
		defs string
		sel  Selection
		want []string // per scenario: name, model, params' model or variant, what the worker built
	}{
		{"key, env, include, exclude",
			// the definition's model: key picks the network
			"name: key\nmodel: resnet18\nparams: {device: cpu, image_size: 32}\n" + vision + "---\n" +
				// exclude drops resnet50, include adds the model ${NET} names
				"name: inc\nparams: {device: cpu, image_size: 32}\nmatrix: {model: [resnet18, resnet50]}\nexclude: [{model: resnet50}]\ninclude: [{model: '${NET}'}]\n" + vision,
			Selection{},
			[]string{"default model=resnet18 params.model=resnet18 built=resnet18/" + resnet18,
				"model=resnet18 model=resnet18 params.model=resnet18 built=resnet18/" + resnet18,
				"model=squeezenet1_0 model=squeezenet1_0 params.model=squeezenet1_0 built=squeezenet1_0/" + squeezenet}},
		// --set on two axes: one scenario, named after the model and variant that run
		{"set on axes", "name: b\nparams: {device: cpu, image_size: 32}\nmatrix: {model: [resnet50, squeezenet1_0], variant: [channels_last, eager]}\n" + vision,
			Selection{Set: []string{"model=squeezenet1_0", "variant=eager"}},
			[]string{"model=squeezenet1_0/variant=eager model=squeezenet1_0 params.variant=eager built=squeezenet1_0/" + squeezenet + "/eager"}},
		// --num-tokens-to-generate on a max_new_tokens axis: the function is asked for 3
		{"flag on axis", "name: b\nmodel: f\nsubject: {kind: worker, adapter: pyfunc}\nparams: {file: ../src/tokens.py, function: run_tokens}\nmatrix: {max_new_tokens: [8, 16]}\nload: {warmup_iterations: 0, measurement_iterations: 1}\n",
			Selection{GenerateTokens: 3},
			[]string{"max_new_tokens=3 model=f params.max_new_tokens=3 built=tokens/3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "benches", "b.yaml"), tc.defs)
			writeFile(t, filepath.Join(dir, "src", "tokens.py"), "def run_tokens(max_new_tokens):\n    return {\"tokens\": max_new_tokens}\n")
			sel := tc.sel
			sel.Paths = []string{"benches"}
			out := filepath.Join(t.TempDir(), "results")
			r, err := Run(context.Background(), Options{
				Selection: sel, OutputDir: out, NoStore: true, NoHTMLReport: true, Format: "none",
				Monitor: Monitor{Off: true}, Dir: dir,
				Env: []string{"INFERBENCH_PYTHON=" + py, "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "NET=squeezenet1_0"},
			})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			var got []string
			for _, s := range r.Scenarios {
				if s.Status != result.StatusOK {
					t.Fatalf("%s: %s %s%s", s.ID(), s.Status, s.Error, s.SkipReason)
				}
				got = append(got, describeRan(s))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("scenarios\n got %q\nwant %q", got, tc.want)
			}
			// run.json holds the same.
			saved, err := result.Load(filepath.Join(out, r.ID, "run.json"))
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range saved.Scenarios {
				if d := describeRan(s); d != got[i] {
					t.Errorf("run.json: %q, the run: %q", d, got[i])
				}
			}
		})
	}
}

// describeRan sums up a scenario as the test compares it: its name, model, the parameter the
// case sets, and what the worker reported building.
func describeRan(s result.Scenario) string {
	setup, _ := s.Environment["setup"].(map[string]any)
	if tokens, ok := s.Metrics["tokens"]; ok && tokens.Summary != nil {
		return fmt.Sprintf("%s model=%s params.max_new_tokens=%v built=tokens/%g", s.Scenario, s.Model, s.Params["max_new_tokens"], tokens.Summary.Median)
	}
	built := fmt.Sprintf("%v/%v", setup["model"], setup["parameters"])
	key := "model"
	if _, ok := s.Params["variant"]; ok {
		key = "variant"
		built += fmt.Sprintf("/%v", setup["variant"])
	}
	return fmt.Sprintf("%s model=%s params.%s=%v built=%s", s.Scenario, s.Model, key, s.Params[key], built)
}

// TestModelKeyAgainstSubjectModel: a subject that names its own model must name the definition's.
func TestModelKeyAgainstSubjectModel(t *testing.T) {
	_, err := suite.Parse("benches/x.yaml", []byte("name: x\nmodel: llama\nsubject: {kind: openai, url: 'http://127.0.0.1:1/v1', model: mistral}\n"), nil)
	if err == nil || !strings.Contains(err.Error(), `subject.model "mistral"`) {
		t.Fatalf("err = %v, want the two models named", err)
	}
	bs, err := suite.Parse("benches/x.yaml", []byte("name: x\nmodel: mock\nsubject: {kind: openai, url: 'http://127.0.0.1:1/v1', model: mock}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := bs[0].Params["model"]; ok {
		t.Errorf("params = %v: the subject's model is its own, not a parameter", bs[0].Params)
	}
}

// TestModelKeyIsTheModelParam: a definition's model: is the model its scenarios run (issue 23:
// model: resnet18 benchmarked ResNet-50 because only params.model picked the network), unless
// params, an axis, include or --set say otherwise, and then the scenario's model says so too.
func TestModelKeyIsTheModelParam(t *testing.T) {
	tests := []struct {
		name string
		src  string
		set  map[string]any
		want []string // scenario name: params.model, Scenario.Model()
	}{
		// the key alone picks the network
		{"key", "model: resnet18\nparams: {device: cpu}", nil, []string{"default: resnet18 resnet18"}},
		// params.model wins over the key, and is the scenario's model
		{"params", "model: vision\nparams: {model: resnet50}", nil, []string{"default: resnet50 resnet50"}},
		// a model axis: each scenario's model is its point's
		{"axis", "model: vision\nmatrix: {model: [resnet18, resnet50]}", nil,
			[]string{"model=resnet18: resnet18 resnet18", "model=resnet50: resnet50 resnet50"}},
		// --set on the key's parameter
		{"set", "model: resnet18", map[string]any{"model": "resnet50"}, []string{"default: resnet50 resnet50"}},
		// an include point's model
		{"include", "model: resnet18\nmatrix: {batch_size: [1]}\ninclude: [{batch_size: 2, model: resnet50}]", nil,
			[]string{"batch_size=1: resnet18 resnet18", "batch_size=2/model=resnet50: resnet50 resnet50"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bs, err := suite.Parse("benches/x.yaml", []byte("name: x\nsubject: {kind: worker, adapter: torch_vision}\n"+tc.src), nil)
			if err != nil {
				t.Fatal(err)
			}
			b := bs[0]
			var got []string
			for _, sc := range b.Expand(tc.set) {
				got = append(got, sc.Name+": "+sc.Params.String("model", "")+" "+sc.Model())
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("scenarios\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
