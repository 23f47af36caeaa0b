//go:build linux

package cli

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// TestMain lets a test re-run this binary as the inferbench command (INFERBENCH_TEST_MAIN=1, the
// arguments after the -test. flags), e.g. inside another network namespace.
func TestMain(m *testing.M) {
	if os.Getenv("INFERBENCH_TEST_MAIN") == "1" {
		args := os.Args[1:]
		for len(args) > 0 && strings.HasPrefix(args[0], "-test.") {
			args = args[1:]
		}
		os.Exit(Main(context.Background(), args, IO{Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	code := m.Run()
	if agentBin != "" {
		os.RemoveAll(filepath.Dir(agentBin))
	}
	os.Exit(code)
}

var (
	agentBinOnce sync.Once
	agentBin     string
)

// agentCommand returns the command line prefix that runs inferbench for an agent: a binary built
// without the race detector (agents under -race cannot hold a schedule on a small machine), or
// this test binary when no go toolchain is at hand.
func agentCommand(t *testing.T) (prefix []string, env []string) {
	agentBinOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			return
		}
		dir, err := os.MkdirTemp("", "inferbench-agent")
		if err != nil {
			return
		}
		bin := filepath.Join(dir, "inferbench")
		if out, err := exec.Command(goBin, "build", "-o", bin, "../../cmd/inferbench").CombinedOutput(); err != nil {
			t.Logf("building the agent binary failed, agents run this test binary: %v\n%s", err, out)
			return
		}
		agentBin = bin
	})
	if agentBin != "" {
		return []string{agentBin}, nil
	}
	return []string{os.Args[0], "-test.run=^$"}, []string{"INFERBENCH_TEST_MAIN=1"}
}

// netns is a network namespace joined to this one by a veth pair: the host end has .1, the
// namespace end .2 of 10.<net>.<k>.0/24.
type netns struct{ name, host, hostIP string }

// freeNet picks the second octet of a 10.x.0.0/16 that no interface here uses, starting from
// one derived from the process ID, so that concurrent test processes do not share routes.
func freeNet(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("ip", "-4", "-o", "addr").Output()
	if err != nil {
		t.Skipf("ip -4 addr: %v", err)
	}
	for i := range 100 {
		x := 100 + (os.Getpid()+i)%100
		if !strings.Contains(string(out), fmt.Sprintf(" 10.%d.", x)) {
			return x
		}
	}
	t.Skip("no free 10.x.0.0/16 for the test's veth links")
	return 0
}

func sh(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func makeNetns(t *testing.T, net, k int) netns {
	t.Helper()
	id := os.Getpid() % 100000
	n := netns{name: fmt.Sprintf("ibtest%d-%d", id, k), host: fmt.Sprintf("ibh%d_%d", id, k), hostIP: fmt.Sprintf("10.%d.%d.1", net, k)}
	peer := fmt.Sprintf("ibp%d_%d", id, k)
	if err := sh("ip", "netns", "add", n.name); err != nil {
		t.Skipf("cannot make network namespaces here (needs root and CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() {
		_ = sh("ip", "netns", "del", n.name) // removes the peer, and with it the pair
		_ = exec.Command("ip", "link", "del", n.host).Run()
	})
	for _, c := range [][]string{
		{"ip", "link", "add", n.host, "type", "veth", "peer", "name", peer},
		{"ip", "link", "set", peer, "netns", n.name},
		{"ip", "addr", "add", n.hostIP + "/24", "dev", n.host},
		{"ip", "link", "set", n.host, "up"},
		{"ip", "netns", "exec", n.name, "ip", "addr", "add", fmt.Sprintf("10.%d.%d.2/24", net, k), "dev", peer},
		{"ip", "netns", "exec", n.name, "ip", "link", "set", peer, "up"},
		{"ip", "netns", "exec", n.name, "ip", "link", "set", "lo", "up"},
	} {
		if err := sh(c...); err != nil {
			t.Skipf("cannot wire a veth pair here: %v", err)
		}
	}
	return n
}

// TestAgentsInNetworkNamespaces is the multi-host bar on one machine: four agents, each in its
// own network namespace with its own veth link (so its own source address, routes and socket
// tables), load one mockserver at a combined 200 requests/s from an agreed --start-at; their
// runs merge into one whose request count and rate match the target within 1% and whose p99
// matches the server's own record of the same requests.
func TestAgentsInNetworkNamespaces(t *testing.T) {
	t.Run("start-at", func(t *testing.T) { agentsInNetns(t, false) })
	// The agents meet in a store they share (a SQLite file here; PostgreSQL across hosts).
	t.Run("barrier", func(t *testing.T) { agentsInNetns(t, true) })
}

func agentsInNetns(t *testing.T, barrier bool) {
	if testing.Short() {
		t.Skip("multi-host agents test: seconds of load; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2's ip is not installed")
	}
	const (
		agents   = 4
		rate     = 200.0 // requests/s, all agents together
		duration = 8 * time.Second
		want     = int(rate * 8)
	)
	var nss []netns
	net := freeNet(t)
	for k := range agents {
		nss = append(nss, makeNetns(t, net, k))
	}
	srv := mockserver.New(mockserver.Config{
		TTFT:         workload.Dist{Kind: "lognormal", Mean: 10, Std: 4},
		ITL:          workload.Fixed(2),
		OutputTokens: workload.Fixed(8),
		Seed:         3,
		Record:       2 * want,
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, err := srv.Start(ctx, "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	port := base[strings.LastIndex(base, ":")+1 : strings.Index(base, "/v1")]

	dir := t.TempDir()
	prefix, env := agentCommand(t) // before the start time: the first call builds the binary
	startAt := time.Now().Add(6 * time.Second).UTC().Format(time.RFC3339Nano)
	var extra []string
	if barrier {
		startAt = "barrier"
		extra = []string{"--store", "sqlite:" + filepath.Join(dir, "shared.db")}
	}
	cmds := make([]*exec.Cmd, agents)
	outs := make([]*strings.Builder, agents)
	for k, ns := range nss {
		args := []string{"run", "--openai", fmt.Sprintf("http://%s:%s/v1", ns.hostIP, port), "--model", "mock",
			"--rate", fmt.Sprint(rate), "--arrival", "constant", "--duration", duration.String(), "--warmup-iterations", "0",
			"--agents", fmt.Sprint(agents), "--agent", fmt.Sprint(k), "--group", "netns", "--start-at", startAt,
			"--no-store", "--no-request-log", "--no-monitor", "--no-html-report", "--format", "none", "--output-dir", filepath.Join(dir, fmt.Sprint(k))}
		args = append(args, extra...)
		cmd := exec.Command("ip", append(append([]string{"netns", "exec", ns.name}, prefix...), args...)...)
		cmd.Env = append(append(os.Environ(), env...), "CI=1", "INFERBENCH_STORE=")
		outs[k] = &strings.Builder{}
		cmd.Stdout, cmd.Stderr = outs[k], outs[k]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[k] = cmd
	}
	var folders []string
	for k, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("agent %d: %v\n%s", k, err, outs[k])
		}
		folders = append(folders, filepath.Join(dir, fmt.Sprint(k), "latest"))
	}
	for k, f := range folders {
		r, err := result.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if r.Agent == nil || r.Agent.Index != k || r.Environment == nil || r.Agent.StartAt.IsZero() {
			t.Fatalf("agent %d recorded %+v", k, r.Agent)
		}
	}
	code, stdout, stderr := runCLI(t, dir, nil, append([]string{"merge", "--no-store", "--format", "none", "--output-dir", filepath.Join(dir, "merged")}, folders...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	m, err := result.Load(filepath.Join(dir, "merged", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Scenarios) != 1 {
		t.Fatalf("%d scenarios", len(m.Scenarios))
	}
	sc := m.Scenarios[0]
	if sc.Status != result.StatusOK {
		t.Fatalf("merged scenario %s: %s", sc.Status, sc.Error)
	}
	// The merge added the agents' histograms (it falls back to pooled samples without them).
	hs := sc.Extra.Histograms
	if hs["e2e_ms"] == nil || hs["e2e_ms"].N() != sc.Metrics["e2e_ms"].Summary.N {
		t.Fatalf("merged histograms: %v", slices.Collect(maps.Keys(hs)))
	}
	got := sc.Iterations.Measured - sc.Iterations.Failed
	st := srv.Stats()
	t.Logf("merged: %d requests, requests_per_s %.2f, e2e p99 %.3f ms; server received %d", got, *sc.Metrics["requests_per_s"].Value, sc.Metrics["e2e_ms"].Summary.P99, st.Requests)
	if math.Abs(float64(got-want)) > 0.01*float64(want) || st.Requests != int64(sc.Iterations.Measured) {
		t.Errorf("merged %d requests (server saw %d), want %d within 1%%", got, st.Requests, want)
	}
	rps := *sc.Metrics["requests_per_s"].Value
	// The server's own record of the same requests: end of the response minus its arrival.
	var e2e []float64
	for _, e := range srv.Emissions() {
		e2e = append(e2e, float64(e.End.Sub(e.Received))/1e6)
	}
	server, _ := stats.Summarize(e2e)
	client := sc.Metrics["e2e_ms"].Summary
	if client.N != len(e2e) {
		t.Errorf("merged e2e has %d requests, the server recorded %d", client.N, len(e2e))
	}
	// The client's e2e adds the veth round trip to the server's; both sides stamp with the
	// kernel's receive time but the server's send stamps come from a goroutine that a loaded
	// machine can delay, so the two agree within 5% (or 3 ms) either way.
	if d := client.P99 - server.P99; math.Abs(d) > max(3, 0.05*server.P99) {
		t.Errorf("merged e2e p99 %.3f ms, server's own p99 %.3f ms", client.P99, server.P99)
	}
	sk := sc.Extra.Agents
	if sk == nil || len(sk.Agents) != agents {
		t.Fatalf("skew section: %+v", sk)
	}
	for _, a := range sk.Agents {
		// Late by the client's scheduling at most (a loaded machine delays the first send by
		// up to a few hundred ms); without --start-at the agents start seconds apart.
		if a.StartLagMS == nil || *a.StartLagMS < -1 || *a.StartLagMS > 1000 {
			lag := math.NaN()
			if a.StartLagMS != nil {
				lag = *a.StartLagMS
			}
			t.Errorf("agent %d started %.1f ms after --start-at", a.Agent, lag)
		}
	}
	t.Logf("start spread %.2f ms, end spread %.2f ms, client-bound agents %v; warnings %q", sk.StartSpreadMS, sk.EndSpreadMS, sk.ClientBound, sc.Warnings)
	// The rate. The merge's rate is the requests over the union of the agents' windows (first
	// send of any agent to last completion of any); that is checked exactly. A client that sent
	// late (a loaded machine) stretches that window by at most the agents' start spread plus the
	// largest schedule lag of any request, both measured by the agents themselves. Over the
	// schedule the agents achieved (the window less that stretch), the rate must be the target
	// within 1%: on a quiet machine the stretch is a few ms and this is the 1% bar itself; on a
	// loaded one the bound widens by what the clients' own records explain, and no more. (It
	// used to skip the check whenever an agent's lag p99 passed 50 ms.)
	win := sc.Extra.Window
	if win == nil || !win.End.After(win.Start) {
		t.Fatalf("merged scenario has no window: %+v", win)
	}
	w := win.End.Sub(win.Start).Seconds()
	if want := float64(win.OK) / w; win.OK != got || math.Abs(rps-want) > 1e-9*want {
		t.Errorf("merged requests_per_s %.4f, want %d requests over the union window of %.4f s = %.4f", rps, win.OK, w, want)
	}
	maxLag := 0.0
	if lag := sc.Metrics["schedule_lag_ms"].Summary; lag != nil {
		maxLag = lag.Max
	} else {
		t.Error("the merged scenario has no schedule_lag_ms")
	}
	stretch := min((sk.StartSpreadMS+maxLag)/1000, w/2)
	achieved := float64(got) / (w - stretch) // the rate over the achieved schedule: at least the target
	t.Logf("rate: %.2f/s over the %.3f s window; %.2f/s without the clients' stretch of %.1f ms (start spread %.1f ms, schedule lag max %.1f ms)", rps, w, achieved, 1000*stretch, sk.StartSpreadMS, maxLag)
	if rate < 0.99*rps || rate > 1.01*achieved {
		t.Errorf("merged requests_per_s %.2f (%.2f over the achieved schedule), want %.0f within 1%%: off by more than the agents' measured lateness (%.1f ms) explains", rps, achieved, rate, 1000*stretch)
	}
	if !slices.Equal(slices.Sorted(func(yield func(int) bool) {
		for _, a := range sk.Agents {
			if !yield(a.Agent) {
				return
			}
		}
	}), []int{0, 1, 2, 3}) {
		t.Errorf("agents in skew: %+v", sk.Agents)
	}
}
