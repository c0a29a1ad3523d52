"""Loaded with -p before pytest-django reads the settings: a throwaway key and a test Redis database."""

import os

os.environ.setdefault("SECRET_KEY", "warplab-tests-only")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/1")
os.environ.setdefault("CHANNELS_PREFIX", f"warplab-test-{os.getpid()}")
# Broker keys of this run only, so two test runs on one machine never take each other's jobs.
os.environ.setdefault("WARPLAB_BROKER_PREFIX", f"warplab-test-{os.getpid()}-")
