# inferbench: `make demo` runs the bundled example suite on this machine; `make test` runs the tests.
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
# What the Go tests see: the venv as the active environment (pyenv.Find picks its interpreter)
# and the llama.cpp server, each only when present.
TEST_ENV = $(if $(wildcard $(VENV_PY)),VIRTUAL_ENV=$(abspath $(VENV)) PATH="$(abspath $(VENV))/bin:$$PATH") \
	$(if $(wildcard $(LLAMA_SERVER)),INFERBENCH_LLAMA_SERVER=$(LLAMA_SERVER))

.PHONY: build demo test test-go test-python test-python-debian bench vet clean assets web-deps report-bench bench-serving venv llama-server agreement

build:
	$(GO) build -o $(BIN) ./cmd/inferbench

# The example suite in benches/: mock models, commands, Go functions, and whatever else this
# machine can run (definitions whose requirements are missing are skipped with the reason).
demo: build
	./$(BIN) run --enable-mock

test: test-go test-python test-python-debian

test-go: web-deps
	$(GO) vet ./...
	$(TEST_ENV) $(GO) test $(GOFLAGS_T) ./...

test-python:
	cd workers/python && $(abspath $(PYTHON)) -m unittest discover -v -s tests

# The worker protocol under Debian's python3 (python3-torch 1.13), when it is installed.
test-python-debian:
	@if [ -x $(DEBIAN_PY) ] && [ "$(abspath $(PYTHON))" != "$(DEBIAN_PY)" ]; then \
		cd workers/python && $(DEBIAN_PY) -m unittest discover -s tests -p 'test_worker.py'; \
	else echo "test-python-debian: $(DEBIAN_PY) absent or already tested"; fi

# The project's virtual environment: the pinned framework wheels of requirements.txt. Reinstalled
# when requirements.txt changes; pip's cache (~/.cache/pip) makes a re-run fast.
venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	$(PYTHON_BASE) -m venv $(VENV)
	$(VENV_PY) -m pip install --quiet --disable-pip-version-check pip==25.3
	$(VENV_PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

# llama.cpp's own OpenAI-compatible server, built once per version (see scripts/build-llama-server).
llama-server:
	PYTHON=$(PYTHON_BASE) scripts/build-llama-server

# Each adapter's p50 against a plain loop in the same framework, interleaved (docs/performance.md).
agreement:
	$(PYTHON) scripts/agreement.py

# Benchmarks of inferbench itself; figures go to docs/performance.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./engine ./stats

# The serving bars (docs/performance.md, "Serving"): throughput, accuracy, open loop, memory.
bench-serving:
	$(GO) test -run '^$$' -bench Serving -benchtime 1x -timeout 30m ./mockserver

# Front-end dependencies pinned by web/package-lock.json (ECharts for the HTML reports,
# playwright-core for the browser tests). `assets` refreshes report/assets/echarts.min.js from
# them (docs/reports.md says why that copy is committed); web-deps installs them when missing so
# the browser tests run (they skip with the reason without node_modules or chromium).
assets:
	cd web && npm ci --no-audit --no-fund
	cp web/node_modules/echarts/dist/echarts.min.js report/assets/echarts.min.js

web-deps:
	@if [ ! -d web/node_modules ]; then \
		if command -v npm >/dev/null 2>&1; then cd web && npm ci --no-audit --no-fund; \
		else echo "npm not found: browser tests will skip"; fi; \
	fi

# The report bars (docs/performance.md, "Reports"): size of a 200-scenario report, and the time
# headless Chromium takes to open it (load event and the charts in view drawn), 5 times.
report-bench: web-deps
	$(GO) test ./report -run TestLargeReportSize -count=1 -v -large-report /tmp/inferbench-large-report.html | grep -E 'bytes|ok|FAIL'
	cd web && node browser/check.mjs time /tmp/inferbench-large-report.html 5

vet:
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) build ./...

clean:
	rm -rf bin benchmark_results
