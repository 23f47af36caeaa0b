#!/usr/bin/env bash
# The figures of docs/results-gpu.md, on a machine with an NVIDIA GPU: run from the repository root
# with bin/inferbench (cgo, so NVML is linked), bin/inferbench-nocgo (CGO_ENABLED=0: the nvidia-smi
# fallback) and bin/gpu.test (go test -c ./monitor/gpu) built beforehand, and python3 on PATH the
# interpreter that holds torch (and jax, flax for the JAX rows). Every stage has its own time limit,
# so a hang in one keeps the others' results; each stage's output is in DIR/<stage>.log and its runs
# under DIR/<stage>/.
#
#   scripts/gpu-results.sh DIR STAGE...     stages: env nvml eager compiled (compiled1-8 compiled32) llm
#                                           llm-compiled jax jax8 energy overhead
set -uo pipefail
dir="$1"
shift
mkdir -p "$dir"
ib="$PWD/bin/inferbench"
vision="benches/performance/vision.yaml"
r50e='vision/framework=pytorch/model=resnet50/batch_size=8/dtype=float32/variant=eager'

stage() {
	local name="$1" limit="$2" t0=$SECONDS
	shift 2
	echo "== $name (limit ${limit}s)"
	timeout -k 10 "$limit" "$@" >"$dir/$name.log" 2>&1
	local rc=$?
	echo "== $name rc=$rc $((SECONDS - t0)) s"
	tail -n 40 "$dir/$name.log"
}

env_info() {
	nvidia-smi -L
	nvidia-smi --query-gpu=index,name,memory.total,driver_version,power.limit,clocks.max.sm,mig.mode.current,ecc.mode.current --format=csv
	python3 -c 'import sys, torch; print(sys.executable, "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
	python3 -c 'import transformers; print("transformers", transformers.__version__)' || true
	python3 -c 'import jax, flax; print("jax", jax.__version__, "flax", flax.__version__, jax.devices())' || true
	python3 -c 'import onnxruntime; print("onnxruntime", onnxruntime.__version__, onnxruntime.get_available_providers())' || true
	"$ib" sysinfo --json >"$dir/sysinfo.json"
	"$ib" doctor
}

nvml() {
	bin/gpu.test -test.v -test.run TestNVMLReal
	bin/gpu.test -test.run '^$' -test.bench SampleNVMLReal -test.benchtime 2000x -test.count 3
}

# The runs of the stages, each into DIR/NAME with NAME's time limit.
# ResNet-50 and ViT-B/16 in torch, fp32 and bf16: torch_vision NAME LIMIT VARIANT BATCH...
torch_vision() {
	local name="$1" limit="$2" variant="$3"
	shift 3
	stage "$name" "$limit" "$ib" run --framework pytorch --model both --batch-sizes "$@" \
		--dtype float32 bfloat16 --variant "$variant" --device cuda --iterations 50 --warmup 10 \
		--output-dir "$dir/$name"
}

# A small LLM (tiny-llm of the vision definition, made larger): tiny_llm NAME LIMIT INCLUDE
tiny_llm() {
	stage "$1" "$2" "$ib" run "$vision" --include "$3" --set device=cuda \
		--set hidden_size=1024 --set num_layers=8 --set num_heads=16 --set max_new_tokens=128 \
		--iterations 20 --warmup 3 --output-dir "$dir/$1"
}

# The JAX half of the vision definition: jax_vision NAME LIMIT INCLUDE
jax_vision() {
	stage "$1" "$2" "$ib" run "$vision" --include "$3" --set device=cuda \
		--iterations 50 --warmup 10 --output-dir "$dir/$1"
}

# ResNet-50 fp32 eager under the monitors: resnet50 NAME LIMIT BINARY ARG...
resnet50() {
	local name="$1" limit="$2" bin="$3"
	shift 3
	stage "$name" "$limit" "$bin" run "$vision" --include "$r50e" --set device=cuda "$@" \
		--output-dir "$dir/$name"
}

# timeout runs programs, not shell functions: the stages that are functions run in a bash that has them.
export -f env_info nvml
export ib dir

for s in "$@"; do
	case "$s" in
	env) stage env 120 bash -c env_info ;;
	nvml) stage nvml 120 bash -c nvml ;;
	eager) torch_vision eager 300 eager 1 8 32 ;;
	compiled) torch_vision compiled 560 compiled 1 8 32 ;;
	compiled1-8) torch_vision compiled1-8 330 compiled 1 8 ;;
	compiled32) torch_vision compiled32 300 compiled 32 ;;
	# eager, compiled (static cache + torch.compile, the CUDAGraphs fix), kernelized
	llm) tiny_llm llm 400 'tiny-llm/*' ;;
	llm-compiled) tiny_llm llm-compiled 300 'tiny-llm/*/variant=compiled' ;;
	jax) jax_vision jax 400 'vision/framework=jax/*' ;;
	jax8) jax_vision jax8 300 'vision/framework=jax/*/batch_size=8/*' ;;
	# The energy counter against mean power x window, through NVML and through nvidia-smi.
	energy)
		resnet50 energy-nvml 120 "$ib" --set batch_size=32 --min-time 30s
		resnet50 energy-smi 120 bin/inferbench-nocgo --set batch_size=32 --min-time 30s
		;;
	overhead) resnet50 overhead 200 "$ib" --min-time 20s --monitor-overhead ;;
	*)
		echo "unknown stage $s (stages: env nvml eager compiled compiled1-8 compiled32 llm llm-compiled jax jax8 energy overhead)" >&2
		exit 2
		;;
	esac
done
