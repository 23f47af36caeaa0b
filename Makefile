# inferbench: `make demo` runs the bundled example suite on this machine; `make test` runs the tests.
GO        ?= go
BIN       := bin/inferbench
PYTHON    ?= /usr/bin/python3
GOFLAGS_T ?= -race -count=1

.PHONY: build demo test test-go test-python bench vet clean

build:
	$(GO) build -o $(BIN) ./cmd/inferbench

# The example suite in benches/: mock models, commands, Go functions, and whatever else this
# machine can run (definitions whose requirements are missing are skipped with the reason).
demo: build
	./$(BIN) run --enable-mock

test: test-go test-python

test-go:
	$(GO) vet ./...
	$(GO) test $(GOFLAGS_T) ./...

test-python:
	@if [ -d workers/python/tests ]; then \
		cd workers/python && $(PYTHON) -m unittest discover -s tests; \
	fi

# Benchmarks of inferbench itself; figures go to docs/performance.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./engine ./stats

vet:
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) build ./...

clean:
	rm -rf bin benchmark_results
