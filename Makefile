# searchgen-nb — the two commands a newcomer needs: `make release` and `make test`.
# Everything runs from the project's own environment (.venv), made from requirements.txt.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Reproducible builds: timestamps come from the last commit (override by exporting it).
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
export SOURCE_DATE_EPOCH

.PHONY: setup release demo test bench browser clean

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	$(BIN)/pip check
	touch $(STAMP)

demo: setup
	$(BIN)/searchgen-nb demo --out data/demo

# The main job on the embedded demo: notebooks → book → public/data and _build/html.
release: demo
	$(BIN)/searchgen-nb release releases/demo.yml

# Headless Chromium for the browser tests (Debian package; needs root, as on CI).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }

test: setup browser
	$(BIN)/python -m pytest -q

bench: demo
	$(BIN)/python benchmarks/bench_extract.py

clean:
	rm -rf build _build public book/notebooks book/vendor data
