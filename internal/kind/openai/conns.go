package openai

import (
	"context"
	"errors"
	"net"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferbench/inferbench/internal/base/netstamp"
)

// conns keeps a Subject's connections to one per request in flight. Go's transport dials for a
// request that finds no idle connection and keeps dialing even when another request's connection
// frees up first and serves it; the dialed connection then joins the pool. When streams start
// together (a closed loop's first requests, a burst of arrivals) that opened connections beyond
// the load: 24 for 16 streams against a fast server. Its dial function waits while the
// connections open (or being dialed) already match the requests in flight, and gives the dial up
// when the request it was started for got a connection meanwhile.
//
// It also keeps the connection Open dialed to check the server, for the first request.
type conns struct {
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu       sync.Mutex
	open     int           // connections dialed or being dialed, not yet closed
	inflight int           // requests between begin and end
	waiters  int           // dials waiting in gate
	wake     chan struct{} // closed, and replaced, when waiting dials should look again
	spare    net.Conn      // Open's connection, until the first dial takes it
	spareAt  time.Time
}

// maxGateWait bounds how long a dial waits for a connection to free up: past it, it dials.
const maxGateWait = 250 * time.Millisecond

// spareLife is how long Open's connection is offered to the first request.
const spareLife = 2 * time.Second

// errNotNeeded ends a dial whose request got a connection while it waited. The transport drops
// the error: the request it was started for has its answer.
var errNotNeeded = errors.New("openai: dial not needed: the request got another connection")

func newConns(d *net.Dialer) *conns {
	return &conns{dial: netstamp.Dial(d), wake: make(chan struct{})}
}

// reqState is what one request's trace hooks note: its connection, whether it has one yet (for
// a dial waiting on its behalf) and when it was written.
type reqState struct {
	conn  net.Conn
	gotAt time.Time
	got   atomic.Bool
	wrote atomic.Int64
	// trace holds the hooks that note them: one allocation with the state, not two.
	trace httptrace.ClientTrace
}

type reqKey struct{}

// begin and end bracket a request, from before it asks for a connection to after its body was
// read and closed.
func (c *conns) begin() {
	c.mu.Lock()
	c.inflight++
	c.signalLocked()
	c.mu.Unlock()
}

func (c *conns) end() {
	c.mu.Lock()
	c.inflight--
	c.mu.Unlock()
}

// gotConn is called when a request got a connection: a dial waiting for it can give up.
func (c *conns) gotConn(r *reqState) {
	r.got.Store(true)
	c.mu.Lock()
	c.signalLocked()
	c.mu.Unlock()
}

func (c *conns) signalLocked() {
	if c.waiters > 0 {
		close(c.wake)
		c.wake = make(chan struct{})
	}
}

// DialContext is the transport's dial function.
func (c *conns) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	r, _ := ctx.Value(reqKey{}).(*reqState)
	needed := func() bool { return r == nil || !r.got.Load() }
	var timeout <-chan time.Time
	c.mu.Lock()
	for c.open >= c.inflight && needed() {
		if timeout == nil {
			t := time.NewTimer(maxGateWait)
			defer t.Stop()
			timeout = t.C
		}
		wake := c.wake
		c.waiters++
		c.mu.Unlock()
		var stop bool
		select {
		case <-wake:
		case <-timeout:
			stop = true
		case <-ctx.Done():
			c.mu.Lock()
			c.waiters--
			c.mu.Unlock()
			return nil, ctx.Err()
		}
		c.mu.Lock()
		c.waiters--
		if stop {
			break
		}
	}
	if !needed() {
		c.mu.Unlock()
		return nil, errNotNeeded
	}
	c.open++
	spare := c.spare
	c.spare = nil
	fresh := time.Since(c.spareAt) < spareLife
	c.mu.Unlock()
	if spare != nil {
		if fresh && spare.RemoteAddr().String() == addr {
			return &countedConn{Conn: spare, c: c}, nil
		}
		spare.Close()
	}
	conn, err := c.dial(ctx, network, addr)
	if err != nil {
		c.closed()
		return nil, err
	}
	return &countedConn{Conn: conn, c: c}, nil
}

// keep offers Open's connection to the first dial.
func (c *conns) keep(conn net.Conn) {
	c.mu.Lock()
	old := c.spare
	c.spare, c.spareAt = conn, time.Now()
	c.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// drop closes the spare connection, if no dial took it.
func (c *conns) drop() {
	c.mu.Lock()
	spare := c.spare
	c.spare = nil
	c.mu.Unlock()
	if spare != nil {
		spare.Close()
	}
}

func (c *conns) closed() {
	c.mu.Lock()
	c.open--
	c.signalLocked()
	c.mu.Unlock()
}

// countedConn counts itself out of conns when closed; it passes on the kernel's receive
// timestamps.
type countedConn struct {
	net.Conn
	c    *conns
	done atomic.Bool
}

var _ netstamp.Stamper = (*countedConn)(nil)

func (cc *countedConn) Close() error {
	if cc.done.CompareAndSwap(false, true) {
		cc.c.closed()
	}
	return cc.Conn.Close()
}

// Stamp returns the connection's kernel receive time, or the zero time when it has none.
func (cc *countedConn) Stamp() time.Time {
	if st, ok := cc.Conn.(netstamp.Stamper); ok {
		return st.Stamp()
	}
	return time.Time{}
}
