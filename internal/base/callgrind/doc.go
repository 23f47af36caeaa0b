// Package callgrind is instruction mode's counter (`--measure instructions`): it finds valgrind,
// builds the command line that runs a process under valgrind's callgrind with a fixed simulated
// cache, reads the totals of the callgrind files that process writes, names what a count depends
// on (Identity), and issues callgrind's client requests from Go (ToggleCollect, ZeroStats,
// DumpStats; amd64 only, in assembly, without cgo) for a process that counts its own iterations.
//
// The subjects use it: a command runs whole under callgrind, one count per iteration; a Go
// function runs in a copy of the binary under callgrind that brackets each iteration with client
// requests; the Python worker runs under callgrind and brackets each call the same way.
//
// What is counted is the instructions the guest executes in user space (Ir), and an estimate of
// its cycles from callgrind's cache simulation (EstCycles). Not counted: the kernel's work on
// system calls, time asleep or waiting for I/O, GPU kernels; threads are run one at a time.
package callgrind
