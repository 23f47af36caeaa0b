package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/subject/worker"
	"github.com/inferbench/inferbench/suite"
)

func init() {
	quickRuns = append(quickRuns, func() QuickRun { return &frameworkQuick{} })
}

// frameworkQuick is `inferbench run --framework pytorch --model resnet50 --batch-sizes 1 4`: a
// vision model benchmark in a framework worker without a definition. Each model becomes one
// benchmark with a matrix over framework, batch size, and dtype and variant when given.
type frameworkQuick struct {
	framework  string
	batchSizes []int
	dtypes     []string
	variants   []string
	device     string
	imageSize  int
	threads    int
}

func (q *frameworkQuick) Flags(f *pflag.FlagSet) {
	f.StringVar(&q.framework, "framework", "", "benchmark a vision model in a framework worker: pytorch, jax or both (with --model resnet50, vit_b_16, both, or any torchvision model)")
	f.IntSliceVar(&q.batchSizes, "batch-sizes", []int{1}, "with --framework: batch sizes, e.g. --batch-sizes 1 8 32")
	f.StringSliceVar(&q.dtypes, "dtype", nil, "with --framework: float32, float16, bfloat16 (several make a matrix axis)")
	f.StringSliceVar(&q.variants, "variant", nil, "with --framework: eager, compiled, channels_last (default: eager in pytorch, jit in jax)")
	f.StringVar(&q.device, "device", "auto", "with --framework: auto (cuda > mps > cpu), cpu, cuda, cuda:N, mps")
	f.IntVar(&q.imageSize, "image-size", 224, "with --framework: input height and width")
	f.IntVar(&q.threads, "threads", 0, "with --framework: torch intra-op threads (0: the framework's default)")
}

// quickModels are the names --model both stands for.
var quickModels = []string{"resnet50", "vit_b_16"}

func (q *frameworkQuick) Benchmarks(o *IO, sel *selection) ([]*suite.Benchmark, error) {
	if q.framework == "" {
		return nil, nil
	}
	var frameworks []any
	switch q.framework {
	case "pytorch", "torch":
		frameworks = []any{"pytorch"}
	case "jax":
		frameworks = []any{"jax"}
	case "both":
		frameworks = []any{"pytorch", "jax"}
	default:
		return nil, usageErr("--framework %q: want pytorch, jax or both", q.framework)
	}
	var models []string
	for _, m := range sel.filter.Model {
		if m == "both" {
			models = append(models, quickModels...)
		} else {
			models = append(models, m)
		}
	}
	if len(models) == 0 {
		models = []string{"resnet50"}
	}
	sel.filter.Model = models // the names, not "both", select the benchmarks made here
	if len(q.batchSizes) == 0 {
		return nil, usageErr("--batch-sizes: give at least one")
	}
	batches := make([]any, len(q.batchSizes))
	for i, b := range q.batchSizes {
		if b < 1 {
			return nil, usageErr("--batch-sizes: %d is not a positive batch size", b)
		}
		batches[i] = b
	}
	for _, d := range q.dtypes {
		switch d {
		case "float32", "float16", "bfloat16", "fp32", "fp16", "bf16":
		default:
			return nil, usageErr("--dtype %q: want float32, float16 or bfloat16", d)
		}
	}
	var out []*suite.Benchmark
	for _, m := range models {
		params := map[string]any{"model": m, "device": q.device, "image_size": q.imageSize}
		if q.threads > 0 {
			params["threads"] = q.threads
		}
		axes := []suite.Axis{{Name: "framework", Values: frameworks}, {Name: "batch_size", Values: batches}}
		if len(q.dtypes) > 0 {
			axes = append(axes, suite.Axis{Name: "dtype", Values: anys(q.dtypes)})
		}
		if len(q.variants) > 0 {
			axes = append(axes, suite.Axis{Name: "variant", Values: anys(q.variants)})
		}
		out = append(out, &suite.Benchmark{
			Name: m, Model: m, Category: "performance", Tags: []string{"vision"},
			Description: fmt.Sprintf("%s inference with random weights", m),
			Kind:        "worker", Config: &worker.Config{Adapter: "vision"},
			File: "(command line)", Dir: workDir(o), Params: params, Axes: axes,
		})
	}
	return out, nil
}

// listFlags are the flags whose values may also be given space-separated, as other benchmark
// runners take them (--batch-sizes 1 8 32), with the test a following word must pass to be one.
var listFlags = map[string]func(string) bool{
	"--batch-sizes": func(s string) bool { _, err := strconv.Atoi(s); return err == nil },
	"--dtype": func(s string) bool {
		switch s {
		case "float32", "float16", "bfloat16", "fp32", "fp16", "bf16":
			return true
		}
		return false
	},
	"--variant": func(s string) bool {
		switch s {
		case "eager", "compiled", "channels_last", "compiled_channels_last", "kernelized":
			return true
		}
		return false
	},
}

// joinListFlags rewrites "--batch-sizes 1 8 32" as "--batch-sizes 1,8,32" (and likewise for the
// other listFlags), leaving everything after "--" alone.
func joinListFlags(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		ok := listFlags[a]
		if ok == nil || i+1 >= len(args) {
			out = append(out, a)
			continue
		}
		vals := []string{args[i+1]}
		i++
		for i+1 < len(args) && ok(args[i+1]) {
			vals = append(vals, args[i+1])
			i++
		}
		out = append(out, a, strings.Join(vals, ","))
	}
	return out
}
