package monitor

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

const mib = 1 << 20

// ProcessConfig configures a ProcessSampler.
type ProcessConfig struct {
	// Root is the procfs mount point; "" means /proc. Tests point it at a fake tree.
	Root string
	// PIDs returns the roots of the tree to sample. It is called at every sample, so a subject
	// that restarts its processes is followed. Nil means the harness process itself (a subject
	// running in-process, such as a Go function).
	PIDs func() []int
	// KeepPeak leaves the kernel's peak-RSS mark (VmHWM) of processes alive at Start as it is.
	// By default the sampler resets it (writing 5 to /proc/PID/clear_refs, which the owner of
	// a process may do) so that the peak is the window's, not the peak of model loading.
	KeepPeak bool
	// Exclude returns processes to leave out of the tree, with their descendants: the monitors'
	// own helpers (nvidia-smi) when the harness itself is the root.
	Exclude func() []int
}

// ProcessSampler samples the process tree under test: the root processes and all their
// descendants, found through /proc/PID/task/TID/children (or, where the kernel lacks it, a scan
// of every process's parent).
//
// Gauges: rss_mb (sum over the tree), cpu_pct (user+system, percent of one core), threads, procs,
// io_read_mb_s and io_write_mb_s. Totals at Stop: peak_rss_mb, cpu_s, io_read_mb, io_write_mb.
//
// CPU time and I/O bytes are accounted so that nothing is counted twice or lost when a process
// of the tree exits: the kernel adds a reaped child's times and I/O to its parent, so the sampler
// sums cumulative counters (own plus reaped children) over the live tree and takes differences,
// discounting the history of processes that were already running when they joined the tree.
//
// peak_rss_mb is the largest of: the largest sampled tree sum; the high-water mark (VmHWM) of any
// single process whose mark belongs to the window (reset at Start, or born during it); and, for
// the real /proc, the peak of children the harness reaped during the window (getrusage). It is
// exact for a tree dominated by one process, even when its peak falls between two samples, and a
// lower bound for the simultaneous peak of several processes peaking at different times.
type ProcessSampler struct {
	cfg           ProcessConfig
	fs            procfs.FS
	root          string
	real          bool
	self          int
	scanAll       bool        // the kernel has no children files: find descendants by parent scan
	ppids         map[int]int // parent of every process, for the scan
	lastThreads   int         // threads in the tree at the last sample
	samples       int
	startTicks    uint64
	reset         map[int]bool       // pids whose VmHWM was reset at Start
	sharesHarness func(pid int) bool // pid runs in the harness's memory (nil: never asked)
	execd         map[int]bool       // pids seen running in memory of their own

	prev     map[int]member
	prevTime time.Time
	cpuS     float64 // CPU seconds in the window so far
	ioRead   float64 // bytes
	ioWrite  float64
	peak     float64 // bytes: largest sampled tree sum
	hwmPeak  float64 // bytes: largest per-process peak that belongs to the window
	reaped0  float64 // harness's reaped-children peak RSS at Start, bytes
}

type member struct {
	ppid    int
	cpu     float64 // seconds: own utime+stime plus reaped children's
	rd, wr  float64 // bytes read and written from storage, including reaped children's
	rss     float64 // bytes
	hwm     float64 // bytes
	threads int
	start   uint64 // clock ticks after boot
	counted bool   // its history belongs to the window (born in it, or a new child of the tree)
}

var _ Sampler = (*ProcessSampler)(nil)
var _ Starter = (*ProcessSampler)(nil)
var _ Stopper = (*ProcessSampler)(nil)

// NewProcessSampler returns a sampler of the process tree described by cfg.
func NewProcessSampler(cfg ProcessConfig) (*ProcessSampler, error) {
	pfs, root, err := openProc(cfg.Root, "process monitor")
	if err != nil {
		return nil, err
	}
	s := &ProcessSampler{cfg: cfg, fs: pfs, root: root, self: os.Getpid(), execd: map[int]bool{}}
	s.real = filepath.Clean(root) == procfs.DefaultMountPoint
	if s.real {
		s.sharesHarness = sharesMemoryWithSelf
	}
	return s, nil
}

