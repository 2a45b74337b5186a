# Two commands do all the set-up on a fresh clone (the virtual environment included):
#   make run    launch the station on the bundled demo wiki
#   make test   run the whole test suite (ruff, mypy, then pytest; fails on any of them)
# Both create .venv on first use and re-install when pyproject.toml changes.
#   make dist   build the one-folder desktop bundle dist/curator/ (PyInstaller, packaging/curator.spec)

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test lint perf screenshots clean dist

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Curator needs Python >= 3.11")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@# Byte-compiled once here: a shell with PYTHONDONTWRITEBYTECODE set never writes the caches,
	@# and every one-shot command would compile the whole program from source (~0.1 s a run).
	$(PY) -m compileall -q curator
	@touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/curator gui $(WIKI)

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest

# The scale table (issue 44: each derived answer warm and after one append, beside a plain read;
# CURATOR_SCALE_PAGES=100000 for the next scale), the memory of a command on a wiki it has never
# seen, the station's (warm open, Health's first figures) at the same scale, `dedup --groups`
# round after round of agents' appends beside a full scan, then every benchmark of tests/perf.
perf: $(STAMP)
	-$(PY) -m tests.perf.scale_table $(CURATOR_SCALE_PAGES)
	-$(PY) -m tests.perf.cold_memory $(or $(CURATOR_SCALE_PAGES),32000)
	-$(PY) -m tests.perf.station_scale $(or $(CURATOR_SCALE_PAGES),32000)
	-$(PY) -m tests.perf.station_total_memory $(or $(CURATOR_SCALE_PAGES),32000)
	-$(PY) -m tests.perf.station_total_memory $(or $(CURATOR_SCALE_PAGES),32000) --cold
	-$(PY) -m tests.perf.follow_rounds $(or $(CURATOR_SCALE_PAGES),32000)
	$(PY) -m pytest tests/perf -s -p no:cacheprovider

# The bundle: dist/curator/curator is the whole command line; `curator gui` starts the station.
PACKAGING_STAMP := $(VENV)/.packaging-installed

$(PACKAGING_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,packaging]'
	@touch $(PACKAGING_STAMP)

dist: $(PACKAGING_STAMP)
	$(PY) -m PyInstaller --noconfirm --clean --log-level WARN \
		--distpath dist --workpath build/pyinstaller packaging/curator.spec
	@echo "built dist/curator/curator ($$(du -sh dist/curator | cut -f1))"

screenshots: $(STAMP)
	bash docs/screenshots.sh

clean:
	rm -rf $(VENV) build dist *.egg-info
