package worker

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/subject"
)

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeWorker answers hello and setup, then each run with reply (the id is 3).
const fakeWorker = `read l; echo '{"id":1,"ok":true,"protocol":1}'
read l; echo '{"id":2,"ok":true}'
read l; echo "$RUN_REPLY"
read l; echo '{"id":4,"ok":true}'
`

// TestCommandFromDefinitionFolder checks that a worker command's program is the definition's
// file, found from a definition folder given relative to the current one: by a bare name
// (a program of that name on $PATH is not run) and by ./name (it used to be looked up again
// relative to the folder the process starts in, and not found).
func TestCommandFromDefinitionFolder(t *testing.T) {
	root := t.TempDir()
	defs := filepath.Join(root, "benches")
	bin := filepath.Join(root, "bin")
	os.MkdirAll(defs, 0o755)
	os.MkdirAll(bin, 0o755)
	script(t, defs, "myworker", "echo from-definition >&2; exit 3\n")
	script(t, bin, "myworker", "echo from-path >&2; exit 3\n")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cwd, _ := os.Getwd()
	relDefs, err := filepath.Rel(cwd, defs)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"myworker", "./myworker"} {
		_, err := OpenConfig(context.Background(), Config{Command: []string{name}, Timeouts: Timeouts{Start: 10 * time.Second}},
			subject.Spec{Dir: relDefs}, nil)
		if err == nil || !strings.Contains(err.Error(), "from-definition") {
			t.Errorf("command %q from %s: err = %v, want the definition's program (from-definition)", name, relDefs, err)
		}
	}
	// A bare name that is no file of the folder is a program on $PATH.
	_, err = OpenConfig(context.Background(), Config{Command: []string{"sh", "-c", "echo on-path >&2; exit 3"}, Timeouts: Timeouts{Start: 10 * time.Second}},
		subject.Spec{Dir: relDefs}, nil)
	if err == nil || !strings.Contains(err.Error(), "on-path") {
		t.Errorf("sh from $PATH: err = %v", err)
	}
}

// TestProtocolLineBound is a worker that writes a 20 MB line: it is stopped at MaxLineSize with
// an error naming the bound, instead of the line being read whole into memory.
func TestProtocolLineBound(t *testing.T) {
	dir := t.TempDir()
	p := script(t, dir, "w", `read l; head -c 20000000 /dev/zero | tr '\0' x; echo; sleep 30`+"\n")
	_, err := OpenConfig(context.Background(), Config{Command: []string{p}, Timeouts: Timeouts{Start: 20 * time.Second}}, subject.Spec{Dir: dir}, nil)
	var pe *ProcessError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "longer than 16777216 bytes (MaxLineSize)") {
		t.Fatalf("err = %v, want a ProcessError naming MaxLineSize", err)
	}
}

// TestRunReplyValues is a worker reporting impossible figures: each reply is refused with the
// field and iteration named, and none becomes an observation.
func TestRunReplyValues(t *testing.T) {
	dir := t.TempDir()
	p := script(t, dir, "w", fakeWorker)
	for _, tc := range []struct{ reply, want string }{
		{`{"id":3,"ok":true,"n":2,"latency_ms":[1,-5]}`, "latency_ms[1] = -5 is not a valid time"},
		{`{"id":3,"ok":true,"n":2,"latency_ms":[1,1e300]}`, "latency_ms[1] = 1e+300 is not a valid time"},
		{`{"id":3,"ok":true,"n":2,"latency_ms":[1,2],"ttft_ms":[0.5,-1]}`, "ttft_ms[1] = -1"},
		{`{"id":3,"ok":true,"n":2,"latency_ms":[1,2],"cpu_ms":[0.5,-1]}`, "cpu_ms[1] = -1"},
		{`{"id":3,"ok":true,"n":2,"latency_ms":[1,2],"output_tokens":-3}`, "output_tokens[0] = -3 is not a valid count"},
		{`{"id":3,"ok":true,"n":2,"latency_ms":[1,2],"items":[1,1e12]}`, "items[1] = 1e+12"},
		{`{"id":3,"ok":true,"n":2,"latency_ms":[1,2],"token_ms":[[1,-2],[1]]}`, "token_ms[0] = -2"},
	} {
		w, err := OpenConfig(context.Background(), Config{Command: []string{p}, Env: map[string]string{"RUN_REPLY": tc.reply}}, subject.Spec{Dir: dir}, nil)
		if err != nil {
			t.Fatal(err)
		}
		obs, err := w.DoBatch(context.Background(), subject.Request{}, 2)
		if err == nil || !strings.Contains(err.Error(), tc.want) || obs != nil {
			t.Errorf("reply %s: %d observations, err = %v; want none and %q", tc.reply, len(obs), err, tc.want)
		}
		w.Close()
	}
}
