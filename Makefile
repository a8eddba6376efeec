# Two commands: `make run` serves the app with demo data; `make test` runs the whole suite on
# SQLite and on PostgreSQL. Both work on a fresh machine with only Python 3.11+.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export FLASK_APP := inspect_app

.PHONY: run test test-sqlite test-postgres test-browser install install-test system-packages bench soak clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

run: install
	$(BIN)/flask db upgrade
	$(BIN)/flask towns sync
	$(BIN)/flask demo load
	$(BIN)/flask run --host 127.0.0.1 --port 5000

# Debian's chromium and WebKitGTK WebDriver with its X server (browser tests) and PostgreSQL server, when
# missing and we may install them.
system-packages:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v WebKitWebDriver >/dev/null 2>&1 || missing="$$missing webkit2gtk-driver"; \
	command -v Xvfb >/dev/null 2>&1 || missing="$$missing xvfb"; \
	ls -d /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	command -v pdftoppm >/dev/null 2>&1 || missing="$$missing poppler-utils"; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# Each database's pass runs on two workers (pytest-xdist; CI has two cores), each worker with its own database
# (tests/databases.py), the browser tests together on one of them (tests/conftest.py). A fixed number, not
# `auto`: a container may see all of its host's cores. `make test WORKERS=0` runs everything in one process.
WORKERS ?= 2
PYTEST := $(BIN)/pytest -n $(WORKERS) --dist loadgroup

test: install-test system-packages
	@echo "== SQLite =="
	$(PYTEST)
	@echo "== PostgreSQL =="
	tests/postgres.sh $(PYTEST)

test-sqlite: install-test
	$(PYTEST)

test-postgres: install-test system-packages
	tests/postgres.sh $(PYTEST)

test-browser: install-test system-packages
	$(BIN)/pytest -m browser

# Every bench as a module (python -m bench.<name>, so none shadows a package), then figure vs target.
# `make bench BENCH="load photos"` runs only those; `make soak` adds the 10-minute soak.
bench: install-test system-packages
	$(BIN)/python -m bench $(BENCH)

soak: install-test system-packages
	$(BIN)/python -m bench.load --soak

clean:
	rm -rf $(VENV) instance .pytest_cache
