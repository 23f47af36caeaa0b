//go:build !linux

package netstamp

import "net"

// wrap leaves c alone: kernel receive timestamps are used on Linux only.
func wrap(c net.Conn) net.Conn { return c }
