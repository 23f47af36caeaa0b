#include "textflag.h"

// func clientRequest(args *[6]uintptr) uintptr
//
// valgrind.h's VALGRIND_DO_CLIENT_REQUEST_EXPR for amd64: the four rotations of %rdi (128 bits
// in all: %rdi is unchanged) are the preamble valgrind recognises, xchgq %rbx,%rbx asks for the
// request whose arguments %rax points to, and %rdx holds the answer (the default, 0, when the
// process is not running under valgrind: then the sequence does nothing).
TEXT ·clientRequest(SB), NOSPLIT, $0-16
	MOVQ args+0(FP), AX
	MOVQ $0, DX
	ROLQ $3, DI
	ROLQ $13, DI
	ROLQ $61, DI
	ROLQ $51, DI
	XCHGQ BX, BX
	MOVQ DX, ret+8(FP)
	RET
