from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q

from eventviewer.models import Run
from eventviewer.review_export import FORMATS, review_lines, review_rows


class Command(BaseCommand):
    help = (
        "Write every comment, conversation label and verdict, one row each, with its conversation, "
        "event and instance id, to standard output (JSON lines or CSV)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--run", metavar="NAME", help="only this run's instances (its name or slug)")
        parser.add_argument("--format", choices=FORMATS, default="jsonl")

    def handle(self, *args: object, run: str | None, format: str, **options: object) -> None:
        found = None
        if run:
            found = Run.objects.filter(Q(name=run) | Q(slug=run)).first()
            if found is None:
                raise CommandError(f"--run {run}: there is no such run")
        for line in review_lines(review_rows(found), format):
            self.stdout.write(line, ending="")
