"""The web side's Celery app: it sends runs to worker queues and runs the `web` queue's tasks."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "labsite.settings")

app = Celery("labsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
