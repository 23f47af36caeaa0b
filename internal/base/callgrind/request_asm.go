//go:build amd64

package callgrind

const supported = true

// clientRequest issues a client request (request_amd64.s).
//
//go:noescape
func clientRequest(args *[6]uintptr) uintptr
