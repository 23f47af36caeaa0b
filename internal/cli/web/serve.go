package web

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"
)

// Serve listens on addr and serves s until ctx is done (`inferbench serve`). With resultsDir set,
// the live view and /metrics follow the newest run written there. Once listening it writes
// "serving LABEL on http://ADDR/" to w, LABEL naming the store (redacted by the caller).
func (s *Server) Serve(ctx context.Context, addr, resultsDir, label string, w io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.runsDir == "" {
		s.runsDir = resultsDir
	}
	if resultsDir != "" {
		go WatchResults(ctx, resultsDir, time.Second, s.Hub(), s.Metrics())
	}
	fmt.Fprintf(w, "serving %s on http://%s/\n", label, ln.Addr())
	return ServeUntilDone(ctx, ln, s)
}
