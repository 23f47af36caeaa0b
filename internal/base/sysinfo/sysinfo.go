// Package sysinfo takes the environment fingerprint recorded with every run: CPU, memory, OS and
// kernel, Go and Python versions, GPUs (when nvidia-smi answers) and the git commit, branch and
// dirty flag of the project. The CPU model and memory come from /proc on Linux, from sysctl on
// macOS and from the registry and GlobalMemoryStatusEx on Windows. Missing pieces are left
// empty, never an error.
package sysinfo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Info is the fingerprint.
type Info struct {
	Hostname string `json:"hostname,omitempty"`
	OS       string `json:"os"`
	Distro   string `json:"distro,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
	Arch     string `json:"arch"`
	CPU      CPU    `json:"cpu"`
	MemoryMB int    `json:"memory_mb,omitempty"`
	Go       string `json:"go"`
	Python   string `json:"python,omitempty"`
	GPUs     []GPU  `json:"gpus,omitempty"`
	Git      *Git   `json:"git,omitempty"`
	// Inferbench is the version of the tool that took the fingerprint.
	Inferbench string `json:"inferbench,omitempty"`
}

// CPU describes the processor.
type CPU struct {
	Model string `json:"model,omitempty"`
	Cores int    `json:"cores"` // logical CPUs available to the process
}

// GPU describes one NVIDIA GPU as nvidia-smi reports it.
type GPU struct {
	Index       int     `json:"index"`
	Name        string  `json:"name"`
	MemoryMB    int     `json:"memory_mb,omitempty"`
	Driver      string  `json:"driver,omitempty"`
	CUDA        string  `json:"cuda,omitempty"`
	PowerLimitW float64 `json:"power_limit_w,omitempty"`
	MIG         string  `json:"mig_mode,omitempty"`
	ECC         string  `json:"ecc_mode,omitempty"`
	ComputeCap  string  `json:"compute_capability,omitempty"`
	UUID        string  `json:"uuid,omitempty"`
}

// Git is the state of the project's repository.
type Git struct {
	Commit string `json:"commit"`
	Branch string `json:"branch,omitempty"`
	Dirty  bool   `json:"dirty"`
}

// Options say where to look.
type Options struct {
	Dir    string // the project directory, for git (the working directory when empty)
	Python string // interpreter whose version is recorded (none when empty)
	Root   string // filesystem root for /proc and /etc (tests use a fake tree; "/" when empty)
	// GPUs lists the GPUs (nvidia-smi when nil). The command line passes NVML's list, from
	// package monitor/gpu, which sysinfo does not import.
	GPUs func(ctx context.Context) []GPU
}

// Collect takes the fingerprint. It runs a few short commands (git, nvidia-smi, python) with a
// timeout each.
func Collect(ctx context.Context, o Options) Info {
	root := o.Root
	if root == "" {
		root = "/"
	}
	info := Info{OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version()}
	info.Hostname, _ = os.Hostname()
	info.CPU = CPU{Model: cpuModel(root), Cores: runtime.NumCPU()}
	info.MemoryMB = memTotalMB(root)
	if o.Root == "" && (info.CPU.Model == "" || info.MemoryMB == 0) {
		// No /proc (macOS, Windows): the platform's own sources.
		model, mb := hostCPUMemory()
		if info.CPU.Model == "" {
			info.CPU.Model = model
		}
		if info.MemoryMB == 0 {
			info.MemoryMB = mb
		}
	}
	info.Kernel = strings.TrimSpace(readFile(root, "proc/sys/kernel/osrelease"))
	info.Distro = osRelease(root)
	if o.Python != "" {
		if out, err := run(ctx, "", o.Python, "--version"); err == nil {
			info.Python = strings.TrimSpace(strings.TrimPrefix(out, "Python "))
		}
	}
	if o.GPUs != nil {
		info.GPUs = o.GPUs(ctx)
	} else {
		info.GPUs = NvidiaSMI(ctx)
	}
	info.Git = gitState(ctx, o.Dir)
	return info
}

// Map returns the fingerprint as the generic map stored in results.
func (i Info) Map() map[string]any {
	data, _ := json.Marshal(i)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	return m
}

// WriteText writes the fingerprint for people.
func (i Info) WriteText(w io.Writer) error {
	var b strings.Builder
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%-10s %s\n", k+":", v)
		}
	}
	line("host", i.Hostname)
	line("os", strings.TrimSpace(i.Distro+" ("+i.OS+"/"+i.Arch+")"))
	line("kernel", i.Kernel)
	line("cpu", fmt.Sprintf("%s, %d logical cores", orUnknown(i.CPU.Model), i.CPU.Cores))
	if i.MemoryMB > 0 {
		line("memory", fmt.Sprintf("%.1f GiB", float64(i.MemoryMB)/1024))
	}
	line("go", i.Go)
	line("python", i.Python)
	if len(i.GPUs) == 0 {
		line("gpu", "none (neither NVML nor nvidia-smi answered)")
	}
	for _, g := range i.GPUs {
		desc := fmt.Sprintf("[%d] %s, %d MiB, driver %s", g.Index, g.Name, g.MemoryMB, g.Driver)
		if g.CUDA != "" {
			desc += ", CUDA " + g.CUDA
		}
		if g.PowerLimitW > 0 {
			desc += fmt.Sprintf(", power limit %.0f W", g.PowerLimitW)
		}
		if g.MIG != "" {
			desc += ", MIG " + g.MIG
		}
		if g.ECC != "" {
			desc += ", ECC " + g.ECC
		}
		line("gpu", desc)
	}
	if i.Git != nil {
		dirty := ""
		if i.Git.Dirty {
			dirty = " (dirty)"
		}
		line("git", fmt.Sprintf("%s on %s%s", i.Git.Commit, orUnknown(i.Git.Branch), dirty))
	} else {
		line("git", "not a git repository")
	}
	line("inferbench", i.Inferbench)
	_, err := io.WriteString(w, b.String())
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func readFile(root, rel string) string {
	data, _ := os.ReadFile(strings.TrimSuffix(root, "/") + "/" + rel)
	return string(data)
}

func cpuModel(root string) string {
	sc := bufio.NewScanner(strings.NewReader(readFile(root, "proc/cpuinfo")))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func memTotalMB(root string) int {
	sc := bufio.NewScanner(strings.NewReader(readFile(root, "proc/meminfo")))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.Atoi(f[1])
			return kb / 1024
		}
	}
	return 0
}

func osRelease(root string) string {
	sc := bufio.NewScanner(strings.NewReader(readFile(root, "etc/os-release")))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// probeTimeout bounds each command Collect runs.
var probeTimeout = 10 * time.Second

func run(ctx context.Context, dir, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	// A process the command started may hold its output open after the command is killed (a
	// wrapper script's child): Wait stops waiting for it a second later.
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

func gitState(ctx context.Context, dir string) *Git {
	commit, err := run(ctx, dir, "git", "rev-parse", "HEAD")
	if err != nil {
		return nil
	}
	g := &Git{Commit: strings.TrimSpace(commit)}
	if b, err := run(ctx, dir, "git", "rev-parse", "--abbrev-ref", "HEAD"); err == nil {
		g.Branch = strings.TrimSpace(b)
	}
	if st, err := run(ctx, dir, "git", "status", "--porcelain", "--untracked-files=no"); err == nil {
		g.Dirty = strings.TrimSpace(st) != ""
	}
	return g
}

// nvidiaQuery are the nvidia-smi --query-gpu fields read, in order.
const nvidiaQuery = "index,name,memory.total,driver_version,power.limit,mig.mode.current,ecc.mode.current,compute_cap,uuid"

// NvidiaSMI lists GPUs through nvidia-smi; nil when it is absent or fails.
func NvidiaSMI(ctx context.Context) []GPU {
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		return nil
	}
	out, err := run(ctx, "", "nvidia-smi", "--query-gpu="+nvidiaQuery, "--format=csv,noheader,nounits")
	if err != nil {
		return nil
	}
	gpus := ParseNvidiaSMI(out)
	if len(gpus) > 0 {
		if v, err := run(ctx, "", "nvidia-smi"); err == nil {
			if i := strings.Index(v, "CUDA Version:"); i >= 0 {
				f := strings.Fields(v[i+len("CUDA Version:"):])
				if len(f) > 0 {
					for j := range gpus {
						gpus[j].CUDA = f[0]
					}
				}
			}
		}
	}
	return gpus
}

// ParseNvidiaSMI parses `nvidia-smi --query-gpu=<nvidiaQuery> --format=csv,noheader,nounits`.
func ParseNvidiaSMI(out string) []GPU {
	var gpus []GPU
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 4 {
			continue
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
			if f[i] == "[N/A]" || f[i] == "N/A" || f[i] == "[Not Supported]" {
				f[i] = ""
			}
		}
		g := GPU{Name: f[1], Driver: f[3]}
		g.Index, _ = strconv.Atoi(f[0])
		mem, _ := strconv.ParseFloat(f[2], 64)
		g.MemoryMB = int(mem)
		get := func(i int) string {
			if i < len(f) {
				return f[i]
			}
			return ""
		}
		g.PowerLimitW, _ = strconv.ParseFloat(get(4), 64)
		g.MIG, g.ECC, g.ComputeCap, g.UUID = get(5), get(6), get(7), get(8)
		gpus = append(gpus, g)
	}
	return gpus
}

// LoadAvg returns the 1, 5 and 15 minute load averages as /proc/loadavg gives them ("0.52 0.58
// 0.59"), or "?" where the system has no such file: a measurement prints them at its start and
// end, so that a reader can tell a quiet machine from a busy one.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
