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
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
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
]

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
    # A file, not memory, so that worker processes started by the tests share the test database.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / ".run" / "test-db.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", default="redis://127.0.0.1:6379/0")
# Longer than channels_redis's 5 s blocking pop, short enough to notice a dead Redis.
CHANNEL_SOCKET_TIMEOUT = 30.0
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            # redis-py 8 reads with a 5 s socket timeout by default, as long as channels_redis's blocking
            # BZPOPMIN waits: an idle receive() would raise TimeoutError (django/channels_redis#422).
            "hosts": [{"address": REDIS_URL, "socket_timeout": CHANNEL_SOCKET_TIMEOUT}],
            "prefix": env("CHANNELS_PREFIX", default="warplab"),
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
CELERY_BEAT_SCHEDULE = {
    "fail-lost-runs": {"task": "labs.fail_lost_runs", "schedule": 30.0},
}

# Which queue a run goes to when the exercise names no pool: `sim` (CPU simulator) or `gpu.<pool>`.
WARPLAB_DEFAULT_QUEUE = env("WARPLAB_DEFAULT_QUEUE", default="sim")
# A run with no event for this long past its own wall-clock limit is reported as lost.
WARPLAB_LOST_AFTER_SECONDS = env.int("WARPLAB_LOST_AFTER_SECONDS", default=120)
WARPLAB_RUNS_PER_MINUTE = env.int("WARPLAB_RUNS_PER_MINUTE", default=20)
# GPU-seconds a learner's runs may hold a slice in any 24 hours (0: no cap); the simulator is never capped.
WARPLAB_GPU_SECONDS_PER_DAY = env.float("WARPLAB_GPU_SECONDS_PER_DAY", default=3600.0)
WARPLAB_CONTENT_DIR = env.path("WARPLAB_CONTENT_DIR", default=BASE_DIR / "labs" / "content")
LAB_DEMO_PASSWORD = env("LAB_DEMO_PASSWORD", default="")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
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

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
}
