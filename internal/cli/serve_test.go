package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/store"
)

// lockedBuffer is a bytes.Buffer a command may write while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serve names the store it serves: the default SQLite file under the working directory, or the
// --store given with its password redacted; it stops with its context and exits 0.
func TestServeNamesItsStore(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// no --store, no $INFERBENCH_STORE: the default file in the command's directory
		{"default", nil, regexp.QuoteMeta(filepath.Join(dir, store.DefaultPath))},
		// an explicit SQLite store is named as given
		{"flag", []string{"--store", "sqlite:other.db"}, "sqlite:other\\.db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errOut lockedBuffer
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--results-dir", ""}, tc.args...)
			done := make(chan int)
			go func() {
				done <- Main(ctx, args, IO{Stdout: &out, Stderr: &errOut, Env: []string{"CI=1"}, Dir: dir})
			}()
			re := regexp.MustCompile(`^serving ` + tc.want + ` on http://127\.0\.0\.1:\d+/\n$`)
			deadline := time.Now().Add(30 * time.Second)
			for out.String() == "" && time.Now().Before(deadline) {
				select {
				case code := <-done:
					t.Fatalf("serve exited %d before serving\n%s", code, errOut.String())
				case <-time.After(10 * time.Millisecond):
				}
			}
			if !re.MatchString(out.String()) {
				t.Errorf("serve printed %q, want it to match %s", out.String(), re)
			}
			cancel()
			if code := <-done; code != ExitOK {
				t.Errorf("serve stopped with exit %d, want 0\n%s", code, errOut.String())
			}
		})
	}
}