// Name implements Sampler.
func (s *ProcessSampler) Name() string { return "process" }

// Metrics implements Sampler.
func (s *ProcessSampler) Metrics() []Metric {
	return []Metric{
		{Name: "rss_mb", Unit: "MB", Better: Lower, Kind: Gauge, Help: "resident memory of the process tree under test, summed"},
		{Name: "cpu_pct", Unit: "%", Better: Lower, Kind: Gauge, Help: "CPU time (user+system) of the process tree per wall time, percent of one core"},
		{Name: "threads", Unit: "count", Kind: Gauge, Help: "threads in the process tree"},
		{Name: "procs", Unit: "count", Kind: Gauge, Help: "processes in the process tree"},
		{Name: "io_read_mb_s", Unit: "MB/s", Kind: Gauge, Help: "bytes the tree read from storage per second"},
		{Name: "io_write_mb_s", Unit: "MB/s", Kind: Gauge, Help: "bytes the tree wrote to storage per second"},
		{Name: "peak_rss_mb", Unit: "MB", Better: Lower, Kind: Total, Help: "peak resident memory of the process tree in the window"},
		{Name: "cpu_s", Unit: "s", Better: Lower, Kind: Total, Help: "CPU time (user+system) the tree used in the window"},
		{Name: "io_read_mb", Unit: "MB", Kind: Total, Help: "bytes the tree read from storage in the window"},
		{Name: "io_write_mb", Unit: "MB", Kind: Total, Help: "bytes the tree wrote to storage in the window"},
	}
}

func (s *ProcessSampler) roots() []int {
	if s.cfg.PIDs == nil {
		return []int{s.self}
	}
	return s.cfg.PIDs()
}

// Start implements Starter: it resets the peak-RSS marks of the tree and takes the baseline.
func (s *ProcessSampler) Start(now time.Time) error {
	s.prev, s.prevTime = nil, time.Time{}
	s.cpuS, s.ioRead, s.ioWrite, s.peak, s.hwmPeak = 0, 0, 0, 0, 0
	s.samples = 0
	s.startTicks = s.uptimeTicks()
	s.reset = map[int]bool{}
	if s.real {
		s.reaped0, _ = reapedChildren()
	}
	tree, err := s.walk()
	if err != nil {
		return err
	}
	if !s.cfg.KeepPeak {
		for _, pid := range tree {
			if s.harnessCopy(pid) {
				continue // its mark is the harness's
			}
			if resetPeak(filepath.Join(s.root, strconv.Itoa(pid), "clear_refs")) {
				s.reset[pid] = true
			}
		}
	}
	return nil
}

// reapedPID keys the harness's account of reaped children in the tree maps: when the roots are
// children of the harness, a root that exits is reaped by the harness and its counters move to
// that account, so it is treated as a member of the tree.
const reapedPID = -1

// Sample implements Sampler.
func (s *ProcessSampler) Sample(now time.Time, out []Value) ([]Value, error) {
	pids, err := s.walk()
	if err != nil {
		return out, err
	}
	// The status file (VmHWM) costs as much as stat and io together. The high-water mark only
	// rises while a process lives, so it is read every statusEvery samples, when a process is
	// first seen, and at Stop: a peak between samples is still caught unless the process exits
	// before the next read (and is not reaped by the harness, whose getrusage catches it).
	full := s.samples%statusEvery == 0
	s.samples++
	cur, firstErr := s.readMembers(pids, full)
	reaping := s.addReaped(cur)
	t := s.sumTree(cur, pids, reaping)
	rss, threads, procs := t.rss, t.threads, t.procs

	for pid := range s.execd {
		if _, ok := cur[pid]; !ok {
			delete(s.execd, pid) // gone: its pid may come back as another process
		}
	}

	dcpu := max(0, t.total.cpu-t.base.cpu)
	drd := max(0, t.total.rd-t.base.rd)
	dwr := max(0, t.total.wr-t.base.wr)
	s.peak = max(s.peak, rss)
	out = append(out,
		Value{"rss_mb", rss / mib},
		Value{"threads", float64(threads)},
		Value{"procs", float64(procs)},
	)
	if s.prev != nil {
		s.cpuS += dcpu
		s.ioRead += drd
		s.ioWrite += dwr
		if dt := now.Sub(s.prevTime).Seconds(); dt > 0 {
			out = append(out,
				Value{"cpu_pct", 100 * dcpu / dt},
				Value{"io_read_mb_s", drd / mib / dt},
				Value{"io_write_mb_s", dwr / mib / dt},
			)
		}
	}
	s.prev, s.prevTime = cur, now
	s.lastThreads = threads
	return out, firstErr
}

