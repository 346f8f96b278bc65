# kernelsuite: `make test` (CPU, installs into .venv) and `make bench` (the default suite).
# On a machine whose python3 already has CUDA torch and triton, `make bench` uses it and installs nothing.

VENV ?= .venv
PY := $(VENV)/bin/python
SYSTEM_PYTHON ?= python3
ARGS ?=
# make test's pytest-xdist processes (auto: one a core; 0: the tests in make's own process, one after another)
TEST_WORKERS ?= auto
NO_CUDA_EXIT = 86  # suite/__main__.py: this python lacks CUDA torch or triton

.PHONY: help install test bench calibrate report results-page lint format clean

help:
	@echo "make test       install into $(VENV) (CPU torch) and run the tests with Triton's interpreter"
	@echo "make bench      the default suite: on CUDA, check and time everything; on CPU, check only"
	@echo "make calibrate  measure this GPU's copy bandwidth and matrix rate"
	@echo "make report     print the newest recorded run (ARGS='--format md')"
	@echo "make results-page  docs/results-h200.md from results/nvidia-h200/ (ARGS='SLUG OUT.md' for another GPU)"
	@echo "make lint       ruff"

$(VENV)/.installed: pyproject.toml requirements-dev.txt
	$(SYSTEM_PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	$(PY) -m pip install -q --no-deps -e .
	@touch $@

install: $(VENV)/.installed

test: $(VENV)/.installed
	TRITON_INTERPRET=1 $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile tests

# Run with the system python when it has CUDA torch (a GPU machine that cannot install anything),
# otherwise with the venv: there, no GPU, so correctness only through Triton's interpreter. The system
# python's run checks that itself, first, and exits with NO_CUDA_EXIT (suite/__main__.py) where it cannot.
bench calibrate report:
	@# the CUTLASS headers, where only their archive was carried (scripts/cutlass_headers.sh)
	@[ -d .cache/cutlass/include ] || [ ! -f .cache/cutlass.tar.gz ] || tar xzf .cache/cutlass.tar.gz -C .cache
	@KSUITE_NEED_CUDA=1 $(SYSTEM_PYTHON) -m suite $@ $(ARGS); rc=$$?; \
	if [ $$rc -eq $(NO_CUDA_EXIT) ]; then \
		$(MAKE) --no-print-directory install && $(PY) -m suite $@ $(ARGS); \
	else \
		exit $$rc; \
	fi

results-page: $(VENV)/.installed
	scripts/results_page.sh $(ARGS)

lint: $(VENV)/.installed
	$(PY) -m ruff check harness suite submit tests problems solutions

format: $(VENV)/.installed
	$(PY) -m ruff format harness suite submit tests problems solutions

clean:
	rm -rf $(VENV) .pytest_cache
