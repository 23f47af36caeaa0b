# inferbench: `make demo` runs the bundled example suite on this machine; `make test` runs the tests;
# `make install` puts the binary in $(go env GOPATH)/bin (or $GOBIN); `make release` builds archives.
GO        ?= go
BIN       := bin/inferbench
GOFLAGS_T ?= -race -count=1 -timeout 30m
# The project's virtual environment (make venv: requirements.txt) and the interpreter it is made
# from. The Python tests and the Go tests that start workers use the venv's interpreter when it
# exists (docs/frameworks.md); test-python-debian runs the worker tests under Debian's python3 too.
VENV        ?= .venv
PYTHON_BASE ?= python3
VENV_PY     := $(VENV)/bin/python
PYTHON      ?= $(if $(wildcard $(VENV_PY)),$(VENV_PY),/usr/bin/python3)
DEBIAN_PY   ?= /usr/bin/python3
# llama.cpp's server, built by `make llama-server` (scripts/build-llama-server) into this cache.
LLAMA_VERSION := $(shell sed -n 's/^llama-cpp-python==\([0-9.]*\).*/\1/p' requirements-server.txt)
LLAMA_SERVER  ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/inferbench/llama-server-$(LLAMA_VERSION)/bin/llama-server
# What the tests must find (docs/frameworks.md, "Skips that fail"): the frameworks and the
# trackers (requirements-trackers.txt: mlflow, wandb) when the venv exists, llama.cpp's server
# when it is built. A test that needs one of them fails instead of skipping.
# `make test INFERBENCH_REQUIRE=` turns it off; .ci/run requires them all whatever exists.
comma := ,
INFERBENCH_REQUIRE ?= $(subst $() ,$(comma),$(strip $(if $(wildcard $(VENV_PY)),frameworks trackers) \
	$(if $(wildcard $(LLAMA_SERVER)),llama-server) $(if $(shell command -v valgrind),valgrind)))
# Debian's python3 (torch 1.13) is required only where asked (.ci/run installs python3-torch).
DEBIAN_REQUIRE ?=
# What the Go tests see: the venv as the active environment (pyenv.Find picks its interpreter)
# and the llama.cpp server, each only when present, and what they must find.
TEST_ENV = $(if $(wildcard $(VENV_PY)),VIRTUAL_ENV=$(abspath $(VENV)) PATH="$(abspath $(VENV))/bin:$$PATH") \
	$(if $(wildcard $(LLAMA_SERVER)),INFERBENCH_LLAMA_SERVER=$(LLAMA_SERVER)) \
	INFERBENCH_REQUIRE=$(INFERBENCH_REQUIRE)
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/inferbench/inferbench/internal/cli.Version=$(VERSION)
# Every platform the binary is built for. Cross builds are pure Go (CGO_ENABLED=0): the GPU
# monitor then reads nvidia-smi instead of NVML, and monitors without a source on a platform
# (procfs, RAPL) report "not available" in the result.
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
DIST      := dist

# go-nvml's cgo preamble includes NVML headers that declare deprecated functions; the C compiler
# prints ~150 lines of -Wdeprecated-declarations about them on the first build, which read as
# errors. They are harmless: silence that one warning, keep the rest (and keep NVML).
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: gate-instructions calibrate-gate calibrate-ref explain-calibrate capacity-coverage build install cross release wheels test-wheel demo test test-go test-python test-python-debian bench vet clean assets web-deps report-bench bench-serving peers import-fixtures fuzz-short fuzz-long venv llama-server agreement

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/inferbench

install:
	$(GO) install -ldflags '$(LDFLAGS)' ./cmd/inferbench
	@bin=$$($(GO) env GOBIN); [ -n "$$bin" ] || bin=$$($(GO) env GOPATH)/bin; echo "installed $$bin/inferbench"

# cross builds every package for every platform, and vets (test files included) for one platform
# of each family that has files of its own (darwin: unix without /proc; windows: not unix), as CI does.
cross:
	@set -e; for p in $(PLATFORMS); do \
		echo "cross build $$p"; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build ./...; \
	done; \
	for p in darwin/arm64 windows/amd64; do \
		echo "cross vet $$p"; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet ./...; \
	done

