package gpu

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/monitor"
)

// Fields of nvidia-smi --query-gpu, in the order the parsers expect them.
const (
	smiInfoFields   = "index,name,uuid,memory.total,driver_version,power.limit,mig.mode.current,ecc.mode.current"
	smiSampleFields = "index,utilization.gpu,memory.used,power.draw,temperature.gpu,clocks.sm,clocks.mem"
)

// smi reads GPUs through nvidia-smi: one query for the device descriptions, then one long-lived
// `-lms` loop whose lines are parsed as they arrive, so a sample costs no process start.
type smi struct {
	path string
	devs []Info

	mu     sync.Mutex
	latest map[int]smiLine
	cmd    *exec.Cmd
	done   chan struct{}
	err    error // why the loop ended
	maxAge time.Duration
}

type smiLine struct {
	r  Reading
	at time.Time
}

func openSMI(ctx context.Context, cfg Config, stream bool) (*smi, error) {
	path := cfg.SMIPath
	if path == "" {
		p, err := exec.LookPath("nvidia-smi")
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi: not found in PATH")
		}
		path = p
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--query-gpu="+smiInfoFields, "--format=csv,noheader,nounits").Output()
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi: %w%s", err, stderrOf(err))
	}
	devs, err := parseSMIInfo(out)
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi: %w", err)
	}
	if len(devs) == 0 {
		return nil, errors.New("nvidia-smi: no GPUs listed")
	}
	if banner, err := exec.CommandContext(ctx, path).Output(); err == nil {
		cuda := parseSMICUDA(banner)
		for i := range devs {
			devs[i].CUDA = cuda
		}
	}
	s := &smi{path: path, devs: devs, latest: map[int]smiLine{}}
	if stream {
		if err := s.start(cfg.Interval); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// start runs the sampling loop in the background.
func (s *smi) start(interval time.Duration) error {
	if interval <= 0 {
		interval = monitor.DefaultInterval
	}
	ms := max(1, interval.Milliseconds())
	s.maxAge = 5*interval + time.Second
	cmd := exec.Command(s.path, "--query-gpu="+smiSampleFields, "--format=csv,noheader,nounits", "-lms", strconv.FormatInt(ms, 10))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("nvidia-smi: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("nvidia-smi: %w", err)
	}
	s.cmd = cmd
	s.done = make(chan struct{})
	go s.consume(stdout)
	return nil
}

func (s *smi) consume(r io.Reader) {
	defer close(s.done)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		idx, rd, err := parseSMISample(sc.Text())
		if err != nil {
			continue // a partial or header line: the next one will do
		}
		s.mu.Lock()
		s.latest[idx] = smiLine{r: rd, at: time.Now()}
		s.mu.Unlock()
	}
	err := s.cmd.Wait()
	s.mu.Lock()
	s.err = fmt.Errorf("nvidia-smi loop ended: %v", err)
	s.mu.Unlock()
}

func (s *smi) devices() []Info { return s.devs }

func (s *smi) read(i int) (Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.latest[i]
	switch {
	case !ok && s.err != nil:
		return Reading{}, s.err
	case !ok:
		return Reading{}, errors.New("no nvidia-smi reading yet")
	case s.maxAge > 0 && time.Since(l.at) > s.maxAge:
		if s.err != nil {
			return Reading{}, s.err
		}
		return Reading{}, fmt.Errorf("nvidia-smi reading is %v old", time.Since(l.at).Round(time.Millisecond))
	}
	return l.r, nil
}

// energy: nvidia-smi has no energy counter field; the sampler integrates power.
func (s *smi) energy(int) (uint64, bool) { return 0, false }

func (s *smi) pids() []int {
	if s.cmd != nil && s.cmd.Process != nil {
		return []int{s.cmd.Process.Pid}
	}
	return nil
}

func (s *smi) close() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
	return nil
}

// parseSMIInfo parses `nvidia-smi --query-gpu=<smiInfoFields> --format=csv,noheader,nounits`.
func parseSMIInfo(b []byte) ([]Info, error) {
	rows, err := readCSV(b)
	if err != nil {
		return nil, err
	}
	var out []Info
	for n, f := range rows {
		if len(f) != 8 {
			return nil, fmt.Errorf("line %d: %d fields, want 8 (%s)", n+1, len(f), smiInfoFields)
		}
		idx, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, fmt.Errorf("line %d: index %q: %w", n+1, f[0], err)
		}
		out = append(out, Info{
			Index:       idx,
			Name:        f[1],
			UUID:        smiString(f[2]),
			MemoryMB:    zeroNaN(smiFloat(f[3])),
			Driver:      smiString(f[4]),
			PowerLimitW: zeroNaN(smiFloat(f[5])),
			MIG:         smiMode(f[6]),
			ECC:         smiMode(f[7]),
			Source:      "nvidia-smi",
		})
	}
	return out, nil
}

// parseSMISample parses one line of `--query-gpu=<smiSampleFields>`.
func parseSMISample(line string) (int, Reading, error) {
	f := strings.Split(line, ",")
	if len(f) != 7 {
		return 0, Reading{}, fmt.Errorf("%d fields, want 7", len(f))
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	idx, err := strconv.Atoi(f[0])
	if err != nil {
		return 0, Reading{}, fmt.Errorf("index %q: %w", f[0], err)
	}
	return idx, Reading{
		UtilPct:     smiFloat(f[1]),
		MemUsedMB:   smiFloat(f[2]),
		PowerW:      smiFloat(f[3]),
		TempC:       smiFloat(f[4]),
		SMClockMHz:  smiFloat(f[5]),
		MemClockMHz: smiFloat(f[6]),
	}, nil
}

var cudaRE = regexp.MustCompile(`CUDA Version:\s*([0-9]+(?:\.[0-9]+)*)`)

// parseSMICUDA finds the CUDA version in nvidia-smi's banner.
func parseSMICUDA(b []byte) string {
	if m := cudaRE.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

func readCSV(b []byte) ([][]string, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		for i := range row {
			row[i] = strings.TrimSpace(row[i])
		}
	}
	return rows, nil
}

// smiFloat parses a number; "[N/A]", "[Not Supported]" and the like are NaN.
func smiFloat(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

func smiString(s string) string {
	if strings.HasPrefix(s, "[") || s == "N/A" {
		return ""
	}
	return s
}

func smiMode(s string) string {
	switch strings.ToLower(s) {
	case "enabled":
		return "enabled"
	case "disabled":
		return "disabled"
	}
	return ""
}

func zeroNaN(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}
