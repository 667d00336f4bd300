# eventviewer: `make run` serves the demo, `make test` runs every test.
# Both install what they need first (a virtualenv, Graphviz's dot, Chromium for the
# browser tests), so they work on a fresh Debian machine.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
PG_URL ?= postgres://postgres@127.0.0.1:5432/test
APT_PACKAGES_RUN := graphviz
APT_PACKAGES_TEST := graphviz chromium-headless-shell fonts-dejavu-core tmux git
PYTEST := $(BIN)/python -m pytest
# Besides demo/: evaluation runs (an SDK-events output.jsonl, a V0 one) and a V0 trajectory, real files.
DEMO_RUNS := tests/fixtures/evaluation/output.jsonl tests/fixtures/evaluation/parallel-pending.jsonl \
	tests/fixtures/v0/output.jsonl tests/fixtures/v0/trajectory.json
PURE_TESTS := tests/trajectory
# Run once more with every folder parsed by forked workers (EVENTVIEWER_PARALLEL_FROM=0).
IMPORT_TESTS := tests/test_import.py tests/test_corruptions.py
# Tests run in parallel, two pytest-xdist workers per core (TEST_JOBS=1 for one process): a
# worker whose test waits on the browser or the live server leaves its core to the other one
# (on two cores, 5 min 26 s against 6 min 21 s with one per core). loadgroup keeps the
# agent-server tests on one worker (xdist_group, tests/agentserver/conftest.py): one server.
TEST_JOBS ?= $(shell echo $$(( $$(nproc) * 2 )))
XDIST := -n $(TEST_JOBS) --dist loadgroup
# The forked-import re-run forks parsers of its own: one worker per core (25 s, not 57 s).
FORKED_JOBS ?= $(shell nproc)
# make test-fast: the inner loop, without the browser and agent-server tests and without those
# marked slow (real processes, lock waits, migrations, the long-branch imports, memory
# measurements; docs/development.md): about 1 minute of CPU.
FAST := --ignore=tests/browser --ignore=tests/agentserver -m "not browser and not agentserver and not slow"

.PHONY: run test test-fast agent-server-venv test-pure test-postgres install install-dev system-run system-test postgres demo screenshots bench check lint mutate clean

# make run serves like production (DEBUG off: our own error pages, WhiteNoise for static
# files) but on 127.0.0.1 over plain HTTP, with the login requirement off. A worker runs
# beside the server: it does the Import page's imports (and deletions) in the background.
RUN_ENV = DEBUG=false SECRET_KEY="$$(cat $(VENV)/secret-key)" ALLOWED_HOSTS=127.0.0.1,localhost \
	SECURE_SSL_REDIRECT=false SECURE_COOKIES=false SECURE_HSTS_SECONDS=0 EVENTVIEWER_REQUIRE_LOGIN=false

run: install system-run $(VENV)/secret-key
	$(RUN_ENV) $(BIN)/python manage.py migrate --noinput
	$(RUN_ENV) $(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(RUN_ENV) $(BIN)/python manage.py import_conversation demo $(DEMO_RUNS) --base-url http://127.0.0.1:$(PORT)
	@echo ""
	@echo "  eventviewer is running at http://127.0.0.1:$(PORT)/   (Ctrl-C to stop)"
	@echo "  Reading needs no account; to share links or change HEAD, create the first one (in this folder):"
	@echo "      $(BIN)/python manage.py createsuperuser"
	@echo ""
	$(RUN_ENV) $(BIN)/python manage.py worker & worker=$$!; trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	$(RUN_ENV) $(BIN)/python manage.py runserver --noreload 127.0.0.1:$(PORT)

# A local secret for make run's sessions, made once.
$(VENV)/secret-key: | install
	$(BIN)/python -c "import secrets; print(secrets.token_urlsafe(50))" > $@

# The checks, then every test: the pure core's without Django, then the rest
# (plain `pytest` also runs them all).
test: agent-server-venv install-dev system-test check test-pure
	$(PYTEST) $(XDIST) --ignore=$(PURE_TESTS)
	EVENTVIEWER_PARALLEL_FROM=0 $(PYTEST) -n $(FORKED_JOBS) $(IMPORT_TESTS)

# The inner loop (under 2 minutes on two idle cores): the pure tests and the Django ones,
# without the checks, the browser, the agent-server, the slow tests and the forked-import re-run.
test-fast: install-dev
	$(PYTEST) $(XDIST) -p no:django -W ignore::pytest.PytestConfigWarning $(PURE_TESTS)
	$(PYTEST) $(XDIST) --ignore=$(PURE_TESTS) $(FAST)

# The pure core's tests with pytest-django off: each fails if Django gets imported.
# (pytest-django's ini key in pyproject.toml is then unknown, hence the -W.)
test-pure: install-dev
	$(PYTEST) $(XDIST) -p no:django -W ignore::pytest.PytestConfigWarning $(PURE_TESTS)

# The Django suite against a real PostgreSQL server (started, or installed, if missing);
# the pure tests touch no database.
test-postgres: agent-server-venv install-dev system-test postgres
	DATABASE_URL=$(PG_URL) $(PYTEST) $(XDIST) --ignore=$(PURE_TESTS)
	DATABASE_URL=$(PG_URL) EVENTVIEWER_PARALLEL_FROM=0 $(PYTEST) -n $(FORKED_JOBS) $(IMPORT_TESTS)

# install: what the app needs to run (requirements.txt); install-dev: that and the
# test and check tools (requirements-dev.txt). Each stamp is redone when its files change.
install: $(BIN)/.installed
install-dev: $(BIN)/.installed-dev

$(BIN)/.installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

$(BIN)/.installed-dev: $(BIN)/.installed requirements-dev.txt
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $@

# The agent-server tests' virtualenv (about 15 s with uv, the first time) is installed in the
# background while the checks and the pure tests run; its tests wait on its lock.
agent-server-venv: install-dev
	@nohup $(BIN)/python tests/agentserver/server.py > $(VENV)/agent-server-install.log 2>&1 &

system-run:
	@scripts/need-apt $(APT_PACKAGES_RUN)

system-test:
	@scripts/need-apt $(APT_PACKAGES_TEST)

postgres:
	@scripts/need-postgres "$(PG_URL)"

demo: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py import_conversation demo $(DEMO_RUNS) --base-url http://127.0.0.1:$(PORT)

screenshots: install-dev system-test
	$(BIN)/python -m pytest tests/browser/test_screenshots.py --screenshots

bench: install system-run
	$(BIN)/python bench/run.py

# Lint, formatting and types (configured in pyproject.toml); make test runs them first.
check: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

lint: check

# Mutation testing of the pure core against its own tests (about 15 minutes on 2 cores,
# configured in pyproject.toml); docs/mutation-testing.md has the last figures. The memory
# cap turns a mutant that loops forever while growing a list into a quick MemoryError.
mutate: install-dev
	rm -rf mutants
	ulimit -v 4194304 && $(BIN)/mutmut run --max-children 2
	$(BIN)/mutmut results

clean:
	rm -rf $(VENV) staticfiles .pytest_cache .mypy_cache .ruff_cache mutants
