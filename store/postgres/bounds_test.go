package postgres

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

// silent accepts connections, reads what it is sent and never answers.
func silent(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						c.Close()
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestSilentServer opens a store at a server that accepts the connection and never answers: Open
// fails within the connect bound, saying so, and without the URL's password. It used to wait
// forever (run hung after measuring).
func TestSilentServer(t *testing.T) {
	old := ConnectTimeout
	ConnectTimeout = time.Second
	defer func() { ConnectTimeout = old }()
	url := "postgres://bench:s3cret@" + silent(t) + "/runs?sslmode=disable"
	done := make(chan error, 1)
	go func() {
		_, err := store.Open(context.Background(), store.Params{URL: url})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "did not respond") {
			t.Fatalf("err = %v, want a no-answer error", err)
		}
		t.Log(err)
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error shows the password: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Open of a silent server did not return within 30s")
	}
}

// hung is a store whose operations wait for their context.
type hung struct{ store.Store }

func (hung) Put(ctx context.Context, r *result.Run) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestOpTimeout checks that a store operation that never gets an answer ends at OpTimeout with
// an error naming the store and the bound.
func TestOpTimeout(t *testing.T) {
	old := opTimeout
	opTimeout = 50 * time.Millisecond
	defer func() { opTimeout = old }()
	b := &bounded{Store: hung{}, where: "postgres db:5432"}
	err := b.Put(context.Background(), &result.Run{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "postgres db:5432: put: no answer within 50ms") {
		t.Fatalf("err = %v", err)
	}
}
