# Two commands on a fresh machine: `make site` builds site/, `make test` runs every test.
# Both set up what they need themselves: a .venv with the Python packages, node_modules via `npm ci`,
# and (for tests) a Chromium.
PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
JOBS   ?= 2
# The build's and the tests' matrices are small (a 135M-parameter model, one sentence at a time): OpenBLAS's
# threads cost more than they save there (a 12-token forward pass: 0.1 s on one thread, 0.5–5 s with threads).
export OPENBLAS_NUM_THREADS ?= 1

.PHONY: site test test-fast lint setup browser bench serve zip clean

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

# --max-worker-restart=0: a crashed test process fails the run at once; with restarts, pytest-xdist's
# loadgroup scheduler hangs instead of finishing (reproduced with a test that segfaults).
test: setup browser lint
	CHROMIUM_PATH="$$(cat $(VENV)/.browser)" $(VPY) -m pytest -n $(JOBS) --dist loadgroup --max-worker-restart=0 -q

# Unit and build tests only: no browser, no Playwright (well under a minute once the caches are warm).
test-fast: setup lint
	$(VPY) -m pytest -n $(JOBS) -m "not e2e" tests/unit tests/models tests/build tests/course -q

# The architecture contracts of pyproject.toml ([tool.importlinter]): layers, no import cycles.
lint: setup
	$(VENV)/bin/lint-imports

serve: setup
	$(VPY) build.py --serve

zip: setup
	$(VPY) build.py --zip

bench: setup browser
	CHROMIUM_PATH="$$(cat $(VENV)/.browser)" $(VPY) bench/site_bench.py

clean:
	rm -rf site dist .cache .test-cache test-artifacts
