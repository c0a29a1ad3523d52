"""The Django project: settings, URLs, ASGI routing and the Celery app; no domain logic."""

from labsite.celery import app as celery_app

__all__ = ("celery_app",)
