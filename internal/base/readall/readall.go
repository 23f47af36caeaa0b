// Package readall reads a whole stream into a caller's buffer, with a size limit, so servers and
// clients on hot paths can reuse one buffer per request instead of allocating as io.ReadAll does.
package readall

import (
	"fmt"
	"io"
)

// Into appends everything r yields to b and returns the extended slice. It stops with an error
// naming what ("request body", "response body") once more than limit bytes have been read. The
// returned slice is valid even on error, so the caller can keep its (possibly grown) buffer.
func Into(r io.Reader, b []byte, limit int, what string) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow, letting append pick the new capacity
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) > limit {
			return b, fmt.Errorf("%s over %d bytes", what, limit)
		}
	}
}
