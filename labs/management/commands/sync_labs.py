"""`manage.py sync_labs`: load lab folders into the database, idempotently by uuid."""

from django.core.management.base import BaseCommand, CommandError

from gpu_worker.exercise.labspec import LabError
from labs.curriculum.services import sync_labs


class Command(BaseCommand):
    help = "Load labs/content/<module>/<exercise>/ folders into the database."

    def add_arguments(self, parser):
        parser.add_argument("--content", help="content folder (default: WARPLAB_CONTENT_DIR)")

    def handle(self, *args, content=None, **options):
        try:
            report = sync_labs(content)
        except LabError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"labs: {len(report.created)} created, {len(report.updated)} updated, {len(report.unchanged)} unchanged"
        )