// readMembers reads the tree's processes (pids), the harness's copies left out; the status
// file too where full, or where a process is new. A process that exited since the walk is not
// in cur; firstErr is the first other error.
func (s *ProcessSampler) readMembers(pids []int, full bool) (cur map[int]member, firstErr error) {
	cur = make(map[int]member, len(pids)+1)
	for _, pid := range pids {
		if s.harnessCopy(pid) {
			continue
		}
		_, seen := s.prev[pid]
		m, err := s.read(pid, full || !seen)
		if err == nil && m.hwm == 0 {
			m.hwm = s.prev[pid].hwm
		}
		if err == nil && s.ppids != nil {
			s.ppids[pid] = m.ppid
		}
		if err != nil {
			// The process exited between the walk and the read: it is simply not in this sample.
			if !errors.Is(err, fs.ErrNotExist) && firstErr == nil {
				firstErr = err
			}
			continue
		}
		cur[pid] = m
	}
	return cur, firstErr
}

// addReaped takes in the children the harness reaped in the window: their peak RSS (whatever
// the roots), and, when the roots are not the harness itself (whose cutime already holds them),
// their CPU time, as the member reapedPID of cur. It reports whether it added that member.
func (s *ProcessSampler) addReaped(cur map[int]member) (reaping bool) {
	reaping = s.real && s.cfg.PIDs != nil
	if s.real {
		maxRSS, cpu := reapedChildren()
		// A child started with vfork (Go's way) or fork has the harness's memory as its max RSS
		// from its exec: the figure is the child's own only when it exceeds the harness's peak.
		if maxRSS > s.reaped0 && maxRSS > selfMaxRSS() {
			s.hwmPeak = max(s.hwmPeak, maxRSS)
		}
		if reaping {
			cur[reapedPID] = member{ppid: reapedPID, cpu: cpu}
		}
	}
	return reaping
}

// counters are the cumulative counters of a process or a tree: CPU seconds and bytes read and
// written.
type counters struct{ cpu, rd, wr float64 }

// add adds a member's counters.
func (c *counters) add(m member) { c.cpu += m.cpu; c.rd += m.rd; c.wr += m.wr }

// treeSum is a sample's sums over the tree: the counters' baseline and total, whose difference
// is the window's, and the live members' RSS, threads and processes.
type treeSum struct {
	base, total    counters
	rss            float64
	threads, procs int
}

