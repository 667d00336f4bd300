"""Django settings for eventviewer: one file, configured from the environment.

Everything has a safe local default so a fresh checkout runs; production sets
DEBUG=false, SECRET_KEY, ALLOWED_HOSTS and DATABASE_URL (see README.md).
"""

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: str) -> bool:
    value = os.getenv(name, default).strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}")


def envint(name: str, default: str) -> int:
    value = os.getenv(name, default)
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}") from None


def envlist(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.getenv(name, default).split(",") if item.strip()]


DEBUG = envbool("DEBUG", "true")
WHITENOISE = "whitenoise.middleware.WhiteNoiseMiddleware"

SECRET_KEY = os.getenv("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "django-insecure-local-development-only"

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver" if DEBUG else "")
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DEBUG is off")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "template_partials",
    "django_tasks",
    "django_tasks_db",
    "axes",
    "eventviewer",
]

# The security headers come first, so that static files (which WhiteNoise answers
# without going further down) carry them as pages do.
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "eventviewer.middleware.content_security_policy",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "eventviewer.middleware.LoginRequired",
    "axes.middleware.AxesMiddleware",  # last: it answers a locked-out login
]

if not DEBUG:
    # Static files straight from the app servers (runserver serves them in DEBUG).
    MIDDLEWARE.insert(MIDDLEWARE.index("django.contrib.sessions.middleware.SessionMiddleware"), WHITENOISE)

ROOT_URLCONF = "eventviewer.urls"
WSGI_APPLICATION = "eventviewer.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'eventviewer.sqlite3'}",
        # A worker thread keeps its connection: opening one (and SQLite's PRAGMAs) cost a
        # page more than a tenth of its CPU under load (bench/load.py).
        conn_max_age=envint("CONN_MAX_AGE", "60"),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Writers queue instead of failing, and a transaction takes the write lock up
    # front so two importers never deadlock upgrading read locks. WAL lets pages be
    # read while an import writes; 16 KiB pages suit rows holding whole events (the
    # page size only applies to a new database).
    DATABASES["default"]["OPTIONS"] = {
        "timeout": envint("EVENTVIEWER_SQLITE_TIMEOUT", "60"),
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
SQLITE = DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"

# Per-process, for drawn branch diagrams (up to a few hundred KB each): the bound
# keeps a visitor walking every event's ?leaf= from filling a worker's memory.
CACHES: dict[str, dict[str, Any]] = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "OPTIONS": {"MAX_ENTRIES": envint("EVENTVIEWER_CACHE_ENTRIES", "200")},
    },
    # The HTML of branch pages' turns and of cards (eventviewer.cardhtml): a page keeps 60 turns
    # and about 100 card parts, so this holds some twenty pages (a turn is about 13 KB: at most
    # about 40 MB a process).
    "cards": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "cards",
        "OPTIONS": {"MAX_ENTRIES": 3_000},
    },
}
if SQLITE:
    # An import holds SQLite's one write lock until it commits (all or nothing), for
    # minutes on a big upload. A login must not wait for it: sessions and failed-login
    # counts live in files beside the database (shared by every process on its machine,
    # which SQLite's file is anyway), and last_login is skipped while the lock is held
    # (eventviewer.apps).
    for name in ("sessions", "lockouts"):
        CACHES[name] = {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": f"{DATABASES['default']['NAME']}-{name}",
            "TIMEOUT": None,  # sessions and lockouts carry their own expiry
            "OPTIONS": {"MAX_ENTRIES": 1_000_000},
        }
    SESSION_ENGINE = "django.contrib.sessions.backends.cache"
    SESSION_CACHE_ALIAS = "sessions"
    AXES_HANDLER = "eventviewer.middleware.FileLockouts"
    AXES_CACHE = "lockouts"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Repeated failed logins lock that username out from that address for a while (django-axes).
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = envint("EVENTVIEWER_LOGIN_FAILURES", "5")
AXES_COOLOFF_TIME = timedelta(minutes=envint("EVENTVIEWER_LOGIN_LOCKOUT_MINUTES", "15"))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Proxies in front that append to X-Forwarded-For (nginx: 1): the lockout counts by the
# address they saw, not theirs (without it, five bad passwords lock a user out for all).
EVENTVIEWER_PROXY_COUNT = envint("EVENTVIEWER_PROXY_COUNT", "0")
AXES_CLIENT_IP_CALLABLE = "eventviewer.middleware.client_address"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "eventviewer:conversation-list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Uploads larger than this are spooled to disk rather than held in memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 4 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FILES = envint("EVENTVIEWER_MAX_UPLOAD_FILES", "100")

