// Package serverproc starts the server under test for a benchmark definition's `server:` block
// (a launch.Config): it renders the command with the scenario's parameters, starts it in its own
// process group with its output captured to a log file, waits until a readiness probe answers,
// and tears the whole group down afterwards (SIGTERM, then SIGKILL after a grace period).
// Consecutive scenarios whose rendered command is the same share one server.
package serverproc

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/base/procgroup"
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/launch"
)

// Server is a running server process.
type Server struct {
	key     string // rendered command and environment: equal keys can share a server
	cmd     *exec.Cmd
	log     *os.File
	logPath string
	port    int
	done    chan struct{}
	waitErr error
	stop    time.Duration
	once    sync.Once
}

// Plan is a rendered server block, ready to start or to compare with a running server.
type Plan struct {
	cfg     launch.Config
	args    []string
	env     []string
	dir     string
	ready   string
	port    int
	key     string
	logPath string
	red     Redactor
}

// Redactor hides secrets in text: String returns s with every secret it knows masked (a run's,
// handed in through the engine's WithRedactor).
type Redactor interface {
	String(s string) string
}

// Redact makes the server's log go through r (its secrets hidden); nil writes it as it is.
func (p *Plan) Redact(r Redactor) { p.red = r }

// Render substitutes params (and a free port, when "{port}" is used and params has none) into
// cfg. base is the definition's directory; logPath receives the server's output ("" discards
// it).
func Render(cfg launch.Config, params map[string]any, base, logPath string) (*Plan, error) {
	vals := map[string]string{}
	for k, v := range params {
		vals[k] = fmt.Sprint(v)
	}
	p := &Plan{cfg: cfg, logPath: logPath}
	if _, ok := vals["port"]; !ok && usesPort(cfg) {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("server: finding a free port: %w", err)
		}
		p.port = port
		vals["port"] = strconv.Itoa(port)
	}
	render := func(s string) (string, error) {
		var b strings.Builder
		for {
			i := strings.IndexByte(s, '{')
			if i < 0 {
				b.WriteString(s)
				return b.String(), nil
			}
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				b.WriteString(s)
				return b.String(), nil
			}
			name := s[i+1 : i+j]
			v, ok := vals[name]
			if !ok {
				return "", fmt.Errorf("server: %q names {%s}, which is not a parameter of this scenario", s, name)
			}
			b.WriteString(s[:i])
			b.WriteString(v)
			s = s[i+j+1:]
		}
	}
	for _, a := range cfg.Command {
		r, err := render(a)
		if err != nil {
			return nil, err
		}
		p.args = append(p.args, r)
	}
	if p.args[0] == "inferbench" {
		if exe, err := os.Executable(); err == nil {
			p.args[0] = exe
		}
	}
	keys := slices.Sorted(maps.Keys(cfg.Env))
	for _, k := range keys {
		v, err := render(cfg.Env[k])
		if err != nil {
			return nil, err
		}
		p.env = append(p.env, k+"="+v)
	}
	var err error
	if p.ready, err = render(cfg.Ready); err != nil {
		return nil, err
	}
	p.dir = base
	if cfg.Dir != "" {
		p.dir = cfg.Dir
		if !filepath.IsAbs(p.dir) {
			p.dir = filepath.Join(base, p.dir)
		}
	}
	// The port is part of the command, so a drawn port would never match: leave it out of the key.
	key := strings.Join(p.args, "\x00") + "\x01" + strings.Join(p.env, "\x00") + "\x01" + p.dir
	if p.port != 0 {
		key = strings.ReplaceAll(key, strconv.Itoa(p.port), "{port}")
	}
	p.key = key
	return p, nil
}

// Port returns the port drawn for "{port}", or 0.
func (p *Plan) Port() int { return p.port }

// Same reports whether s runs what p describes, so a scenario can reuse it.
func (p *Plan) Same(s *Server) bool { return s != nil && s.key == p.key && s.Running() }

// String returns the command line.
func (p *Plan) String() string { return strings.Join(p.args, " ") }