// sumTree sums the counters over the live tree, with the baseline adjusted for processes joining
// and leaving it (see the type's comment), and marks each new member counted or not in cur.
func (s *ProcessSampler) sumTree(cur map[int]member, pids []int, reaping bool) treeSum {
	var t treeSum
	inTree := func(pid int) bool {
		_, ok := cur[pid]
		return ok || (reaping && pid == s.self)
	}
	for pid, p := range s.prev {
		if _, alive := cur[pid]; !alive && !inTree(p.ppid) {
			continue // left the tree with its counters: what it did since the last sample is lost
		}
		t.base.add(p)
	}
	order := pids
	if reaping {
		order = append(order, reapedPID)
	}
	for _, pid := range order {
		p, ok := cur[pid]
		if !ok {
			continue
		}
		if prev, seen := s.prev[pid]; seen {
			p.counted = prev.counted
		} else {
			// New in the tree: a child forked since the last sample (its parent was in the tree,
			// or is itself new and counted) or a process born in the window has all its counters
			// in the window; one that was already running has its history discounted.
			_, parentWasIn := s.prev[p.ppid]
			parent, parentIsIn := cur[p.ppid]
			p.counted = s.prev != nil && pid != reapedPID &&
				(parentWasIn || (parentIsIn && parent.counted && p.ppid != pid) || s.born(p))
			if !p.counted {
				t.base.add(p)
			}
			cur[pid] = p
		}
		t.total.add(p)
		if pid == reapedPID {
			continue
		}
		t.procs++
		t.rss += p.rss
		t.threads += p.threads
		if s.peakCounts(pid, p) {
			s.hwmPeak = max(s.hwmPeak, p.hwm)
		}
	}
	return t
}

// harnessCopy reports whether pid, a process other than the harness, runs in the harness's
// memory: a child between its vfork (Go's way of starting a process) and its exec. Its RSS and
// high-water mark are the harness's, so it is left out of the sample until it has exec'd; after
// that it is not asked again.
func (s *ProcessSampler) harnessCopy(pid int) bool {
	if s.sharesHarness == nil || pid == s.self || s.execd[pid] {
		return false
	}
	if s.sharesHarness(pid) {
		return true
	}
	s.execd[pid] = true
	return false
}

// born reports whether p started after the window opened.
func (s *ProcessSampler) born(p member) bool {
	return s.startTicks > 0 && p.start >= s.startTicks
}

// peakCounts reports whether a member's high-water mark belongs to the window: its mark was
// reset at Start, its history is counted, or it was born in the window.
func (s *ProcessSampler) peakCounts(pid int, p member) bool {
	return s.reset[pid] || p.counted || s.born(p)
}

// Stop implements Stopper: the window's totals.
func (s *ProcessSampler) Stop(now time.Time, out []Value) ([]Value, error) {
	// The last high-water marks of the members that read status less often.
	for pid, p := range s.prev {
		if pid == reapedPID || !s.peakCounts(pid, p) {
			continue
		}
		if proc, err := s.fs.Proc(pid); err == nil {
			if st, err := proc.NewStatus(); err == nil {
				s.hwmPeak = max(s.hwmPeak, float64(st.VmHWM))
			}
		}
	}
	return append(out,
		Value{"peak_rss_mb", max(s.peak, s.hwmPeak) / mib},
		Value{"cpu_s", s.cpuS},
		Value{"io_read_mb", s.ioRead / mib},
		Value{"io_write_mb", s.ioWrite / mib},
	), nil
}

// read reads one process: stat for CPU, parent and start time; status for RSS, peak RSS and
// threads; io for storage bytes when permitted.
func (s *ProcessSampler) read(pid int, withStatus bool) (member, error) {
	p, err := s.fs.Proc(pid)
	if err != nil {
		return member{}, err
	}
	st, err := p.Stat()
	if err != nil {
		return member{}, err
	}
	m := member{
		ppid:    st.PPID,
		cpu:     st.CPUTime() + float64(st.CUTime+st.CSTime)/userHZ,
		start:   st.Starttime,
		threads: st.NumThreads,
	}
	m.rss = float64(st.ResidentMemory())
	if withStatus {
		if status, err := p.NewStatus(); err == nil {
			m.hwm = float64(status.VmHWM)
		} else if errors.Is(err, fs.ErrNotExist) {
			return member{}, err
		}
	}
	if pio, err := p.IO(); err == nil {
		m.rd, m.wr = float64(pio.ReadBytes), float64(pio.WriteBytes)
	}
	return m, nil
}

// statusEvery is how often (in samples) descendants of the roots read /proc/PID/status.
const statusEvery = 5

// userHZ is the kernel's clock-tick rate for times in /proc/PID/stat (fixed at 100 on Linux).
const userHZ = 100