# release: one archive per platform (tar.gz; zip for Windows) with the binary, README and LICENSE
# when present, and SHA256SUMS over the archives. Check a download with `sha256sum -c SHA256SUMS`.
release:
	@set -e; rm -rf $(DIST); mkdir -p $(DIST); \
	for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; name=inferbench_$(VERSION)_$${os}_$${arch}; ext=; \
		[ $$os = windows ] && ext=.exe; \
		mkdir -p $(DIST)/$$name; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(DIST)/$$name/inferbench$$ext ./cmd/inferbench; \
		cp README.md $(DIST)/$$name/; [ ! -f LICENSE ] || cp LICENSE $(DIST)/$$name/; \
		if [ $$os = windows ]; then (cd $(DIST) && zip -qr $$name.zip $$name); \
		else tar -C $(DIST) -czf $(DIST)/$$name.tar.gz $$name; fi; \
		rm -rf $(DIST)/$$name; echo "$(DIST)/$$name"; \
	done; \
	cd $(DIST) && sha256sum inferbench_* > SHA256SUMS && cat SHA256SUMS

# Python wheels (docs/python.md): for each of PLATFORMS a wheel carrying the binary (built as
# release builds it), and the pure-Python one, in dist/wheels. python/build-wheels says how.
wheels:
	GO=$(GO) LDFLAGS='$(LDFLAGS)' VERSION=$(VERSION) PLATFORMS='$(PLATFORMS)' PYTHON_BASE=$(PYTHON_BASE) python/build-wheels $(DIST)/wheels

# This platform's wheel in a fresh virtual environment: the Python API and the pytest plugin's
# tests against the wheel's binary (python/test-wheel).
test-wheel:
	GO=$(GO) LDFLAGS='$(LDFLAGS)' VERSION=$(VERSION) PYTHON_BASE=$(PYTHON_BASE) python/test-wheel

# The example suite in benches/: mock models, commands, Go functions, and whatever else this
# machine can run (definitions whose requirements are missing are skipped with the reason).
# Only benches/: examples/gofunc/benches holds definitions of functions that only the example's own
# binary registers (go run ./examples/gofunc run examples/gofunc).
# The demo says what it does, on one line while it builds (the first build compiles every
# dependency, for minutes: a dot every 10 s), then what it runs.
demo:
	@printf 'demo: building %s (the first build compiles every dependency: a few minutes) ' '$(BIN)'; \
		( while sleep 10; do printf .; done ) & ticker=$$!; \
		$(MAKE) -s --no-print-directory build; rc=$$?; kill $$ticker 2>/dev/null; echo; exit $$rc
	@echo "demo: ./$(BIN) run --enable-mock benches (simulated models; frameworks not installed here are skipped)"
	@./$(BIN) run --enable-mock benches

test: test-go test-python test-python-debian fuzz-short

test-go: web-deps cross
	$(GO) vet ./...
	$(TEST_ENV) $(GO) test $(GOFLAGS_T) ./...

test-python:
	cd internal/workers/python && INFERBENCH_REQUIRE=$(INFERBENCH_REQUIRE) $(abspath $(PYTHON)) -m unittest discover -v -s tests

# The worker protocol under Debian's python3 (python3-torch 1.13), when it is installed.
test-python-debian:
	@if [ -x $(DEBIAN_PY) ] && [ "$(abspath $(PYTHON))" != "$(DEBIAN_PY)" ]; then \
		cd internal/workers/python && INFERBENCH_REQUIRE=$(DEBIAN_REQUIRE) $(DEBIAN_PY) -m unittest discover -s tests -p 'test_worker.py'; \
	else echo "test-python-debian: $(DEBIAN_PY) absent or already tested"; fi

