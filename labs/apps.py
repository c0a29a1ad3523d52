"""App configuration for the labs domain."""

from django.apps import AppConfig


class LabsConfig(AppConfig):
    name = "labs"
    default_auto_field = "django.db.models.BigAutoField"
