# searchgen-nb — the two commands a newcomer needs: `make release` and `make test`.
# Everything runs from the project's own environment (.venv), made from requirements.lock:
# every package pinned with its hashes (`make lock` regenerates it from pyproject.toml).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Reproducible builds: timestamps come from the last commit (override by exporting it).
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
export SOURCE_DATE_EPOCH

.PHONY: setup lock release demo test test-fast bench bench-1m browser clean

setup: $(STAMP)

# The lock is the whole environment (dependencies of pyproject.toml plus its `test` extra),
# each package at one version with its hashes; the project itself goes in editable, no deps.
$(STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/pip install --quiet --no-deps -e .
	$(BIN)/pip check
	touch $(STAMP)

# Refresh requirements.lock after a change to the dependencies in pyproject.toml: versions
# already locked are kept when they still fit. pip-tools runs from its own throwaway venv,
# never from .venv. `make lock LOCK_ARGS=--upgrade` moves everything to the newest allowed
# versions, `make lock LOCK_ARGS="-P pandas"` only one package.
LOCKTOOL ?= /tmp/searchgen-nb-locktool
PIP_TOOLS ?= pip-tools==7.6.2
LOCK_ARGS ?=
lock:
	test -x $(LOCKTOOL)/bin/pip-compile || { $(PYTHON) -m venv $(LOCKTOOL) && $(LOCKTOOL)/bin/pip install --quiet "$(PIP_TOOLS)"; }
	CUSTOM_COMPILE_COMMAND="make lock" $(LOCKTOOL)/bin/pip-compile --quiet --generate-hashes \
		--allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links --extra test \
		$(LOCK_ARGS) --output-file requirements.lock pyproject.toml

demo: setup
	$(BIN)/searchgen-nb demo --out data/demo

# The main job on the embedded demo: notebooks → book → public/data and _build/html.
release: demo
	$(BIN)/searchgen-nb release releases/demo.yml

# Headless Chromium for the browser tests (Debian's chromium-headless-shell; needs root, as on CI).
browser:
	@command -v chromium-headless-shell >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium-headless-shell >/dev/null; }

# Everything, as CI runs it (.ci/run calls `make test`): two workers, one per core; the
# expensive inputs (the demo, its release, the changed demo, the book fixture) are made once
# for both, by a background builder while the other tests run (tests/conftest.py BUILDS).
# `make test PYTEST_WORKERS=0` runs everything in one process (and the builder beside it).
# The tests' temporary files (three demo-sized trees, four releases) go to a RAM disk when the
# machine has one with room — /dev/shm as tmpfs, executable, with 4 GB free: 51–59 → 35–36 s here (2026-12-01);
# `make test TEST_TMPDIR=` keeps the system's temporary folder. pytest keeps one run's files.
PYTEST_WORKERS ?= 2
TEST_TMPDIR ?= $(shell d=/dev/shm; [ "$$(stat -f -c %T $$d 2>/dev/null)" = tmpfs ] \
	&& ! findmnt -no OPTIONS $$d | grep -qw noexec && [ "$$(df -Pk $$d | awk 'NR==2 {print $$4}')" -gt 4000000 ] && echo $$d)
# Bytecode caches stay on for the run even where the environment turns them off
# (PYTHONDONTWRITEBYTECODE): each pytest process would otherwise rewrite the asserts of every
# test module again, a second of CPU for the controller and for each worker.
PYTEST = PYTHONDONTWRITEBYTECODE= $(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR) )$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS)
test: setup browser
	$(PYTEST)

# The quick loop while editing: no slow tests (notebooks, book builds), no browser.
test-fast: setup
	$(PYTEST) -m "not slow and not browser"

# Benchmark (figures in README): the whole `data` command against its floor (read + json.loads
# of the same files, the faster of 1 and 2 processes, interleaved rounds, median of per-round
# ratios) on the demo and on the demo's prompts ×8 (78k pairs, written once below build/bench).
# `make bench-1m` adds the 1M-pair release (~12 GB, 2M inodes; removed after).
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

clean:
	rm -rf build _build public book/notebooks book/vendor data .releases
