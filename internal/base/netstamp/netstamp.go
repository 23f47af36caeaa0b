// Package netstamp gives TCP connections the kernel's receive timestamps. A time taken in user
// space when a read returns includes however long the reading goroutine waited for a CPU: on a
// loaded machine, milliseconds that belong to the reader, not to the peer. With SO_TIMESTAMPNS
// (Linux), every read reports when the kernel received the newest data it returned. The openai
// subject stamps streamed events with it, and the mockserver stamps request arrivals.
package netstamp

import (
	"context"
	"net"
	"time"
)

// Stamper is a connection that knows when the kernel received the data last read from it.
type Stamper interface {
	// Stamp returns the receive time of the newest data read, or the zero time when unknown.
	Stamp() time.Time
}

// Listen wraps ln so that the TCP connections it accepts are Stampers where the kernel allows.
func Listen(ln net.Listener) net.Listener { return &listener{ln} }

type listener struct{ net.Listener }

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return wrap(c), nil
}

// Dial returns a dial function for d whose TCP connections are Stampers where the kernel allows.
func Dial(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrap(c), nil
	}
}
