package netstamp

import (
	"io"
	"net"
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
}

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
	return &stampConn{TCPConn: tc, rc: rc, oob: make([]byte, syscall.CmsgSpace(16)*2)}
}

func (c *stampConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n, oobn int
	var rerr error
	err := c.rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = syscall.Recvmsg(int(fd), p, c.oob, 0)
		return rerr != syscall.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if n == 0 {
		return 0, io.EOF
	}
	c.last.Store(timestampNS(c.oob[:oobn])) // 0, unknown, when this read carried none
	return n, nil
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
