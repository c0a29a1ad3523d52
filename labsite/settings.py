"""Settings, read from the environment (django-environ) and checked at start-up.

Every variable is listed in `.env.example`. SQLite is the default database;
`DATABASE_URL` selects PostgreSQL. One Redis serves the Channels layer and the
Celery broker unless `CELERY_BROKER_URL` says otherwise.
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise environ.ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off (see .env.example)")
    SECRET_KEY = "insecure-development-key-do-not-use-in-production"
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
# Origins (scheme://host[:port]) other than the page's own that may post forms and open WebSockets,
# e.g. https://lab.example.org behind a TLS proxy.
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# --- served over TLS (HTTPS=1): HSTS, Secure cookies and the HTTP->HTTPS redirect, each overridable ---
HTTPS = env.bool("HTTPS", default=False)
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=HTTPS)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=HTTPS)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=HTTPS)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=HTTPS)
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto (say so only when the proxy strips a client's own).
if env.bool("BEHIND_TLS_PROXY", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
# Preloading HSTS is a commitment a deployer makes on purpose (SECURE_HSTS_PRELOAD=1), not a default.
SILENCED_SYSTEM_CHECKS = env.list("SILENCED_SYSTEM_CHECKS", default=["security.W021"])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "axes",
    "csp",
    "labs",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "servestatic.middleware.ServeStaticMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its lockout page.
    "axes.middleware.AxesMiddleware",
]

# Content-Security-Policy (django-csp): no inline script anywhere; styles may be inline (CodeMirror and
# plotly.js set them at run time); connect-src 'self' covers the page's own ws:// or wss://.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", "blob:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    }
}

ROOT_URLCONF = "labsite.urls"
ASGI_APPLICATION = "labsite.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web process and the web-queue worker write at once: wait instead of failing.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
    if env.bool("WARPLAB_SQLITE_WAL", default=False):
        # The pipeline bench's setting (run 22), where SQLite stands in for PostgreSQL under a class's load: a
        # transaction takes the write lock when it begins (one that began by reading and then wrote could not wait
        # for it, and failed at once with "database is locked": 738 times in one load run), readers stop waiting
        # for a writer, and a commit stops syncing a whole journal (each reported event is a transaction). Off by
        # default: in WAL mode a database file swapped under open connections, as the outage tests do, is a disk
        # I/O error for every later connection, and an IMMEDIATE transaction held open by a test blocks the
        # read-only transactions of the processes it starts.
        DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
        DATABASES["default"]["OPTIONS"]["init_command"] = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    # A file, not memory, so that worker processes started by the tests share the test database. Test runs side by
    # side on one checkout (CI's passes) each name their own: the first to end deletes its file, and a run still
    # using that file finds its database read-only (the story's load test failed so on 2026-12-07).
    DATABASES["default"]["TEST"] = {"NAME": env("WARPLAB_TEST_DB", default=str(BASE_DIR / ".run" / "test-db.sqlite3"))}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", default="redis://127.0.0.1:6379/0")
# Prefix of this site's keys on REDIS_URL: the Channels layer's and the abuse limits' (labs.runs.limits).
CHANNELS_PREFIX = env("CHANNELS_PREFIX", default="warplab")
# Longer than channels_redis's 5 s blocking pop, short enough to notice a dead Redis.
CHANNEL_SOCKET_TIMEOUT = 30.0
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            # redis-py 8 reads with a 5 s socket timeout by default, as long as channels_redis's blocking
            # BZPOPMIN waits: an idle receive() would raise TimeoutError (django/channels_redis#422).
            "hosts": [{"address": REDIS_URL, "socket_timeout": CHANNEL_SOCKET_TIMEOUT}],
            "prefix": CHANNELS_PREFIX,
        },
    }
}

CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
# A prefix on every broker key keeps two labs (or two test runs) on one Redis apart; workers use the same.
CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": env("WARPLAB_BROKER_PREFIX", default="")}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_DEFAULT_QUEUE = "web"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The workers' claims on jobs are answered through the result backend (labs.runs.ledger); nothing else keeps results.
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default="") or CELERY_BROKER_URL
CELERY_RESULT_EXPIRES = 600
CELERY_BEAT_SCHEDULE = {
    "reap-runs": {"task": "labs.reap_runs", "schedule": env.float("WARPLAB_REAPER_SECONDS", default=30.0)},
}

# Which queue a run goes to when the exercise names no pool: `sim` (CPU simulator) or `gpu.<pool>`.
WARPLAB_DEFAULT_QUEUE = env("WARPLAB_DEFAULT_QUEUE", default="sim")
# A run with no event for this long past its own wall-clock limit is presumed lost (its lease, labs.runs.ledger).
WARPLAB_LOST_AFTER_SECONDS = env.int("WARPLAB_LOST_AFTER_SECONDS", default=120)
# Claims a run's job may be granted (labs.runs.ledger); a job redelivered more often ends as an infrastructure error.
WARPLAB_MAX_ATTEMPTS = env.int("WARPLAB_MAX_ATTEMPTS", default=3)
# Abuse limits (labs.runs.limits): runs per learner per sliding minute; runs a learner may have queued or running
# at once (0: no limit); queued runs across the lab before a submit is answered 503 (0: no cap).
WARPLAB_RUNS_PER_MINUTE = env.int("WARPLAB_RUNS_PER_MINUTE", default=20)
WARPLAB_RUNS_IN_FLIGHT = env.int("WARPLAB_RUNS_IN_FLIGHT", default=1)
WARPLAB_QUEUE_CAP = env.int("WARPLAB_QUEUE_CAP", default=200)
# Largest request body (with or without Content-Length) and WebSocket message, in bytes.
WARPLAB_MAX_BODY_BYTES = env.int("WARPLAB_MAX_BODY_BYTES", default=1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = WARPLAB_MAX_BODY_BYTES
WARPLAB_MAX_WS_MESSAGE_BYTES = env.int("WARPLAB_MAX_WS_MESSAGE_BYTES", default=4096)
# GPU-seconds a learner's runs may hold a slice in any 24 hours (0: no cap); the simulator is never capped.
WARPLAB_GPU_SECONDS_PER_DAY = env.float("WARPLAB_GPU_SECONDS_PER_DAY", default=3600.0)
# GPU-seconds all of a course's students' runs may hold slices in any 24 hours (0: no cap).
WARPLAB_COURSE_GPU_SECONDS_PER_DAY = env.float("WARPLAB_COURSE_GPU_SECONDS_PER_DAY", default=0.0)
WARPLAB_CONTENT_DIR = env.path("WARPLAB_CONTENT_DIR", default=BASE_DIR / "labs" / "content")
LAB_DEMO_PASSWORD = env("LAB_DEMO_PASSWORD", default="")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
AUTHENTICATION_BACKENDS = [
    # django-axes first: it refuses a locked-out username from that address before a password is checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Wrong passwords are counted per username from an address (a prankster cannot lock a student out from elsewhere)
# and per client address whatever the usernames, each with its own limit (labs.accounts.LoginThrottle).
AXES_HANDLER = "labs.accounts.LoginThrottle"
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
WARPLAB_LOGIN_FAILURES_PER_ADDRESS = env.int("WARPLAB_LOGIN_FAILURES_PER_ADDRESS", default=25)
AXES_COOLOFF_TIME = env.float("AXES_COOLOFF_HOURS", default=0.25)  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], ["ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Invitations to set a password (labs.accounts.invite) are Django's password-reset tokens: single use, and valid
# this many seconds. They are mailed through EMAIL_BACKEND (printed on the console unless configured).
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=7 * 24 * 3600)
EMAIL_BACKEND = env("EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="warplab@localhost")
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
SERVESTATIC_USE_FINDERS = DEBUG
SERVESTATIC_AUTOREFRESH = DEBUG

CSRF_FAILURE_VIEW = "labs.views.errors.csrf_failure"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
}
