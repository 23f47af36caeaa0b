"""Instruction mode (``--measure instructions``): the worker runs under valgrind's callgrind and
brackets each measured call with callgrind's client requests, so that each call's costs are one
dump file the harness reads.

A client request is a magic instruction sequence that valgrind recognises when it translates the
code; outside valgrind it does nothing. Python cannot emit it, and the user's machine may have no
C compiler, so the few bytes of amd64 machine code (valgrind.h's VALGRIND_DO_CLIENT_REQUEST_EXPR)
are written into an executable anonymous page and called through ctypes: valgrind translates that
page like any other code (anonymous mappings are checked for new code by its default
--smc-check=all-non-file).

Note: driving callgrind_control from outside around each call also works (a torch MLP's 200
forward passes counted 28,790,607 twice), but it starts a Perl process twice per call and its
window is whatever the worker does between the two commands (the protocol's reading and writing
included); the requests made here bracket the call alone, cost no process, and need nothing but
the standard library.
"""

import ctypes
import gc
import mmap
import os
import platform
import sys

# ENV names the environment variable that turns instruction mode on (the harness sets it).
ENV = "INFERBENCH_WORKER_COUNT"

# OUT_ENV names callgrind's output file (its --callgrind-out-file; the harness sets it): the dump
# of the n-th request is OUT.n, which dump() reads back.
OUT_ENV = "INFERBENCH_WORKER_CALLGRIND_OUT"

# Request codes (valgrind.h, callgrind.h): VG_USERREQ_TOOL_BASE('C','T') + n.
_RUNNING_ON_VALGRIND = 0x1001
_DUMP_STATS = 0x43540000
_ZERO_STATS = 0x43540001
_START_INSTRUMENTATION = 0x43540004

# unsigned long request(unsigned long args[6]): args[0] is the request, args[1..5] its arguments.
_CODE = bytes([
    0x48, 0x89, 0xF8,        # mov  %rdi,%rax     (the args' address, where valgrind reads it)
    0x31, 0xD2,              # xor  %edx,%edx     (the answer outside valgrind: 0)
    0x48, 0xC1, 0xC7, 0x03,  # rol  $3,%rdi       the preamble: four rotations, 128 bits in all
    0x48, 0xC1, 0xC7, 0x0D,  # rol  $13,%rdi
    0x48, 0xC1, 0xC7, 0x3D,  # rol  $61,%rdi
    0x48, 0xC1, 0xC7, 0x33,  # rol  $51,%rdi
    0x48, 0x87, 0xDB,        # xchg %rbx,%rbx     the request: %rdx = request(%rax)
    0x48, 0x89, 0xD0,        # mov  %rdx,%rax
    0xC3,                    # ret
])

# Libraries whose version changes what a call executes, reported with the counts.
_LIBRARIES = ("torch", "numpy", "jax", "jaxlib", "onnxruntime", "tensorflow", "scipy")


class Unsupported(Exception):
    """Unsupported: this process cannot issue client requests."""


class Counter:
    """Counter brackets calls with callgrind's client requests."""

    def __init__(self):
        if platform.machine().lower() not in ("x86_64", "amd64"):
            raise Unsupported("instruction mode counts Python calls on x86-64 only (the client "
                              "requests are amd64 machine code); this is %s" % platform.machine())
        try:
            self._page = mmap.mmap(-1, mmap.PAGESIZE,
                                   prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        except (OSError, AttributeError) as e:
            raise Unsupported("instruction mode needs an executable page for callgrind's client "
                              "requests: %s" % e) from None
        self._page.write(_CODE)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(self._page))
        self._call = ctypes.CFUNCTYPE(ctypes.c_ulong, ctypes.c_void_p)(addr)
        self._args = (ctypes.c_ulong * 6)()
        self._ptr = ctypes.addressof(self._args)
        if not self._request(_RUNNING_ON_VALGRIND):
            raise Unsupported("%s=%s but the worker is not running under valgrind" % (ENV, "callgrind"))
        self._instrumented = False
        # dumps is how many dump files this process's requests have made: callgrind numbers them
        # 1, 2, ... in the order of the requests.
        self.dumps = 0
        self._out = os.environ.get(OUT_ENV, "")

    def _request(self, code):
        self._args[0] = code
        return self._call(self._ptr)

    @property
    def instrumented(self):
        """instrumented is whether instrument() has run."""
        return self._instrumented

    def instrument(self):
        """instrument turns callgrind's instrumentation on, once, before the first call the
        worker warms up or measures: the worker starts uninstrumented (--instr-atstart=no), so
        that the interpreter's start and the framework's import run some 6 times faster (torch's
        import: 120 s instead of 752 s). The warm-up calls then run instrumented, as measured
        calls do, and warm the simulated caches."""
        if not self._instrumented:
            self._request(_START_INSTRUMENTATION)
            self._instrumented = True

    def count(self, call):
        """count zeroes callgrind's counts, runs call() and dumps what every thread executed
        since into a file of its own. The garbage is collected first, outside the count: every
        call starts from the same collector state.

        Collection stays on (the worker runs with --collect-atstart=yes): it is a thread's own
        in callgrind, and a framework's threads (torch's intra-op pool) run the call's work
        beside the calling one. Zeroing and dumping cover every thread; the worker starts no
        thread of its own in this mode (no parent watcher), so nothing else runs meanwhile."""
        self.instrument()
        gc.collect()
        self._request(_ZERO_STATS)
        try:
            call()
        finally:
            self._request(_DUMP_STATS)
            self.dumps += 1

    def zero(self):
        """zero zeroes callgrind's counts (every thread's): the start of a window dump() ends."""
        self._request(_ZERO_STATS)

    def dump(self):
        """dump ends the window zero() started: callgrind writes its counts into the next dump
        file at the request, before the request returns; the window's instructions are read from
        it and the file is removed, so that none accumulates (a model's pass makes one an
        operator call)."""
        self._request(_DUMP_STATS)
        self.dumps += 1
        if not self._out:
            raise Unsupported("%s is not set: the worker cannot read its own dump files" % OUT_ENV)
        path = "%s.%d" % (self._out, self.dumps)
        try:
            return read_ir(path)
        finally:
            try:
                os.remove(path)
            except OSError:
                pass


def read_ir(path):
    """read_ir returns the instructions (Ir) of a callgrind dump file: its "summary:" line (what
    was counted since the last zero), else its "totals:" line, by the "events:" line's names. The
    file is searched as a whole, not line by line: this runs under valgrind once an operator."""
    with open(path, "rb") as f:
        data = b"\n" + f.read()

    def line(name):
        i = data.find(b"\n" + name)
        if i < 0:
            return None
        end = data.find(b"\n", i + 1)
        return data[i + 1 + len(name):end if end >= 0 else len(data)].split()

    events = line(b"events:")
    vals = line(b"summary:")
    if vals is None:
        vals = line(b"totals:")
    if not events or vals is None or b"Ir" not in events:
        raise ValueError("%s: not a callgrind file with Ir (no events and summary lines)" % path)
    i = events.index(b"Ir")
    return int(vals[i]) if i < len(vals) else 0


def identity():
    """identity is what the counts depend on besides the code: the interpreter and the versions
    of the numeric libraries loaded."""
    out = {"python": "%s %s" % (platform.python_implementation(), platform.python_version())}
    for name in _LIBRARIES:
        mod = sys.modules.get(name)
        v = getattr(mod, "__version__", None) if mod is not None else None
        if v:
            out[name] = str(v)
    return out
