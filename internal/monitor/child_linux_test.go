package monitor

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"syscall"
)

// child runs in a re-executed test binary. It maps and touches 300 MiB when told to on stdin.
func child(mode string) int {
	in := bufio.NewScanner(os.Stdin)
	fmt.Println("ready")
	if !in.Scan() {
		return 1
	}
	const size = 300 << 20
	// MAP_POPULATE makes the kernel fault every page in: the memory is touched without a user
	// space loop (which the race detector would shadow, inflating RSS).
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
	if err != nil {
		fmt.Println("mmap:", err)
		return 1
	}
	fmt.Println("allocated")
	if mode == "spike" {
		syscall.Munmap(mem)
		fmt.Println("freed")
	}
	io.Copy(io.Discard, os.Stdin)
	return 0
}
