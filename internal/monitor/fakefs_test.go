package monitor

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the fake /proc and /sys trees under testdata")

// fakeProcess is one process of a fake /proc tree.
type fakeProcess struct {
	pid, ppid             int
	utime, stime          int // clock ticks
	cutime, cstime        int
	threads               int
	start                 uint64 // clock ticks after boot
	rssKB, hwmKB          int
	readBytes, writeBytes int
	tids                  []int         // threads; nil means just pid
	children              map[int][]int // tid -> children; nil means none
	noChildrenFile, noIO  bool
}

// writeFakeProc writes procs into dir in the kernel's formats, with /proc/uptime at uptime seconds.
func writeFakeProc(t *testing.T, dir string, uptime float64, procs ...fakeProcess) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(dir, 0o755))
	must(os.WriteFile(filepath.Join(dir, "uptime"), []byte(fmt.Sprintf("%.2f 1000.00\n", uptime)), 0o644))
	for _, p := range procs {
		pd := filepath.Join(dir, strconv.Itoa(p.pid))
		must(os.MkdirAll(pd, 0o755))
		threads := p.threads
		if threads == 0 {
			threads = 1
		}
		stat := fmt.Sprintf("%d (fake %d) S %d %d 1 0 -1 4194304 99 0 0 0 %d %d %d %d 20 0 %d 0 %d 3133440 %d "+
			"18446744073709551615 1 1 1 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 1 1 1 1 1 1 1 0\n",
			p.pid, p.pid, p.ppid, p.pid, p.utime, p.stime, p.cutime, p.cstime, threads, p.start, p.rssKB/4)
		must(os.WriteFile(filepath.Join(pd, "stat"), []byte(stat), 0o644))
		status := fmt.Sprintf("Name:\tfake %d\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\n"+
			"VmPeak:\t  %8d kB\nVmSize:\t  %8d kB\nVmHWM:\t  %8d kB\nVmRSS:\t  %8d kB\nThreads:\t%d\n",
			p.pid, p.pid, p.pid, p.ppid, p.hwmKB*2, p.hwmKB*2, p.hwmKB, p.rssKB, threads)
		must(os.WriteFile(filepath.Join(pd, "status"), []byte(status), 0o644))
		if !p.noIO {
			io := fmt.Sprintf("rchar: %d\nwchar: %d\nsyscr: 1\nsyscw: 1\nread_bytes: %d\nwrite_bytes: %d\ncancelled_write_bytes: 0\n",
				p.readBytes, p.writeBytes, p.readBytes, p.writeBytes)
			must(os.WriteFile(filepath.Join(pd, "io"), []byte(io), 0o644))
		}
		tids := p.tids
		if tids == nil {
			tids = []int{p.pid}
		}
		must(os.RemoveAll(filepath.Join(pd, "task")))
		for _, tid := range tids {
			td := filepath.Join(pd, "task", strconv.Itoa(tid))
			must(os.MkdirAll(td, 0o755))
			must(os.WriteFile(filepath.Join(td, "stat"), []byte(stat), 0o644)) // keeps the directory in git
			if p.noChildrenFile {
				continue
			}
			var kids []string
			for _, k := range p.children[tid] {
				kids = append(kids, strconv.Itoa(k))
			}
			s := strings.Join(kids, " ")
			if s != "" {
				s += " "
			}
			must(os.WriteFile(filepath.Join(td, "children"), []byte(s), 0o644))
		}
	}
}

// removeFakeProc removes processes from a fake tree (they exited and were reaped).
func removeFakeProc(t *testing.T, dir string, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if err := os.RemoveAll(filepath.Join(dir, strconv.Itoa(pid))); err != nil {
			t.Fatal(err)
		}
	}
}

// staticTree is the tree under testdata/proc: 100 → 101 → 103 (forked by 101's thread 110);
// 100 → 102.
// 200 is an unrelated process.
func staticTree(noChildren bool) []fakeProcess {
	return []fakeProcess{
		{pid: 100, ppid: 1, utime: 300, stime: 100, threads: 2, start: 1000, rssKB: 102400, hwmKB: 204800, readBytes: 1 << 20, writeBytes: 2 << 20,
			children: map[int][]int{100: {101, 102}}, tids: []int{100, 105}, noChildrenFile: noChildren},
		{pid: 101, ppid: 100, utime: 50, stime: 50, threads: 2, start: 1100, rssKB: 51200, hwmKB: 51200,
			tids: []int{101, 110}, children: map[int][]int{110: {103}}, noChildrenFile: noChildren},
		{pid: 102, ppid: 100, utime: 10, threads: 1, start: 1200, rssKB: 10240, hwmKB: 20480, noIO: true, noChildrenFile: noChildren},
		{pid: 103, ppid: 101, utime: 5, threads: 4, start: 1300, rssKB: 4096, hwmKB: 4096, noChildrenFile: noChildren},
		{pid: 200, ppid: 1, utime: 999, threads: 1, start: 10, rssKB: 999999, hwmKB: 999999, noChildrenFile: noChildren},
	}
}

func TestUpdateTestdata(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata/proc*, testdata/sys*")
	}
	for _, d := range []string{"testdata/proc", "testdata/proc-nochildren"} {
		os.RemoveAll(d)
	}
	writeFakeProc(t, "testdata/proc", 20.0, staticTree(false)...)
	writeFakeProc(t, "testdata/proc-nochildren", 20.0, staticTree(true)...)
	writeSystemFiles(t, "testdata/proc", 1000, 3000, 200)
	writeSystemFiles(t, "testdata/proc-nochildren", 1000, 3000, 200)
}

// writeSystemFiles writes /proc/stat, /proc/meminfo and /proc/loadavg.
func writeSystemFiles(t *testing.T, dir string, busyUser, idle, system int) {
	t.Helper()
	stat := fmt.Sprintf("cpu  %d 0 %d %d 0 0 0 0 0 0\ncpu0 %d 0 %d %d 0 0 0 0 0 0\nintr 0\nctxt 100\nbtime 1700000000\nprocesses 10\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
		busyUser, system, idle, busyUser, system, idle)
	mem := "MemTotal:        8000000 kB\nMemFree:         1000000 kB\nMemAvailable:    6000000 kB\nBuffers:           10000 kB\nCached:          2000000 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n"
	for name, s := range map[string]string{"stat": stat, "meminfo": mem, "loadavg": "1.50 0.75 0.25 2/300 4242\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