// scanThreshold is the number of threads in the tree above which descendants are found by
// listing /proc rather than by reading one children file per thread: a PyTorch worker has dozens
// of threads, and the listing (with every process's parent cached) is cheaper than that many files.
const scanThreshold = 24

// walk returns the roots and all their descendants, parents before children, without duplicates.
func (s *ProcessSampler) walk() ([]int, error) {
	roots := s.roots()
	var exclude []int
	if s.cfg.Exclude != nil {
		exclude = s.cfg.Exclude()
	}
	seen := make(map[int]bool, len(roots)+len(exclude))
	for _, pid := range exclude {
		seen[pid] = true
	}
	var out []int
	for _, r := range roots {
		if r > 0 && !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	if s.scanAll || s.lastThreads > scanThreshold {
		return s.walkByScan(out, seen)
	}
	nroots := len(out)
	for i := 0; i < len(out); i++ {
		kids, err := s.children(out[i])
		if errors.Is(err, errNoChildrenFile) {
			s.scanAll = true
			excluded := make(map[int]bool, len(exclude))
			for _, pid := range exclude {
				excluded[pid] = true
			}
			return s.walkByScan(out[:nroots], excluded)
		}
		for _, k := range kids {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out, nil
}

var errNoChildrenFile = errors.New("no /proc/PID/task/TID/children")

// children lists the children of every thread of pid. A process that has exited has none.
func (s *ProcessSampler) children(pid int) ([]int, error) {
	dir := filepath.Join(s.root, strconv.Itoa(pid), "task")
	var names []string
	if p, ok := s.prev[pid]; ok && p.threads == 1 {
		// Single-threaded at the last sample: its only task is itself, no listing needed. A
		// thread started since then shows at the next sample.
		names = []string{strconv.Itoa(pid)}
	} else {
		tasks, err := os.ReadDir(dir)
		if err != nil {
			return nil, nil
		}
		for _, t := range tasks {
			names = append(names, t.Name())
		}
	}
	var kids []int
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name, "children"))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if _, err2 := os.Stat(filepath.Join(dir, name)); err2 == nil {
					return nil, errNoChildrenFile
				}
			}
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(f); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids, nil
}

// walkByScan finds descendants from the parents of all processes: one listing of /proc per
// sample, and one read of /proc/PID/stat for each process the first time it is seen (a parent
// changes only when a process is orphaned, and members of the tree are re-read every sample).
func (s *ProcessSampler) walkByScan(out []int, seen map[int]bool) ([]int, error) {
	for _, r := range out {
		seen[r] = true
	}
	d, err := os.Open(s.root)
	if err != nil {
		return out, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return out, err
	}
	if s.ppids == nil {
		s.ppids = map[int]int{}
	}
	live := make(map[int]bool, len(names))
	kids := map[int][]int{}
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		live[pid] = true
		ppid, ok := s.ppids[pid]
		if !ok {
			p, err := s.fs.Proc(pid)
			if err != nil {
				continue
			}
			st, err := p.Stat()
			if err != nil {
				continue
			}
			ppid = st.PPID
			s.ppids[pid] = ppid
		}
		kids[ppid] = append(kids[ppid], pid)
	}
	for pid := range s.ppids {
		if !live[pid] {
			delete(s.ppids, pid)
		}
	}
	for i := 0; i < len(out); i++ {
		for _, k := range kids[out[i]] {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out, nil
}

// uptimeTicks reads the time since boot in clock ticks, to compare with process start times.
func (s *ProcessSampler) uptimeTicks() uint64 {
	b, err := os.ReadFile(filepath.Join(s.root, "uptime"))
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0
	}
	up, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil {
		return 0
	}
	return uint64(up * userHZ)
}

// resetPeak writes 5 to a clear_refs file, which resets the process's VmHWM to its current RSS.
// It never creates the file.
func resetPeak(path string) bool {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	_, err = f.Write([]byte("5"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err == nil
}
