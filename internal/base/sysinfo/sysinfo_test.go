package sysinfo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCollectFromFakeRoot(t *testing.T) {
	info := Collect(context.Background(), Options{Root: "testdata/root", Dir: t.TempDir()})
	if info.CPU.Model != "AMD EPYC 7B13 64-Core Processor" || info.CPU.Cores < 1 {
		t.Errorf("cpu %+v", info.CPU)
	}
	if info.MemoryMB != 24105 || info.Kernel != "6.1.0-18-amd64" || info.Distro != "Debian GNU/Linux 12 (bookworm)" {
		t.Errorf("memory %d kernel %q distro %q", info.MemoryMB, info.Kernel, info.Distro)
	}
	if info.Git != nil {
		t.Errorf("a temp dir is not a repository, got %+v", info.Git)
	}
	var b strings.Builder
	info.WriteText(&b)
	for _, want := range []string{"cpu:", "AMD EPYC 7B13", "memory:", "23.5 GiB", "git:", "not a git repository"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

func TestGitState(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "trunk"}, {"-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	g := gitState(context.Background(), dir)
	if g == nil || len(g.Commit) != 40 || g.Branch != "trunk" || g.Dirty {
		t.Errorf("%+v", g)
	}
}

func TestParseNvidiaSMI(t *testing.T) {
	out := "0, NVIDIA H100 80GB HBM3, 81559, 550.54.15, 700.00, Disabled, Enabled, 9.0, GPU-abc\n" +
		"1, Tesla T4, 15360, 535.104.05, 70.00, [N/A], Disabled, 7.5, GPU-def\n"
	got := ParseNvidiaSMI(out)
	want := []GPU{
		{Index: 0, Name: "NVIDIA H100 80GB HBM3", MemoryMB: 81559, Driver: "550.54.15", PowerLimitW: 700, MIG: "Disabled", ECC: "Enabled", ComputeCap: "9.0", UUID: "GPU-abc"},
		{Index: 1, Name: "Tesla T4", MemoryMB: 15360, Driver: "535.104.05", PowerLimitW: 70, ECC: "Disabled", ComputeCap: "7.5", UUID: "GPU-def"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// An interpreter that never answers --version (a wrapper script whose child holds its output
// open) costs the fingerprint its Python version, not the run: Collect returns within the
// probe's deadline and a second. Before, the wait on the child's output had no end.
func TestCollectHangingPython(t *testing.T) {
	py := filepath.Join(t.TempDir(), "python")
	if err := os.WriteFile(py, []byte("#!/bin/sh\nsleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := probeTimeout
	probeTimeout = 200 * time.Millisecond
	t.Cleanup(func() { probeTimeout = old })
	done := make(chan Info, 1)
	go func() {
		done <- Collect(context.Background(), Options{Root: "testdata/root", Dir: t.TempDir(), Python: py})
	}()
	select {
	case info := <-done:
		if info.Python != "" {
			t.Errorf("python %q from an interpreter that did not answer", info.Python)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Collect hangs on a python that does not answer --version")
	}
}
