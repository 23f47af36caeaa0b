"""inferbench_worker: the Python side of inferbench's worker protocol.

The Go harness starts ``python -m inferbench_worker`` once per scenario and talks to it with
newline-delimited JSON on stdin/stdout (see docs/worker-protocol.md). An adapter (noop,
torch_vision, torch_llm, jax_vision, onnxruntime, pyfunc) builds the model and times each
iteration inside this process, so the protocol's round trip stays out of the numbers.

Only the standard library is imported here; each adapter imports its framework when it is chosen.
"""

PROTOCOL = 1
__version__ = "0.1.0"
