#!/bin/bash
# Makes the environment of `make peers` (never a CI dependency): a virtual environment at $1
# (default .peers-venv) holding guidellm and AIPerf from PyPI (the versions docs/peers.md used;
# guidellm brings torch, several GB), aiohttp for vLLM's request function,
# and that function itself, extracted from vLLM's wheel into $1/vllm-lib (importing vllm's package
# would need torch and CUDA; the request function needs aiohttp, regex and tqdm only).
set -euo pipefail
env=${1:-.peers-venv}
VLLM=${VLLM_VERSION:-0.33.0}
[ -x "$env/bin/python" ] || python3 -m venv "$env"
"$env/bin/pip" install --quiet "guidellm==${GUIDELLM_VERSION:-0.8.1}" "aiperf==${AIPERF_VERSION:-0.13.0}" aiohttp regex tqdm
if [ ! -f "$env/vllm-lib/vllm/benchmarks/lib/endpoint_request_func.py" ]; then
	tmp=$(mktemp -d)
	"$env/bin/pip" download --quiet --no-deps --only-binary :all: -d "$tmp" "vllm==$VLLM"
	mkdir -p "$env/vllm-lib"
	(cd "$env/vllm-lib" && unzip -q -o "$tmp"/vllm-*.whl 'vllm/benchmarks/lib/*')
	touch "$env/vllm-lib/vllm/__init__.py" "$env/vllm-lib/vllm/benchmarks/__init__.py"
	rm -rf "$tmp"
fi
