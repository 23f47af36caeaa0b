//go:build !linux

package openai

import (
	"context"
	"net"
)

// stampDial returns d's dialer: kernel receive timestamps are used on Linux only.
func stampDial(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return d.DialContext
}
