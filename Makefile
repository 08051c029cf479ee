# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SPEC := ../shared/spec
# spec files join the run once they pass in full
SPEC_FILES := $(SPEC)/test_core.py $(SPEC)/test_numpy.py $(SPEC)/test_types_and_rules.py $(SPEC)/test_advanced.py

.PHONY: demo test docs bench stress fuzz clean

$(VENV)/.installed-base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed-base
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@

$(VENV)/.installed-docs: pyproject.toml $(VENV)/.installed-base
	$(PY) -m pip install --quiet -e ".[docs]"
	touch $@

demo: $(VENV)/.installed-base
	$(PY) examples/quickstart.py

test: $(VENV)/.installed-test
	$(PY) -m pytest -q -m "not stress" tests $(SPEC_FILES)

# the site (MkDocs, Material theme, API reference from docstrings by mkdocstrings) in site/;
# --strict: a broken link or reference fails the build
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

$(VENV)/.installed-bench: pyproject.toml $(VENV)/.installed-base
	$(PY) -m pip install --quiet -e ".[test,bench]"
	touch $@

# BENCH_QUICK=1 make bench: every section with few rounds (bench/README.md)
bench: $(VENV)/.installed-bench
	$(PY) bench/run.py --md bench/results.md --chart docs/assets/bench-ratios.png

stress: $(VENV)/.installed-test
	$(PY) -m pytest -q tests -m stress -p no:cacheprovider

# differential fuzzer (tests/fuzz/README.md): FUZZ_SECONDS (default 600), FUZZ_SEED (first
# seed), FUZZ_COUNT (stop after this many programs; 0: as many as the time allows)
FUZZ_SECONDS ?= 600
FUZZ_SEED ?= 0
FUZZ_COUNT ?= 0
fuzz: $(VENV)/.installed-test
	$(PY) -m tests.fuzz --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED) --count $(FUZZ_COUNT) --workers 2

clean:
	rm -rf $(VENV) build *.egg-info site
