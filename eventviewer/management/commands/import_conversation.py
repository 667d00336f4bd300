from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from eventviewer.imports.importer import ImportFailed, import_paths, tuned_for_bulk_import


class Command(BaseCommand):
    help = (
        "Import OpenHands conversations: a conversation folder, a persistence root of them "
        "(like ~/.openhands/conversations), a .zip of either, or a .json/.jsonl file of events. "
        "Importing again adds only new events. Nothing is written if anything is wrong."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000", help="printed in front of each conversation's URL"
        )

    def handle(self, *args, paths: list[str], base_url: str, **options) -> None:
        try:
            with tuned_for_bulk_import():
                results = import_paths((Path(p).expanduser(), p) for p in paths)
        except ImportFailed as e:
            for line in str(e).splitlines():
                self.stderr.write(line)
            count = len(e.problems)
            raise CommandError(f"nothing was imported ({count} problem{'s' if count != 1 else ''})") from None
        for result in results:
            conversation = result.conversation
            verb = "imported" if result.created else ("updated" if result.added else "unchanged")
            self.stdout.write(
                f"{verb} {conversation.conversation_id}: {result.added} new of {conversation.event_count} events, "
                f"{conversation.leaf_count} branch{'es' if conversation.leaf_count != 1 else ''}  "
                f"{base_url.rstrip('/')}{conversation.get_absolute_url()}"
            )
