package scaleout

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// matrix returns n scenario IDs shaped like a model matrix, and costs for some of them.
func matrix(n int, withCosts bool) []Item {
	items := make([]Item, n)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range items {
		items[i].ID = fmt.Sprintf("model-%d/batch_size=%d,dtype=%s", i%37, 1<<(i%6), []string{"fp16", "bf16", "fp32"}[i%3]) + "," + strconv.Itoa(i)
		if withCosts && i%5 != 0 { // a fifth have no history
			items[i].Cost = 1 + 100*rng.Float64()*rng.Float64()
		}
	}
	return items
}

// TestEveryScenarioExactlyOnce is the coverage bar: for n = 1..64, with and without costs,
// the shards' selections are disjoint and together hold every scenario.
func TestEveryScenarioExactlyOnce(t *testing.T) {
	for _, size := range []int{0, 1, 7, 64, 65, 300} {
		for _, costs := range []bool{false, true} {
			items := matrix(size, costs)
			for n := 1; n <= 64; n++ {
				seen := make([]int, len(items))
				var digest string
				for i := range n {
					mine, plan, err := Select(items, Spec{Index: i, Count: n})
					if err != nil {
						t.Fatal(err)
					}
					if digest == "" {
						digest = plan.Digest
					} else if plan.Digest != digest {
						t.Fatalf("size %d n %d: shard %d planned %s, shard 0 %s", size, n, i, plan.Digest, digest)
					}
					for _, k := range mine {
						seen[k]++
					}
				}
				for k, c := range seen {
					if c != 1 {
						t.Fatalf("size %d costs %v n %d: scenario %s is in %d shards", size, costs, n, items[k].ID, c)
					}
				}
			}
		}
	}
}

// TestCountBalance: without costs, shard sizes differ by at most one.
func TestCountBalance(t *testing.T) {
	items := matrix(1000, false)
	for n := 1; n <= 64; n++ {
		where, plan, err := Assign(items, n)
		if err != nil {
			t.Fatal(err)
		}
		sizes := make([]int, n)
		for _, w := range where {
			sizes[w]++
		}
		if slices.Max(sizes)-slices.Min(sizes) > 1 || plan.Balance != "count" {
			t.Fatalf("n %d: sizes %v (balance %s)", n, sizes, plan.Balance)
		}
	}
}

// TestCostBalance: with costs, the longest shard is within LPT's bound of the ideal, and far
// better than dealing by count.
func TestCostBalance(t *testing.T) {
	items := matrix(400, true)
	for _, n := range []int{2, 8, 16} {
		_, plan, err := Assign(items, n)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Balance != "cost" {
			t.Fatalf("balance %s", plan.Balance)
		}
		total, biggest := 0.0, 0.0
		for _, l := range plan.Loads {
			total += l
		}
		costs, _ := fillCosts(items, func() []int {
			o := make([]int, len(items))
			for i := range o {
				o[i] = i
			}
			return o
		}())
		for _, c := range costs {
			biggest = max(biggest, c)
		}
		lower := max(total/float64(n), biggest) // no assignment beats this
		if got := slices.Max(plan.Loads); got > lower*4/3+1e-9 {
			t.Errorf("n %d: longest shard %.1f s, bound %.1f s", n, got, lower*4/3)
		}
	}
}

// TestOrderIndependent: the input order (a map's, a filesystem's) does not change the plan.
func TestOrderIndependent(t *testing.T) {
	items := matrix(300, true)
	where, plan, _ := Assign(items, 7)
	want := map[string]int{}
	for i, w := range where {
		want[items[i].ID] = w
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5 {
		shuffled := slices.Clone(items)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		w2, p2, _ := Assign(shuffled, 7)
		if p2.Digest != plan.Digest {
			t.Fatal("digest depends on order")
		}
		for i, w := range w2 {
			if want[shuffled[i].ID] != w {
				t.Fatalf("%s moved from shard %d to %d", shuffled[i].ID, want[shuffled[i].ID], w)
			}
		}
	}
}

// fingerprint hashes a whole assignment.
func fingerprint(t *testing.T, items []Item, n int) string {
	where, plan, err := Assign(items, n)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for i, w := range where {
		fmt.Fprintf(h, "%s=%d\n", items[i].ID, w)
	}
	return plan.Digest + ":" + hex.EncodeToString(h.Sum(nil))
}

// TestStableAcrossProcesses runs the assignment in fresh processes (new map seeds, new
// address-space layout) and compares it with this one's.
func TestStableAcrossProcesses(t *testing.T) {
	if os.Getenv("SHARD_HELPER") != "" {
		return
	}
	var want []string
	for _, n := range []int{1, 3, 8, 64} {
		want = append(want, fingerprint(t, matrix(500, false), n), fingerprint(t, matrix(500, true), n))
	}
	for p := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPrint$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SHARD_HELPER=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper process %d: %v\n%s", p, err, out)
		}
		var got []string
		for _, l := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(l, "FP "); ok {
				got = append(got, v)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("process %d planned differently:\n got %v\nwant %v", p, got, want)
		}
	}
}

