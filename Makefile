# Two commands on a fresh machine: `make run` (set up and serve the app) and `make test` (set up and test).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
AZURITE := .local/npm/node_modules/.bin/azurite
AZURITE_VERSION := 3.35.0

.PHONY: setup run test lint unit infra-check bench bench-scale clean browser

$(VENV)/.installed: requirements.txt requirements-dev.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .  # the `scheduler` CLI
	touch $@

$(AZURITE):
	mkdir -p .local/npm
	npm install --no-save --no-audit --no-fund --loglevel=error --prefix .local/npm azurite@$(AZURITE_VERSION)

setup: $(VENV)/.installed $(AZURITE)

run: setup
	$(PY) -m devhost --port $${PORT:-7071}

lint: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .  # formatted once with `ruff format .`; kept so
	$(PY) -m mypy  # files and settings: [tool.mypy] in pyproject.toml

# The console's browser tests drive Debian's chromium through its chromium-driver (nothing is downloaded
# at test time); installed here only when missing, with apt (CI runs as root).
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium chromium-driver; \
	else echo "The console tests need Debian's chromium and chromium-driver: sudo apt-get install chromium chromium-driver" >&2; exit 1; fi

# Tests run on TEST_WORKERS processes (pytest-xdist), each with its own Azurite: most tests wait on real
# seconds (a watchdog, a minute tick, a poll), not on CPU, so even 2 cores carry several at once.
TEST_WORKERS ?= 4

unit: setup browser
	$(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=25  # the 25 slowest tests, printed at the end (CI shows them)

infra-check:
	bash infra/check.sh

test: lint infra-check unit

# Every bench once, cheap ones first (`bench/report.py --list`), into docs/figures.json, then docs/figures.md and the
# generated blocks of docs/cost.md and docs/capacity.md; `make bench ONLY=fire,steady` re-runs some, the rest stay.
bench: setup
	$(PY) bench/report.py $(if $(ONLY),--only $(ONLY))

# A million stored jobs (about 15 minutes) and two storage accounts: by hand, not in `make bench`.
bench-scale: setup
	$(PY) bench/scale.py --budget 600
	$(PY) bench/accounts.py

clean:
	rm -rf $(VENV) .local
