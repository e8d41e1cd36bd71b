# Synapse: `make up` runs the embedded stack, `make test` runs every check.
# Needs only python3 (3.11+), pip and GNU make: the venv is built from uv.lock on first use.

PYTHON ?= python3
UV_VERSION := 0.13.9
VENV := .venv
BIN := $(VENV)/bin
# The project's tools (temporal, temporal-test-server, pytest, ...) come first on PATH.
export PATH := $(CURDIR)/$(BIN):$(PATH)

# mypy checks whichever of these exist (parts of the tree are added over time).
TYPED := $(wildcard contracts core workflows activities api cli worker.py tests bench examples)
SCHEMA_DIR := schemas
# Tests run in parallel, one Temporal dev server per worker; most of their time is spent waiting,
# so more workers than cores keep both cores busy (6 on the 2-core CI machine, where a fresh
# clone's .ci/run took 4 min 36 s).
# The 15 slowest are listed at the end, so a slow CI run says which tests took its time.
PYTEST_WORKERS ?= 6
# A stage's recipe starts with $(TIMED): its commands are shown as they run (`+ ...`), and at its end,
# passed or failed, it says how long it took (`time: pytest took 250 s`), so a slow CI run says
# where its time went.
TIMED = start=$$(date +%s); trap '{ set +x; } 2>/dev/null; echo "time: $@ took $$(( $$(date +%s) - start )) s"' EXIT; set -x;

.DEFAULT_GOAL := help
.PHONY: help venv up test lint typecheck pytest fuzz schema bench bench-quick bench-scale bench-profile clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/'

# The first run installs uv, then the locked packages: both need the package index (pip's and
# uv's usual one, or PIP_INDEX_URL / UV_INDEX_URL), and say so when it cannot be reached instead
# of ending on pip's retries.
NEEDS_INDEX = needs the package index (PIP_INDEX_URL / UV_INDEX_URL name a mirror); connect, or point them at one, then run make again

$(BIN)/uv:
	@echo "first run: installing uv $(UV_VERSION) and the packages of uv.lock into $(VENV) (this needs the package index)"
	$(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install --quiet --disable-pip-version-check --retries 2 uv==$(UV_VERSION) \
		|| { echo "error: installing uv $(UV_VERSION) into $(VENV) failed: the first run $(NEEDS_INDEX)" >&2; exit 1; }

# Bytecode is compiled once here: with PYTHONDONTWRITEBYTECODE set (as on CI machines) every process
# would otherwise compile what it imports from source (`import worker`: 6 s instead of 2 s).
$(VENV)/.synced: uv.lock pyproject.toml | $(BIN)/uv
	@echo "$(BIN)/uv sync --frozen --compile-bytecode --python $(BIN)/python"
	@UV_PYTHON_DOWNLOADS=never $(BIN)/uv sync --frozen --compile-bytecode --python $(BIN)/python \
		|| { echo "error: installing the packages of uv.lock into $(VENV) failed: a package missing from uv's cache $(NEEDS_INDEX)" >&2; exit 1; }
	@touch $@

venv: $(VENV)/.synced ## create or update .venv from uv.lock

up: venv ## run Temporal dev server + worker + API (Ctrl-C stops all)
	$(BIN)/synapse up

lint: venv ## ruff lint and format check
	@$(TIMED) $(BIN)/ruff check . && $(BIN)/ruff format --check .

typecheck: venv ## mypy
	@$(TIMED) $(BIN)/mypy $(TYPED)

# The tests start about a hundred Python processes (xdist workers, `synapse up`, workers, fault
# tests' processes). With PYTHONDONTWRITEBYTECODE set, each would compile Synapse's own modules
# and pytest would rewrite every test module again: the first process writes the caches instead.
pytest: venv ## only the tests, in PYTEST_WORKERS parallel workers (0: one after another)
	@$(TIMED) env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -n $(PYTEST_WORKERS) --dist worksteal --durations=15 $(PYTEST_ARGS)

# mypy takes one core for about a minute: it runs beside the tests instead of before them, where
# the 2-core CI machine's other core would idle. Its report follows the tests' (which show their
# progress as they run); the target fails if either failed.
test: lint ## everything CI runs: lint, then types and tests side by side (each says how long it took)
	@types=$$(mktemp); \
	$(MAKE) --no-print-directory typecheck > $$types 2>&1 & checking=$$!; \
	$(MAKE) --no-print-directory pytest; tested=$$?; \
	wait $$checking; typed=$$?; cat $$types; rm -f $$types; \
	[ $$tested -eq 0 ] && [ $$typed -eq 0 ]

# Not part of `test`: minutes of schemathesis with random seeds, realistic ids, links followed, API
# keys off and on (tests/api/fuzz). FUZZ_ARGS="--cases 50000 --seed 7 --keep" and so on.
fuzz: venv ## schemathesis at length against the live app: 10,000 cases with keys off, 10,000 on
	$(BIN)/python -m tests.api.fuzz $(FUZZ_ARGS)

schema: venv ## write the JSON Schemas of the contracts to schemas/ (and the console's events.js)
	$(BIN)/synapse schema $(SCHEMA_DIR) --events-js api/console/static/js/events.js

bench: venv ## benchmarks vs bare Temporal, one table (a few minutes; BENCH_ARGS="--markdown FILE" ...)
	$(BIN)/python -m bench $(BENCH_ARGS)

bench-quick: venv ## the same, small (under a minute)
	$(BIN)/python -m bench --quick $(BENCH_ARGS)

bench-scale: venv ## 10,000 sessions waiting for approval (2-hour approval timeout): memory, start and approve-all rates (about 30 minutes: Synapse and two bare shapes; not in make test)
	SYNAPSE_APPROVAL_TIMEOUT_SECONDS=7200 $(BIN)/python -m bench --only many --sessions 10000 --concurrency 50 --warmup 20 --timeout 5400 $(BENCH_ARGS)

bench-profile: venv ## one turn's history event by event, and a session start's CPU profile
	$(BIN)/python -m bench.profile $(BENCH_ARGS)

clean: ## remove caches and generated schemas (keeps .venv and the .synapse state)
	rm -rf .mypy_cache .ruff_cache .pytest_cache $(SCHEMA_DIR)
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +
