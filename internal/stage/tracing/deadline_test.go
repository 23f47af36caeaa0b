package tracing

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
)

// blackHole listens on loopback, accepts every connection and never answers; it returns the
// endpoint URL.
func blackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestBlackHoleCollector: a collector that accepts connections and never answers costs a run at
// most the export deadline, 2 s by default and OTEL_EXPORTER_OTLP_TIMEOUT when set (issue 23: the
// flush had no deadline and added 30 s to every run).
func TestBlackHoleCollector(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		limit time.Duration
	}{
		{"default", nil, DefaultTimeout},
		{"OTEL_EXPORTER_OTLP_TIMEOUT", map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "300"}, 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			tr, err := Start(context.Background(), blackHole(t), "test", WithLookupEnv(lookup))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			done := make(chan error, 1)
			go func() { done <- tr.Finish(context.Background(), &result.Run{ID: "r"}) }()
			select {
			case err = <-done:
			case <-time.After(tc.limit + 5*time.Second):
				t.Fatalf("the flush still waits after %v; the deadline is %v", time.Since(start), tc.limit)
			}
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_TIMEOUT") {
				t.Errorf("err = %v: want the undelivered spans reported with the setting to change", err)
			}
			// The bar of the issue: at most 2 s; a little slack for a loaded machine.
			if took > tc.limit+500*time.Millisecond {
				t.Errorf("the flush took %v; the deadline is %v", took, tc.limit)
			}
		})
	}
}

// TestTimeoutAndProtocolEnv: the deadline and protocol variables, read from the run's environment.
func TestTimeoutAndProtocolEnv(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	for _, tc := range []struct {
		env  []string
		want time.Duration
		bad  bool
	}{
		{nil, DefaultTimeout, false},
		{[]string{"OTEL_EXPORTER_OTLP_TIMEOUT", "10000"}, 10 * time.Second, false},
		// the signal's own variable wins
		{[]string{"OTEL_EXPORTER_OTLP_TIMEOUT", "10000", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "500"}, 500 * time.Millisecond, false},
		{[]string{"OTEL_EXPORTER_OTLP_TIMEOUT", "10s"}, 0, true},
		{[]string{"OTEL_EXPORTER_OTLP_TIMEOUT", "-1"}, 0, true},
	} {
		got, err := Timeout(env(tc.env...))
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("%v: %v, %v; want %v (error %v)", tc.env, got, err, tc.want, tc.bad)
		}
	}
	// grpc is refused when the run starts, naming the variable and the fix (issue 23: HTTP was
	// sent to the gRPC port and the run exited 0).
	_, err := Start(context.Background(), "http://127.0.0.1:4317", "test", WithLookupEnv(env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")))
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL=grpc") || !strings.Contains(err.Error(), "4318") {
		t.Errorf("grpc: err = %v", err)
	}
	tr, err := Start(context.Background(), "http://127.0.0.1:4318", "test", WithLookupEnv(env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")))
	if err != nil {
		t.Errorf("http/protobuf: %v", err)
	} else {
		tr.tp.Shutdown(context.Background())
	}
}
