//go:build !unix

package readall

const openNonBlock = 0
