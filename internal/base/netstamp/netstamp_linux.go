package netstamp

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// stampConn is a TCP connection whose reads note the kernel's receive timestamp.
type stampConn struct {
	*net.TCPConn
	rc   syscall.RawConn
	oob  []byte
	last atomic.Int64 // Unix nanoseconds of the newest data read; 0 when unknown

	// A streamed response is read one event at a time, a read per token: what a read needs is
	// kept here, so that it allocates nothing (a closure over its results, and the syscall
	// package's Recvmsg, allocated four times a read, 40% of a streamed request's allocations).
	mu   sync.Mutex // one Read at a time uses what follows
	recv func(fd uintptr) bool
	msg  syscall.Msghdr
	iov  syscall.Iovec
	n    int
	err  syscall.Errno

	// And written one event at a time: likewise for a write.
	wmu  sync.Mutex // one Write at a time uses what follows
	send func(fd uintptr) bool
	wbuf []byte
	wn   int
	werr syscall.Errno
}

// The socket is non-blocking (the netpoller waits for it), so its writes return at once and are
// made as raw system calls, which the runtime does not see: one made through syscall.Syscall wakes
// the runtime's monitor thread whenever the process was idle, and the monitor then polls every
// 20 µs for a millisecond. The mockserver writes a token every half millisecond on each stream,
// and kept it polling: a sixth of its CPU in the monitor's wake-ups and context switches.
//
// Reads stay seen (syscall.Syscall): the same polling keeps the client's CPUs awake, and a client
// that lets them sleep reads its tokens later (read_delay_ms p99 about 1 ms rather than 0.5 under
// two busy neighbours, `inferbench run --rate 46` against the slots8-p90 model), which merges more
// of them into one read.

// wrap turns a TCP connection into a stampConn when the kernel accepts SO_TIMESTAMPNS.
func wrap(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c
	}
	sc := &stampConn{TCPConn: tc, rc: rc, oob: make([]byte, syscall.CmsgSpace(16)*2)}
	sc.recv, sc.send = sc.recvmsg, sc.write
	return sc
}

func (c *stampConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.iov.Base = &p[0]
	c.iov.SetLen(len(p))
	err := c.rc.Read(c.recv)
	c.iov.Base = nil
	n := c.n
	if err == nil && c.err != 0 {
		err = c.err
	}
	if err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if n == 0 {
		return 0, io.EOF
	}
	c.last.Store(timestampNS(c.oob[:c.msg.Controllen])) // 0, unknown, when this read carried none
	return n, nil
}

// recvmsg reads into c.iov once, the control messages into c.oob; it reports whether the read is
// done (anything but EAGAIN), its results in c.n, c.err and c.msg.Controllen.
func (c *stampConn) recvmsg(fd uintptr) bool {
	c.msg = syscall.Msghdr{Iov: &c.iov, Iovlen: 1, Control: &c.oob[0]}
	c.msg.SetControllen(len(c.oob))
	for {
		r, _, e := syscall.Syscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&c.msg)), 0)
		if e == syscall.EINTR {
			continue
		}
		c.n, c.err = int(r), e
		if e != 0 {
			c.n = 0
		}
		return e != syscall.EAGAIN
	}
}

// Write writes p whole (waiting for room in the socket's buffer as net.Conn does), or returns how
// much it wrote and why it stopped.
func (c *stampConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf, c.wn, c.werr = p, 0, 0
	err := c.rc.Write(c.send)
	n := c.wn
	c.wbuf = nil
	if err == nil && c.werr != 0 {
		err = c.werr
	}
	if err != nil {
		return n, &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	return n, nil
}

// write writes what is left of c.wbuf; it reports whether the write is done (all written, or an
// error other than EAGAIN, in c.werr).
func (c *stampConn) write(fd uintptr) bool {
	for c.wn < len(c.wbuf) {
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&c.wbuf[c.wn])), uintptr(len(c.wbuf)-c.wn))
		switch e {
		case 0:
			c.wn += int(r)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			c.werr = e
			return true
		}
	}
	return true
}

// Stamp returns when the kernel received the newest data read, or the zero time.
func (c *stampConn) Stamp() time.Time {
	if ns := c.last.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// timestampNS finds SCM_TIMESTAMPNS in a control message buffer.
func timestampNS(oob []byte) int64 {
	hdr := syscall.CmsgLen(0)
	for len(oob) >= hdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return 0
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS && l-hdr >= int(unsafe.Sizeof(syscall.Timespec{})) {
			return (*syscall.Timespec)(unsafe.Pointer(&oob[hdr])).Nano()
		}
		oob = oob[min(syscall.CmsgSpace(l-hdr), len(oob)):]
	}
	return 0
}