func TestHelperPrint(t *testing.T) {
	if os.Getenv("SHARD_HELPER") == "" {
		t.Skip("helper for TestStableAcrossProcesses")
	}
	for _, n := range []int{1, 3, 8, 64} {
		fmt.Printf("FP %s\nFP %s\n", fingerprint(t, matrix(500, false), n), fingerprint(t, matrix(500, true), n))
	}
}

// TestGolden pins the assignment of a small suite: a change of algorithm breaks the shards of a
// group that mixes versions, so it must be deliberate (and the digest changes with it).
func TestGolden(t *testing.T) {
	items := []Item{{ID: "a/1"}, {ID: "a/2"}, {ID: "b/1"}, {ID: "b/2"}, {ID: "c/1"}}
	where, plan, _ := Assign(items, 2)
	got := fmt.Sprint(where, " ", plan.Digest)
	const want = "[0 1 0 1 0] 3f4a18ab758a0ebc6d113c87"
	if got != want {
		t.Errorf("assignment changed: got %q, want %q", got, want)
	}
}

func TestDuplicate(t *testing.T) {
	if _, _, err := Assign([]Item{{ID: "a/1"}, {ID: "a/1"}}, 2); err == nil || !strings.Contains(err.Error(), `"a/1"`) {
		t.Errorf("err = %v", err)
	}
}

func TestParse(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	for _, c := range []struct {
		name, v string
		env     func(string) (string, bool)
		want    Spec
		err     string
	}{
		{"flag", "3/8", env(), Spec{3, 8}, ""},
		{"index is 0-based", "8/8", env(), Spec{}, "0-based"},
		{"garbage", "three", env(), Spec{}, "INDEX/COUNT"},
		{"kubernetes", "auto", env("JOB_COMPLETION_INDEX", "5", "JOB_COMPLETIONS", "16"), Spec{5, 16}, ""},
		{"kubernetes without count", "auto", env("JOB_COMPLETION_INDEX", "5"), Spec{}, "JOB_COMPLETIONS"},
		{"slurm from 0", "auto", env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "0"), Spec{2, 4}, ""},
		{"slurm from 1", "auto", env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "1"), Spec{3, 4}, ""},
		{"slurm with a step", "auto", env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_STEP", "2"), Spec{}, "contiguous"},
		{"explicit env wins", "auto", env("INFERBENCH_SHARD", "1/2", "JOB_COMPLETION_INDEX", "5"), Spec{1, 2}, ""},
		{"nothing", "auto", env(), Spec{}, "no shard in the environment"},
	} {
		got, err := Parse(c.v, c.env)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	g := GroupFromEnv(env("SLURM_ARRAY_JOB_ID", "991"))
	if g != "slurm-991" {
		t.Errorf("slurm group %q", g)
	}
	if g := GroupFromEnv(env("GITHUB_RUN_ID", "5", "GITHUB_RUN_ATTEMPT", "2", "SLURM_ARRAY_JOB_ID", "")); g != "gha-5-2" {
		t.Errorf("gha group %q", g)
	}
	for _, c := range []struct {
		env  []string
		want string
	}{
		// An Indexed Job's pod: host <job name>-<index>.
		{[]string{"JOB_COMPLETION_INDEX", "3", "HOSTNAME", "matrix-a7-3"}, "matrix-a7"},
		// Index 1 of a Job whose name ends in -1: only the last -1 is the index.
		{[]string{"JOB_COMPLETION_INDEX", "1", "HOSTNAME", "run-1-1"}, "run-1"},
		// A hostname the template set (no -<index> suffix): no group.
		{[]string{"JOB_COMPLETION_INDEX", "3", "HOSTNAME", "bench-box"}, ""},
		{[]string{"JOB_COMPLETION_INDEX", "3", "HOSTNAME", "-3"}, ""},
		// A host name alone, outside Kubernetes: no group.
		{[]string{"HOSTNAME", "matrix-3"}, ""},
		// INFERBENCH_GROUP wins.
		{[]string{"JOB_COMPLETION_INDEX", "3", "HOSTNAME", "matrix-3", "INFERBENCH_GROUP", "g"}, "g"},
	} {
		if g := GroupFromEnv(env(c.env...)); g != c.want {
			t.Errorf("%v: group %q, want %q", c.env, g, c.want)
		}
	}
}
