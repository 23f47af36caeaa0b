package netstamp

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tries is how many connections a test of the kernel's timestamps tries before it fails.
const tries = 20

// TestKernelStamps checks that a read reports when the data arrived, not when it was read.
func TestKernelStamps(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sent := make(chan time.Time, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// Answer a request, as a server does: the client set its socket options before sending.
			if _, err := c.Read(make([]byte, 1)); err == nil {
				sent <- time.Now()
				c.Write([]byte("data: x\n\n"))
			}
			c.Close()
		}
	}()
	// The kernel turns receive timestamps on asynchronously the first time a socket asks, so the
	// very first packets may have none: try a few connections.
	// Other processes' sockets turn the kernel's timestamps off and on again (a deferred static
	// key), so under parallel tests a few tries in a row may see none: up to 20, a little apart.
	for try := range tries {
		c, err := Dial(&net.Dialer{})(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		st, ok := c.(Stamper)
		if !ok {
			c.Close()
			t.Skip("the kernel refused SO_TIMESTAMPNS")
		}
		if _, err := c.Write([]byte("?")); err != nil {
			t.Fatal(err)
		}
		at := <-sent
		time.Sleep(100 * time.Millisecond) // the client is late to read
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		read := time.Now()
		c.Close()
		if err != nil || n != 9 {
			t.Fatalf("read %d, %v", n, err)
		}
		got := st.Stamp()
		if got.IsZero() {
			t.Logf("try %d: no kernel timestamp yet", try)
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if d := got.Sub(at); d < -time.Millisecond || d > 20*time.Millisecond {
			t.Errorf("stamp %v after the send; want the arrival, not the read %v later", d, read.Sub(at))
		}
		return
	}
	t.Fatalf("no kernel timestamp in %d tries", tries)
}

// TestListenStamps checks the server side: an accepted connection reports when a request arrived.
func TestListenStamps(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Listen(inner)
	defer ln.Close()
	// Other processes' sockets turn the kernel's timestamps off and on again (a deferred static
	// key), so under parallel tests a few tries in a row may see none: up to 20, a little apart.
	for try := range tries {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		st, ok := s.(Stamper)
		if !ok {
			t.Skip("the kernel refused SO_TIMESTAMPNS")
		}
		time.Sleep(10 * time.Millisecond) // let the option take effect before the request
		sent := time.Now()
		c.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
		time.Sleep(100 * time.Millisecond) // the server is late to read
		n, err := s.Read(make([]byte, 64))
		c.Close()
		s.Close()
		if err != nil || n == 0 {
			t.Fatalf("read %d, %v", n, err)
		}
		got := st.Stamp()
		if got.IsZero() {
			t.Logf("try %d: no kernel timestamp yet", try)
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if d := got.Sub(sent); d < -time.Millisecond || d > 20*time.Millisecond {
			t.Errorf("stamp %v after the send, want the arrival", d)
		}
		return
	}
	t.Fatalf("no kernel timestamp in %d tries", tries)
}

// TestReadAllocatesNothing holds a stamped read to no allocation: a streamed response is read a
// token at a time, and the reads were 40% of a streamed request's allocations.
func TestReadAllocatesNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		s, err := ln.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		s.Write(make([]byte, 4096))
		s.Read(make([]byte, 1)) // until the client closes
	}()
	c, err := Dial(&net.Dialer{})(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(Stamper); !ok {
		t.Skip("the kernel refused SO_TIMESTAMPNS")
	}
	buf := make([]byte, 1)
	if _, err := io.ReadFull(c, buf); err != nil { // the data has arrived (one loopback segment)
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("a read allocated %v times; want 0", n)
	}
}

// TestWriteWhole: a stamped connection's writes, raw system calls on a non-blocking socket, write
// all they are given, waiting for room as the peer reads (8 MB: many times a socket's buffer), and
// keep the connection's write deadline.
func TestWriteWhole(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		s, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer s.Close()
		n, _ := io.Copy(io.Discard, s)
		got <- n
	}()
	c, err := Dial(&net.Dialer{})(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(Stamper); !ok {
		c.Close()
		t.Skip("the kernel refused SO_TIMESTAMPNS")
	}
	const size = 8 << 20
	if n, err := c.Write(make([]byte, size)); n != size || err != nil {
		t.Fatalf("wrote %d of %d: %v", n, size, err)
	}
	if err := c.SetWriteDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("late")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a write past its deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	c.Close()
	if n := <-got; n != size {
		t.Errorf("the peer read %d bytes of %d", n, size)
	}
}
