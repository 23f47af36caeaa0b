package explain

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/inferbench/inferbench/internal/base/readall"
)

// Limits of what explain reads (docs/explain.md, "What explain refuses"): a run folder may come
// from anywhere (a CI artifact), and compare and the dashboard explain what it holds.
const (
	// MaxProfileSize bounds each profile file read: a callgrind file of a large program is tens
	// of megabytes, a Go CPU profile a few.
	MaxProfileSize = 256 << 20
	// MaxPprofInflated bounds what a gzip-compressed cpu.pprof inflates to (a Go CPU profile
	// inflates some 4 to 10 times; a gzip bomb inflates 1000 times).
	MaxPprofInflated = 64 << 20
	// MaxCost bounds each cost read (an instruction count, a time in milliseconds, a call
	// count): 2^53, beyond which a float64 no longer holds every integer. A real cost is far
	// below: 2^53 instructions are a month of a core's work.
	MaxCost = 1 << 53
)

// inflateLimit is MaxPprofInflated, lowered by tests.
var inflateLimit = MaxPprofInflated

// openProfile opens the profile file f (a run.json `profiles` path, relative to the run folder
// dir) for reading: a regular file inside dir (readall.OpenIn: no "..", no absolute path, no link
// leading out, no named pipe or device) of at most MaxProfileSize bytes.
func openProfile(dir, f string) (io.ReadCloser, error) {
	fh, err := readall.OpenIn(dir, filepath.FromSlash(f))
	if err != nil {
		if errors.Is(err, readall.ErrOutside) {
			return nil, fmt.Errorf("%w: not read (a profile of a run is a file of its folder)", err)
		}
		return nil, err
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	path := filepath.Join(dir, filepath.FromSlash(f))
	if fi.Size() > MaxProfileSize {
		fh.Close()
		return nil, fmt.Errorf("%s: %d bytes, over the limit of %d MiB for a profile file: not read", path, fi.Size(), MaxProfileSize>>20)
	}
	// Bounded as well while it is read, for a file that grows.
	return struct {
		io.Reader
		io.Closer
	}{&limited{r: fh, n: MaxProfileSize, what: fmt.Sprintf("%s: over the limit of %d MiB for a profile file", path, MaxProfileSize>>20)}, fh}, nil
}

// limited is io.LimitReader that fails, rather than ends, past its limit.
type limited struct {
	r    io.Reader
	n    int64
	what string
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, errors.New(l.what)
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, errors.New(l.what)
	}
	return n, err
}

// readPprofData reads a CPU profile whole, inflating it when it is gzip-compressed (as
// runtime/pprof writes it), to at most MaxPprofInflated bytes.
func readPprofData(r io.Reader) ([]byte, error) {
	data, err := readall.Into(r, nil, MaxProfileSize, "profile")
	if err != nil {
		return nil, err
	}
	if !isGzip(data) {
		return data, nil
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	out, err := readall.Into(io.LimitReader(gz, int64(inflateLimit)+1), nil, inflateLimit, "inflated profile")
	if err != nil {
		if len(out) > inflateLimit {
			return nil, fmt.Errorf("inflates to more than %d MiB (from %d bytes), over the limit for a CPU profile: not read", inflateLimit>>20, len(data))
		}
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if isGzip(out) {
		// The profile parser would inflate it again, without a limit.
		return nil, errors.New("gzip inside gzip: not a CPU profile as runtime/pprof writes it")
	}
	return out, nil
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// checkCost returns an error when v is not a cost explain can add and print: NaN, infinite, or
// beyond ±MaxCost (a time a profiler measured may be a little negative: torch's self times).
func checkCost(v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%v is not a number", v)
	case math.Abs(v) > MaxCost:
		return fmt.Errorf("%g is beyond %g, the most a cost can be", v, float64(MaxCost))
	}
	return nil
}

// checkSums returns an error when a cost summed over a profile's files or samples is not one
// (checkCost): each cost read is checked, their sums once here.
func (p *Profile) checkSums() error {
	for i, c := range p.Chunks {
		for _, m := range []map[string]float64{c.Self, c.Incl, c.Count} {
			for name, v := range m {
				if err := checkCost(v); err != nil {
					return fmt.Errorf("chunk %d: %q: %w", i+1, name, err)
				}
			}
		}
	}
	for k, v := range p.Stacks {
		if err := checkCost(v); err != nil {
			return fmt.Errorf("stack %q: %w", k, err)
		}
	}
	return nil
}
