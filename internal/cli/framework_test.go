package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJoinListFlags(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		// space-separated batch sizes, as other runners take them
		{"batch sizes", "run --batch-sizes 1 8 32 --iterations 10", "run --batch-sizes 1,8,32 --iterations 10"},
		// a following path is not a batch size
		{"path after", "run --batch-sizes 1 4 benches", "run --batch-sizes 1,4 benches"},
		{"dtypes", "run --dtype float32 bfloat16 --variant eager compiled", "run --dtype float32,bfloat16 --variant eager,compiled"},
		{"already joined", "run --batch-sizes 1,8", "run --batch-sizes 1,8"},
		// everything after -- is left alone
		{"after dashes", "run -- --batch-sizes 1 2", "run -- --batch-sizes 1 2"},
		{"flag last", "run --batch-sizes", "run --batch-sizes"},
	}
	for _, tc := range tests {
		got := strings.Join(joinListFlags(strings.Fields(tc.in)), " ")
		if got != tc.want {
			t.Errorf("%s: joinListFlags(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestFrameworkQuickRun(t *testing.T) {
	tests := []struct {
		name string
		args string
		want []string // scenario ids (dry run)
		code int
	}{
		{"both frameworks and models", "--framework both --model both --batch-sizes 1 4", []string{
			"resnet50/framework=pytorch/batch_size=1", "resnet50/framework=pytorch/batch_size=4",
			"resnet50/framework=jax/batch_size=1", "resnet50/framework=jax/batch_size=4",
			"vit_b_16/framework=pytorch/batch_size=1", "vit_b_16/framework=pytorch/batch_size=4",
			"vit_b_16/framework=jax/batch_size=1", "vit_b_16/framework=jax/batch_size=4",
		}, 0},
		{"dtype and variant axes", "--framework pytorch --model resnet18 --dtype float32 bfloat16 --variant compiled", []string{
			"resnet18/framework=pytorch/batch_size=1/dtype=float32/variant=compiled",
			"resnet18/framework=pytorch/batch_size=1/dtype=bfloat16/variant=compiled",
		}, 0},
		{"default model", "--framework jax", []string{"resnet50/framework=jax/batch_size=1"}, 0},
		{"unknown framework", "--framework tensorflow", nil, ExitUsage},
		{"bad dtype", "--framework pytorch --dtype int8", nil, ExitUsage},
		{"bad batch", "--framework pytorch --batch-sizes 0", nil, ExitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{"run", "--dry-run"}, strings.Fields(tc.args)...)
			code := Main(context.Background(), args, IO{Stdout: &out, Stderr: &errb, Env: []string{}, Dir: t.TempDir()})
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, errb.String())
			}
			if tc.code != 0 {
				return
			}
			var ids []string
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				ids = append(ids, strings.Split(line, "\t")[0])
			}
			if diff := cmp.Diff(tc.want, ids); diff != "" {
				t.Errorf("scenarios (-want +got):\n%s", diff)
			}
		})
	}
}