# The project's virtual environment: the pinned framework wheels of requirements.txt and the
# trackers of requirements-trackers.txt. Reinstalled when either changes; pip's cache
# (~/.cache/pip) makes a re-run fast.
venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements-trackers.txt
	$(PYTHON_BASE) -m venv $(VENV)
	$(VENV_PY) -m pip install --quiet --disable-pip-version-check pip==25.3
	$(VENV_PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(VENV_PY) -m pip install --quiet --disable-pip-version-check -r requirements-trackers.txt
	touch $@

# llama.cpp's own OpenAI-compatible server, built once per version (see scripts/build-llama-server).
llama-server:
	PYTHON=$(PYTHON_BASE) scripts/build-llama-server

# Each adapter's p50 against a plain loop in the same framework, interleaved (docs/performance.md).
agreement:
	$(PYTHON) scripts/agreement.py

# Fuzz targets of every parser of outside input (docs/reliability.md, "Bounded inputs"), as
# package:Target. fuzz-short runs each for FUZZTIME from the seed corpora committed under
# testdata/fuzz (CI: a count, a few seconds each, about a minute in all); fuzz-long for minutes.
# Note: a count, not a duration: with a duration go1.26's fuzz coordinator can fail a target with
# "context deadline exceeded" when the time runs out on a loaded machine (golang/go#75804).
FUZZ_TARGETS := suite:FuzzParse suite:FuzzExpandEnv internal/kind/openai:FuzzScanner \
	result:FuzzReadGoBench result:FuzzReadPytestBenchmark result:FuzzReadHyperfine result:FuzzDecode result:FuzzWriteJSON result:FuzzDecodeRun \
	alert:FuzzParse internal/workload:FuzzParseDist internal/kind/worker:FuzzReply internal/redact:FuzzCandidates \
	result:FuzzJournal internal/workload:FuzzReadPrompts compare:FuzzParseBudgetFile internal/kind/exec:FuzzLastLineJSON \
	result:FuzzDecodeStream compare:FuzzParseThresholdsFile internal/base/inert:FuzzText \
	internal/base/callgrind:FuzzReadFile internal/explain:FuzzCallgrind internal/explain:FuzzChunkJSON \
	internal/explain:FuzzChunksJSON internal/explain:FuzzPprof
FUZZTIME ?= 5000x

fuzz-short:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		out=$$($(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -parallel 2 ./$$pkg 2>&1); st=$$?; \
		echo "$$pkg $$fn: $$(echo "$$out" | grep 'execs:' | tail -1)"; \
		if [ $$st -ne 0 ]; then echo "$$out"; exit 1; fi; \
	done

fuzz-long:
	$(MAKE) fuzz-short FUZZTIME=$${FUZZTIME_LONG:-1000000x}

# Benchmarks of inferbench itself; figures go to docs/performance.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/engine ./stats

# The project's own benchmarks gated in instruction mode (benchmarks/performance/instructions.yaml,
# docs/verdicts.md "Instruction mode"): counted twice, and the second run compared with the first;
# exit 3 when a count moved beyond its threshold. Needs valgrind. The binary keeps its symbols
# (no -s): the callgrind files in the run folders name the functions.
GATE_DIR ?= $(or $(TMPDIR),/tmp)/inferbench-gate-instructions
gate-instructions:
	$(GO) build -o bin/inferbench-symbols ./cmd/inferbench
	rm -rf $(GATE_DIR) && mkdir -p $(GATE_DIR)
	for i in 1 2; do \
		bin/inferbench-symbols run benchmarks/performance/instructions.yaml --output-dir $(GATE_DIR) --no-store --format none --no-monitor || exit 1; \
		cp -P $(GATE_DIR)/latest $(GATE_DIR)/run$$i; \
	done
	bin/inferbench-symbols compare $(GATE_DIR)/run1 $(GATE_DIR)/run2

# The gate's error rates on this machine (docs/measurements/verdicts.md): per subject kind, N A/A comparisons
# (false failures) and N with the primary metric slowed by 10% (detections). Not part of make test:
# 7 kinds, each quiet and loaded (LOAD=both): about 1.5 hours on the 2-core development machine at
# N=100. The tables go between their markers in docs/measurements/verdicts.md.
N ?= 100
# explain's calibration table (docs/measurements/explain.md): N trials per source; paste the table it prints.
# MEASURE=instructions calibrates instruction mode's exact counts (Go and Python functions, and a
# Go program run as a command).
MEASURE ?= time
EXPLAIN_SOURCES = $(if $(filter instructions,$(MEASURE)),go$(comma)python$(comma)command$(comma)torch,go$(comma)python$(comma)torch)
comma := ,
explain-calibrate:
	$(GO) run ./cmd/calibrate-explain -n $(N) -measure $(MEASURE) -sources $(EXPLAIN_SOURCES) -python $(PYTHON)

# LOAD: off (as the machine is), on (a busy loop on another core) or both.
LOAD ?= both
calibrate-gate:
	$(GO) build -o bin/calibrate-gate ./cmd/calibrate-gate
	bin/calibrate-gate -n $(N) -load $(LOAD) -python $(PYTHON) -write docs/measurements/verdicts.md

# The paired path (run --baseline-ref) at its defaults: N rounds per kind of an unchanged, a 5% and
# a 10% heavier commit against a base (cmd/calibrate-gate -path ref); LOAD as for calibrate-gate.
# MEASURE=instructions: the counted kinds, of 0.5% and 1% more work (counts need no quiet machine:
# LOAD=off). KINDS: a comma-separated subset of the kinds (default all).
calibrate-ref:
	$(GO) build -o bin/calibrate-gate ./cmd/calibrate-gate
	bin/calibrate-gate -path ref -measure $(MEASURE) -n $(N) -load $(LOAD) $(if $(KINDS),-kinds $(KINDS)) -python $(PYTHON) -write docs/measurements/verdicts.md

# The capacity search against the mockserver model's known capacity (docs/serving.md, "Capacity"):
# N searches of each of three models, on the simulated model; LIVE=1 runs them against a live
# mockserver over HTTP, PARALLEL at once (SCALE: the time scale of model and SLOs; default each
# configuration's own live, 1 simulated).
capacity-coverage:
	nice $(GO) run ./cmd/capacity-coverage -n $(N) $(if $(LIVE),--live --parallel $(or $(PARALLEL),1)) $(if $(SCALE),--scale $(SCALE))

# The serving bars (docs/performance.md, "Serving"): throughput, accuracy, open loop, memory.
bench-serving:
	$(GO) test -run '^$$' -bench Serving -benchtime 1x -timeout 30m ./internal/mockserver

# The serving clients side by side (docs/peers.md): inferbench, vLLM's request function, guidellm
# and AIPerf against the same mockserver, the server on core 0 and the client on core 1. Their
# environment (.peers-venv, from PyPI) is made on first use and is never a CI dependency.
PEERS_VENV ?= .peers-venv
peers: build
	scripts/peers-env.sh $(PEERS_VENV)
	$(PEERS_VENV)/bin/python scripts/peers.py --bin $(BIN) --python $(PEERS_VENV)/bin/python \
		--vllm-lib $(PEERS_VENV)/vllm-lib --out docs/peers.md $(PEERS_ARGS)

# The fixtures of `inferbench import` (internal/serveimport/testdata, docs/import.md): each serving
# tool's own files, written by vLLM's bench serve code, AIPerf and guidellm against the mockserver,
# and llm-d-benchmark's converter (LLMD_SRC, a checkout of github.com/llm-d/llm-d-benchmark) run on
# them. In the peers' environment; never a CI dependency.
LLMD_SRC ?= ../llm-d-benchmark
import-fixtures: build
	scripts/peers-env.sh $(PEERS_VENV)
	$(PEERS_VENV)/bin/python scripts/import-fixtures.py --bin $(BIN) --python $(PEERS_VENV)/bin/python \
		--vllm-deps $(PEERS_VENV)/vllm-bench --llmd-src $(LLMD_SRC)

# Front-end dependencies pinned by internal/cli/web/package-lock.json (ECharts for the HTML reports,
# playwright-core for the browser tests). `assets` refreshes internal/page/assets/echarts.min.js from
# them (docs/reports.md says why that copy is committed); web-deps installs them when missing so
# the browser tests run (they skip with the reason without node_modules or chromium).
assets:
	cd internal/cli/web && npm ci --no-audit --no-fund
	cp internal/cli/web/node_modules/echarts/dist/echarts.min.js internal/page/assets/echarts.min.js

web-deps:
	@if [ ! -d internal/cli/web/node_modules ]; then \
		if command -v npm >/dev/null 2>&1; then cd internal/cli/web && npm ci --no-audit --no-fund; \
		else echo "npm not found: browser tests will skip"; fi; \
	fi

# The report bars (docs/performance.md, "Reports"): size of a 200-scenario report, and the time
# headless Chromium takes to open it (load event and the charts in view drawn), 5 times.
report-bench: web-deps
	$(GO) test ./report -run TestLargeReportSize -count=1 -v -large-report /tmp/inferbench-large-report.html | grep -E 'bytes|ok|FAIL'
	cd internal/cli/web && node browser/check.mjs time /tmp/inferbench-large-report.html 5

vet:
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) build ./...

clean:
	rm -rf bin $(DIST) benchmark_results