func usesPort(cfg launch.Config) bool {
	all := append(slices.Clone(cfg.Command), cfg.Ready)
	for _, v := range cfg.Env {
		all = append(all, v)
	}
	for _, s := range all {
		if strings.Contains(s, "{port}") {
			return true
		}
	}
	return false
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Start starts the server and waits until it is ready. env is the base environment (nil: this
// process's). On failure the server is stopped and the error quotes the end of its log.
func (p *Plan) Start(ctx context.Context, env []string) (*Server, error) {
	if env == nil {
		env = os.Environ()
	}
	if fi, err := os.Stat(p.dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("server: working directory %q does not exist (set server.dir)", p.dir)
	}
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Env = append(slices.Clone(env), p.env...)
	cmd.Dir = p.dir
	setProcessGroup(cmd)
	s := &Server{key: p.key, cmd: cmd, port: p.port, done: make(chan struct{}), stop: p.cfg.StopTimeout, logPath: p.logPath}
	if s.stop == 0 {
		s.stop = 10 * time.Second
	}
	var out io.Writer = io.Discard
	if p.logPath != "" {
		if err := os.MkdirAll(filepath.Dir(p.logPath), 0o755); err != nil {
			return nil, fmt.Errorf("server log: %w", err)
		}
		f, err := os.Create(p.logPath)
		if err != nil {
			return nil, fmt.Errorf("server log: %w", err)
		}
		s.log, out = f, f
	}
	flush := func() {}
	if p.red != nil && out != io.Discard {
		rw := redact.NewWriter(out, p.red)
		out, flush = rw, func() { _ = rw.Flush() }
		cmd.WaitDelay = 2 * time.Second // the log is now a pipe: a child holding it does not block Wait
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		s.closeLog()
		return nil, fmt.Errorf("server: starting %s: %w", p, err)
	}
	untrack := procgroup.Add(cmd.Process.Pid) // the second Ctrl-C kills it (inferbench.Run)
	go func() {
		s.waitErr = cmd.Wait()
		untrack()
		flush()
		close(s.done)
	}()
	timeout := p.cfg.ReadyTimeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	if err := s.waitReady(ctx, p.ready, timeout); err != nil {
		s.Stop()
		return nil, fmt.Errorf("server %s: %w%s", p, err, s.tail())
	}
	return s, nil
}

// waitReady polls the probe every 100 ms until it answers, the process exits, or timeout passes.
func (s *Server) waitReady(ctx context.Context, probe string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	check := func() error {
		if addr, ok := strings.CutPrefix(probe, "tcp://"); ok {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
			}
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, probe, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("%s answered %s", probe, resp.Status)
		}
		return nil
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = check(); last == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("exited before it was ready (%v)", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("not ready after %v: %v", timeout, last)
		case <-tick.C:
		}
	}
}

// Running reports whether the process is still alive.
func (s *Server) Running() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// Port returns the port drawn for the server, or 0.
func (s *Server) Port() int { return s.port }

// PID returns the server's process id (for monitors).
func (s *Server) PID() int { return s.cmd.Process.Pid }

// LogPath returns the file holding the server's output, or "".
func (s *Server) LogPath() string { return s.logPath }

// Stop terminates the server's process group: SIGTERM, then SIGKILL after the grace period. It
// returns once the process has exited; calling it again does nothing.
func (s *Server) Stop() {
	s.once.Do(func() {
		terminate(s.cmd, false)
		select {
		case <-s.done:
		case <-time.After(s.stop):
			terminate(s.cmd, true)
			<-s.done
		}
		s.closeLog()
	})
}

func (s *Server) closeLog() {
	if s.log != nil {
		s.log.Close()
	}
}

// tail returns the last lines of the server's log, for error messages.
func (s *Server) tail() string {
	if s.logPath == "" {
		return ""
	}
	b, err := os.ReadFile(s.logPath)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return "\nlast lines of " + s.logPath + ":\n  " + strings.Join(lines, "\n  ")
}
