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

# timeout runs programs, not shell functions: the stages that are functions run in a bash that has them.
export -f env_info nvml
export ib dir

for s in "$@"; do
	case "$s" in
	env) stage env 120 bash -c env_info ;;
	nvml) stage nvml 120 bash -c nvml ;;
	# ResNet-50 and ViT-B/16, batch 1, 8, 32, fp32 and bf16, eager.
	eager) stage eager 300 "$ib" run --framework pytorch --model both --batch-sizes 1 8 32 \
		--dtype float32 bfloat16 --variant eager --device cuda --iterations 50 --warmup 10 \
		--output-dir "$dir/eager" ;;
	compiled) stage compiled 560 "$ib" run --framework pytorch --model both --batch-sizes 1 8 32 \
		--dtype float32 bfloat16 --variant compiled --device cuda --iterations 50 --warmup 10 \
		--output-dir "$dir/compiled" ;;
	compiled1-8) stage compiled1-8 330 "$ib" run --framework pytorch --model both --batch-sizes 1 8 \
		--dtype float32 bfloat16 --variant compiled --device cuda --iterations 50 --warmup 10 \
		--output-dir "$dir/compiled1-8" ;;
	compiled32) stage compiled32 300 "$ib" run --framework pytorch --model both --batch-sizes 32 \
		--dtype float32 bfloat16 --variant compiled --device cuda --iterations 50 --warmup 10 \
		--output-dir "$dir/compiled32" ;;
	# A small LLM: eager, compiled (static cache + torch.compile, the CUDAGraphs fix), kernelized.
	llm) stage llm 400 "$ib" run "$vision" --include 'tiny-llm/*' --set device=cuda \
		--set hidden_size=1024 --set num_layers=8 --set num_heads=16 --set max_new_tokens=128 \
		--iterations 20 --warmup 3 --output-dir "$dir/llm" ;;
	llm-compiled) stage llm-compiled 300 "$ib" run "$vision" --include 'tiny-llm/*/variant=compiled' \
		--set device=cuda --set hidden_size=1024 --set num_layers=8 --set num_heads=16 \
		--set max_new_tokens=128 --iterations 20 --warmup 3 --output-dir "$dir/llm-compiled" ;;
	jax8) stage jax8 300 "$ib" run "$vision" --include 'vision/framework=jax/*/batch_size=8/*' --set device=cuda \
		--iterations 50 --warmup 10 --output-dir "$dir/jax8" ;;
	jax) stage jax 400 "$ib" run "$vision" --include 'vision/framework=jax/*' --set device=cuda \
		--iterations 50 --warmup 10 --output-dir "$dir/jax" ;;
	# The energy counter against mean power x window, through NVML and through nvidia-smi.
	energy)
		stage energy-nvml 120 "$ib" run "$vision" --include "$r50e" --set device=cuda \
			--set batch_size=32 --min-time 30s --output-dir "$dir/energy-nvml"
		stage energy-smi 120 bin/inferbench-nocgo run "$vision" --include "$r50e" --set device=cuda \
			--set batch_size=32 --min-time 30s --output-dir "$dir/energy-smi"
		;;
	overhead) stage overhead 200 "$ib" run "$vision" --include "$r50e" --set device=cuda \
		--min-time 20s --monitor-overhead --output-dir "$dir/overhead" ;;
	*) echo "unknown stage $s" >&2 ;;
	esac
done
