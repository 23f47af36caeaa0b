package logs

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestHeldReplaysIntoTee: what is logged before run.log opens is held at run.log's level, with
// the logger's attributes, and replayed into it once; a Tee sends each record to the handlers
// that take its level.
func TestHeldReplaysIntoTee(t *testing.T) {
	ctx := context.Background()
	held := NewHeld(slog.LevelInfo)
	var console bytes.Buffer
	log := slog.New(Tee{held, slog.NewTextHandler(&console, &slog.HandlerOptions{Level: slog.LevelWarn})}).With("run", "r1")
	log.Debug("discovery")       // below both levels: nowhere
	log.Info("selected", "n", 3) // held only
	log.Warn("slow disk")        // held and on the console

	if got := console.String(); strings.Contains(got, "selected") || !strings.Contains(got, "slow disk") {
		t.Errorf("console got %q, want the warning alone", got)
	}
	var file bytes.Buffer
	fh := slog.NewTextHandler(&file, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	held.Replay(ctx, fh)
	want := "level=INFO msg=selected n=3 run=r1\nlevel=WARN msg=\"slow disk\" run=r1\n"
	if file.String() != want {
		t.Errorf("run.log got:\n%s\nwant:\n%s", file.String(), want)
	}
	held.Replay(ctx, fh) // replayed once: nothing is held any more
	if file.String() != want {
		t.Errorf("a second Replay wrote again:\n%s", file.String())
	}
}

// TestLoggerInContext: a context carries the logger it was given, and one without any gives a
// logger that discards (a driver run outside the engine logs nowhere).
func TestLoggerInContext(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	Logger(WithLogger(context.Background(), l)).Debug("warm-up done")
	if !strings.Contains(buf.String(), "warm-up done") {
		t.Errorf("the logger in the context got %q", buf.String())
	}
	if Logger(context.Background()).Enabled(context.Background(), slog.LevelError) {
		t.Error("a context without a logger gives one that logs")
	}
}
