# eventviewer: `make run` serves the demo, `make test` runs every test.
# Both install what they need first (a virtualenv, Graphviz's dot, Chromium for the
# browser tests), so they work on a fresh Debian machine.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
PG_URL ?= postgres://postgres@127.0.0.1:5432/test
APT_PACKAGES_RUN := graphviz
APT_PACKAGES_TEST := graphviz chromium fonts-dejavu-core

.PHONY: run test test-postgres install system-run system-test postgres demo screenshots bench lint clean

# make run serves like production (DEBUG off: our own error pages, WhiteNoise for static
# files) but on 127.0.0.1 over plain HTTP, with the login requirement off. A worker runs
# beside the server: it does the Import page's imports (and deletions) in the background.
RUN_ENV = DEBUG=false SECRET_KEY="$$(cat $(VENV)/secret-key)" ALLOWED_HOSTS=127.0.0.1,localhost \
	SECURE_SSL_REDIRECT=false SECURE_COOKIES=false SECURE_HSTS_SECONDS=0 EVENTVIEWER_REQUIRE_LOGIN=false

run: install system-run $(VENV)/secret-key
	$(RUN_ENV) $(BIN)/python manage.py migrate --noinput
	$(RUN_ENV) $(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(RUN_ENV) $(BIN)/python manage.py import_conversation demo --base-url http://127.0.0.1:$(PORT)
	@echo ""
	@echo "  eventviewer is running at http://127.0.0.1:$(PORT)/   (Ctrl-C to stop)"
	@echo ""
	$(RUN_ENV) $(BIN)/python manage.py worker & worker=$$!; trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	$(RUN_ENV) $(BIN)/python manage.py runserver --noreload 127.0.0.1:$(PORT)

# A local secret for make run's sessions, made once.
$(VENV)/secret-key: | install
	$(BIN)/python -c "import secrets; print(secrets.token_urlsafe(50))" > $@

test: install system-test
	$(BIN)/python -m pytest

# The same suite against a real PostgreSQL server (started, or installed, if missing).
test-postgres: install system-test postgres
	DATABASE_URL=$(PG_URL) $(BIN)/python -m pytest

install: $(BIN)/.installed

$(BIN)/.installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

system-run:
	@scripts/need-apt $(APT_PACKAGES_RUN)

system-test:
	@scripts/need-apt $(APT_PACKAGES_TEST)

postgres:
	@scripts/need-postgres "$(PG_URL)"

demo: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py import_conversation demo --base-url http://127.0.0.1:$(PORT)

screenshots: install system-test
	$(BIN)/python -m pytest tests/browser/test_screenshots.py --screenshots

bench: install system-run
	$(BIN)/python bench/run.py

lint: install
	$(BIN)/python -m pip install --quiet ruff
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) staticfiles .pytest_cache