# Production hardening: on whenever DEBUG is off.
# Secure cookies need HTTPS; `make run` serves plain HTTP on 127.0.0.1 with DEBUG off.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = envbool("SECURE_COOKIES", "false" if DEBUG else "true")
SESSION_COOKIE_HTTPONLY = True
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", "false" if DEBUG else "true")
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", "0" if DEBUG else "31536000")
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if envbool("SECURE_PROXY_SSL_HEADER", "false"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Background work (web imports, deletions) runs in `manage.py worker` processes, which
# take tasks from the database; EVENTVIEWER_TASKS=immediate runs them inside the request
# instead (for tests and one-off scripts, never for a server).
TASK_BACKENDS = {
    "database": "django_tasks_db.DatabaseBackend",
    "immediate": "django_tasks.backends.immediate.ImmediateBackend",
}
if os.getenv("EVENTVIEWER_TASKS", "database") not in TASK_BACKENDS:
    raise ImproperlyConfigured(f"EVENTVIEWER_TASKS must be one of {', '.join(TASK_BACKENDS)}")
TASKS = {"default": {"BACKEND": TASK_BACKENDS[os.getenv("EVENTVIEWER_TASKS", "database")]}}

# eventviewer's own settings (documented in README.md).
EVENTVIEWER_REQUIRE_LOGIN = envbool("EVENTVIEWER_REQUIRE_LOGIN", "true")
EVENTVIEWER_MAX_FILE_BYTES = envint("EVENTVIEWER_MAX_FILE_BYTES", str(512 * 1024 * 1024))
# The SDK's base_state.json is a few KB; it is kept whole, so it is capped on its own.
EVENTVIEWER_MAX_BASE_STATE_BYTES = envint("EVENTVIEWER_MAX_BASE_STATE_BYTES", str(4 * 1024 * 1024))
# The largest event read. The SDK cuts tool output to tens of thousands of characters, so
# real events are far smaller; parsing one costs up to ~15 times its size in memory.
EVENTVIEWER_MAX_EVENT_BYTES = envint("EVENTVIEWER_MAX_EVENT_BYTES", str(16 * 1024 * 1024))
# Events in one conversation: an import holds a few small values per event.
EVENTVIEWER_MAX_EVENTS = envint("EVENTVIEWER_MAX_EVENTS", "500000")
# `sync` against an agent-server: seconds to connect and between two bytes of an answer,
# seconds for a whole answer, and bytes in one answer (a larger page is asked again smaller).
EVENTVIEWER_SYNC_TIMEOUT = envint("EVENTVIEWER_SYNC_TIMEOUT", "30")
EVENTVIEWER_SYNC_ANSWER_SECONDS = envint("EVENTVIEWER_SYNC_ANSWER_SECONDS", "300")
EVENTVIEWER_SYNC_MAX_ANSWER_BYTES = envint("EVENTVIEWER_SYNC_MAX_ANSWER_BYTES", str(64 * 1024 * 1024))
EVENTVIEWER_MAX_UPLOAD_BYTES = envint("EVENTVIEWER_MAX_UPLOAD_BYTES", str(512 * 1024 * 1024))
EVENTVIEWER_MAX_ZIP_MEMBERS = envint("EVENTVIEWER_MAX_ZIP_MEMBERS", "250000")
EVENTVIEWER_MAX_ZIP_BYTES = envint("EVENTVIEWER_MAX_ZIP_BYTES", str(4 * 1024 * 1024 * 1024))
# Conversation folders of at least this many event files are parsed in worker processes;
# below it a forked worker costs more than it saves. The tests run imports again at 0.
EVENTVIEWER_PARALLEL_FROM = envint("EVENTVIEWER_PARALLEL_FROM", "2000")
# What pages show of one event: its raw JSON up to this many bytes (the rest is a
# download), and its text as markdown only up to this many characters (above: plain text).
EVENTVIEWER_RAW_SHOWN_BYTES = envint("EVENTVIEWER_RAW_SHOWN_BYTES", str(256 * 1024))
EVENTVIEWER_MARKDOWN_MAX_CHARS = envint("EVENTVIEWER_MARKDOWN_MAX_CHARS", "20000")
# Uploaded files wait here for a worker: on several machines, a folder they all share.
EVENTVIEWER_UPLOAD_DIR = Path(os.getenv("EVENTVIEWER_UPLOAD_DIR", str(BASE_DIR / "uploads")))
# A background import whose worker has not been heard of for this long has stopped.
EVENTVIEWER_WORKER_SILENCE_SECONDS = envint("EVENTVIEWER_WORKER_SILENCE_SECONDS", "60")
# The path API answers a branch a page at a time: this many events by default, at most the maximum.
EVENTVIEWER_API_PATH_LIMIT = envint("EVENTVIEWER_API_PATH_LIMIT", "1000")
EVENTVIEWER_API_PATH_MAX_LIMIT = envint("EVENTVIEWER_API_PATH_MAX_LIMIT", "10000")
EVENTVIEWER_PAGE_SIZE = envint("EVENTVIEWER_PAGE_SIZE", "60")
EVENTVIEWER_LIST_PAGE_SIZE = envint("EVENTVIEWER_LIST_PAGE_SIZE", "50")
# Drawn diagrams stay valid until the conversation changes; this only bounds their life.
EVENTVIEWER_DIAGRAM_CACHE_SECONDS = envint("EVENTVIEWER_DIAGRAM_CACHE_SECONDS", "3600")
# Branches whose reading (and what pages derive from it) each process keeps: about 10 MB
# for a 10,000-event branch; branches over 200,000 events are never kept.
EVENTVIEWER_BRANCHES_KEPT = envint("EVENTVIEWER_BRANCHES_KEPT", "4")
# A branch longer than this (in events) is never read whole by a page or the path API:
# they read the part they show, and say which whole-branch figures they leave out.
EVENTVIEWER_FULL_READ_MAX = envint("EVENTVIEWER_FULL_READ_MAX", "200000")
# A search (the list's, a conversation's, a share link's) runs its queries within this
# time, or ends with a 400 naming it.
EVENTVIEWER_SEARCH_MS = envint("EVENTVIEWER_SEARCH_MS", "1500")
# Compare reads both branches whole: at most this many events each (a 32,000-event branch
# costs a comparison about 100 MB).
EVENTVIEWER_COMPARE_MAX_EVENTS = envint("EVENTVIEWER_COMPARE_MAX_EVENTS", "40000")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"users_errors": {"()": "eventviewer.logfilters.UsersErrors"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.getenv("LOG_LEVEL", "WARNING")},
    # A refused request is one line at INFO; a server error keeps its traceback.
    "loggers": {name: {"filters": ["users_errors"]} for name in ("django.request", "django.security")},
}
