# searchgen-nb: `make release` builds the demo's book and data, `make test` runs every test.
# Needs git and Python 3.11 (`python3`; on Debian with python3-venv). Everything runs from the
# project's environment, .venv, made by uv from requirements.txt (every package pinned, with
# its hashes). uv is used from PATH, or installed from PyPI into build/uv when missing.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV_VERSION ?= 0.13.9
UV ?= $(or $(shell command -v uv 2>/dev/null),build/uv/bin/uv)
# Reproducible builds: timestamps come from the last commit (override by exporting it).
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
export SOURCE_DATE_EPOCH

.PHONY: setup lock release demo lint test test-fast bench bench-1m browser clean

# The environment: exactly requirements.txt, plus the project itself (editable, no deps),
# byte-compiled once (every notebook kernel and test process then starts seconds faster, even
# with PYTHONDONTWRITEBYTECODE set). Without uv, the same with pip:
#   python3 -m venv .venv && .venv/bin/pip install --require-hashes -r requirements.txt
#   .venv/bin/pip install --no-deps -e .
setup: $(VENV)/.installed

$(VENV)/.installed: requirements.txt pyproject.toml | $(UV)
	rm -rf $(VENV)
	$(UV) venv --quiet --seed --python $(PYTHON) $(VENV)
	$(UV) pip sync --quiet --compile-bytecode --python $(BIN)/python --require-hashes requirements.txt
	$(UV) pip install --quiet --python $(BIN)/python --no-deps -e .
	$(UV) pip check --quiet --python $(BIN)/python
	touch $@

build/uv/bin/uv:
	$(PYTHON) -m venv build/uv
	build/uv/bin/pip install --quiet "uv==$(UV_VERSION)"

# After a change to the dependencies in pyproject.toml: rewrites requirements.txt, keeping
# the locked versions that still fit (`make lock LOCK_ARGS=--upgrade` takes the newest allowed,
# `make lock LOCK_ARGS="-P pandas"` only one package). Resolved for every Python 3.11.
LOCK_ARGS ?=
lock: | $(UV)
	$(UV) pip compile --quiet --generate-hashes --extra test --python-version 3.11 \
		--custom-compile-command "make lock" $(LOCK_ARGS) -o requirements.txt pyproject.toml

demo: setup
	$(BIN)/searchgen-nb demo --out data/demo

# The demo release: notebooks → book → public/data and _build/html.
release: demo
	$(BIN)/searchgen-nb release releases/demo.yml

# Headless Chromium for the browser tests (Debian's chromium-headless-shell; needs root).
browser:
	@command -v chromium-headless-shell >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium-headless-shell >/dev/null; }

# The static checks both test targets run first: ruff's lint and format check (config in
# pyproject.toml) and mypy on searchgen_nb/.
lint: setup
	$(BIN)/ruff check --quiet .
	$(BIN)/ruff format --check --quiet .
	$(BIN)/mypy

# Every test, as CI runs it (.ci/run), on two pytest-xdist workers (`PYTEST_WORKERS=0`: one
# process). Temporary files go to $TMPDIR (`TMPDIR=/dev/shm make test`: on a RAM disk).
PYTEST_WORKERS ?= 2
PYTEST = $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS)
test: lint browser
	$(PYTEST)

# The quick loop while editing: no slow tests (demo, notebooks, book builds), no browser.
test-fast: lint
	$(PYTEST) -m "not slow and not browser"

# Benchmarks (figures in README): `data` against its floor on the demo and the demo ×8 (written
# once below build/bench); `make bench-1m` adds a 1M-pair release (~12 GB; removed after).
BENCH := build/bench
bench: demo
	test -f $(BENCH)/p8/release.yml || $(BIN)/python benchmarks/make_scale.py --out $(BENCH)/p8 --prompts 8 --jobs 2 --demo-cache $(BENCH)/demo
	$(BIN)/python benchmarks/bench_scale.py data/demo/release.yml --json $(BENCH)/demo.json
	$(BIN)/python benchmarks/bench_scale.py $(BENCH)/p8/release.yml --json $(BENCH)/p8.json

bench-1m: bench
	$(BIN)/python benchmarks/make_scale.py --out $(BENCH)/p103 --prompts 103 --jobs 2 --demo-cache $(BENCH)/demo --force
	$(BIN)/python benchmarks/bench_scale.py $(BENCH)/p103/release.yml --rounds 1 --json $(BENCH)/p103.json
	rm -rf $(BENCH)/p103
	$(BIN)/python benchmarks/bench_scale.py --compare $(BENCH)/demo.json $(BENCH)/p8.json $(BENCH)/p103.json

# What a build made, and the demo when it holds the demo's marker; published releases
# (.releases/ and the public/, _build/, book/notebooks links to it) are never removed here.
clean:
	rm -rf build book/vendor
	if [ "$$(cat data/demo/.searchgen-nb 2>/dev/null)" = synthetic-demo ] || \
		[ -f data/demo/.searchgen-nb-demo ]; then rm -rf data/demo; fi
	@echo "kept: published releases (.releases/, public/, _build/, book/notebooks); remove them yourself"

