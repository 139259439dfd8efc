# Two commands on a fresh machine: `make site` builds site/, `make test` runs every test.
# Both set up what they need themselves: a .venv with the Python packages, node_modules via `npm ci`,
# and (for tests) a Chromium.
PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
# Three test processes on two cores: the browser tests spend much of their time waiting on a page, a Python start
# or a shared build, and a third process fills that time.
JOBS   ?= 3
FAST_JOBS ?= 2  # test-fast has no browser and nothing to wait on: one process per core
# The build's and the tests' matrices are small (a 135M-parameter model, one sentence at a time): OpenBLAS's
# threads cost more than they save there (a 12-token forward pass: 0.1 s on one thread, 0.5–5 s with threads).
export OPENBLAS_NUM_THREADS ?= 1

.PHONY: site test test-fast lint setup browser bench serve zip clean screenshots

site: setup
	$(VPY) build.py

setup: $(VENV)/.installed node_modules/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

browser: setup
	@$(VPY) scripts/ensure_browser.py > $(VENV)/.browser
	@echo "browser: $$(cat $(VENV)/.browser)"

# Everything: every test (engine, course, browser; the real course is built once for the run, in the background,
# while the first tests run: tests/conftest.py), and the lint beside them (its report is printed after the tests').
# Both run; either failing fails `make test`.
# --dist load: test by test to whichever worker is free (xdist_group marks are ignored with pytest 9.2 + xdist 3.8).
# --max-worker-restart=0: a crashed test process fails the run at once instead of hanging the scheduler.
test: setup browser
	@status=0; lint_log=$$(mktemp); \
	( $(LINT) > $$lint_log 2>&1 ) & lint=$$!; \
	CHROMIUM_PATH="$$(cat $(VENV)/.browser)" $(VPY) -m pytest -n $(JOBS) --dist load --max-worker-restart=0 -q || status=1; \
	wait $$lint || status=1; cat $$lint_log; rm -f $$lint_log; \
	exit $$status

# The engine's tests and the course's unit tests: no browser, no build of the real course (-m "not shared_build":
# what reads the run's shared builds), none that takes seconds (-m "not slow": a whole build, a Python or Pyodide
# process, SmolLM2 loaded; tests/conftest.py) — under a minute once the caches are warm. `make test` runs them all.
test-fast: setup
	$(VPY) -m pytest -n $(FAST_JOBS) --dist load -q -m "not e2e and not shared_build and not slow" tests/engine tests/course

# Every page at 1280 and 390 px, light and dark, whole, into test-artifacts/ (for people to look at).
screenshots: setup browser
	COURSE_SCREENSHOTS=1 CHROMIUM_PATH="$$(cat $(VENV)/.browser)" $(VPY) -m pytest -n $(JOBS) -q tests/e2e/test_screenshots.py

# Lint and format (ruff, pinned in pyproject.toml) and the architecture contracts ([tool.importlinter]: layers, no
# import cycles).
# Each step runs even when one before it failed; the lint fails if any did.
LINT = (failed=0; for step in "ruff check ." "ruff format --check ." "lint-imports"; do \
	  echo "lint: $$step"; $(VENV)/bin/$$step || failed=1; done; exit $$failed)

lint: setup
	@$(LINT)

serve: setup
	$(VPY) build.py --serve

zip: setup
	$(VPY) build.py --zip

bench: setup browser
	CHROMIUM_PATH="$$(cat $(VENV)/.browser)" $(VPY) bench/site_bench.py

clean:
	rm -rf site dist .cache .test-cache test-artifacts
