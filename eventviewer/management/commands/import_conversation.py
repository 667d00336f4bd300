import sys
from pathlib import Path
from typing import Any, TextIO

from django.core.management.base import BaseCommand, CommandError, CommandParser

from eventviewer.imports.importer import ImportFailed, import_paths, tuned_for_bulk_import
from eventviewer.imports.progress import Progress, ticking

TICK = 0.5  # seconds between progress lines on a terminal


class Command(BaseCommand):
    help = (
        "Import OpenHands conversations: a conversation folder, a persistence root of them "
        "(like ~/.openhands/conversations, or a whole ~/.openhands with the app server's v1_conversations), "
        "a .zip of either, a .json/.jsonl file of events, a V0 trajectory (.json), a V0 session store "
        "(~/.openhands/sessions), an events/ folder or a folder of event-*.json files without base_state.json, "
        "a folder's events.jsonl, or an evaluation or resolver output (output.jsonl: each row an instance "
        "of a run, SDK or V0 history). A source with no event eventviewer can read is refused. "
        "Importing again adds only new events. Nothing is written if anything is wrong. "
        "On a terminal, progress (events and files per second, time left) shows as it goes."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument(
            "--run", metavar="NAME", help="the run an evaluation output's rows import into (default: from its name)"
        )
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000", help="printed in front of each conversation's URL"
        )

    def handle(self, *args: Any, paths: list[str], base_url: str, run: str | None = None, **options: Any) -> None:
        progress = Progress()
        terminal: TextIO = getattr(self.stderr, "_out", sys.stderr)  # the stream under the wrapper
        shown = terminal.isatty()

        def show() -> None:
            if shown and progress.conversations:
                terminal.write(f"\r{progress.line()}\x1b[K")
                terminal.flush()

        try:
            with tuned_for_bulk_import(), ticking(TICK, show):
                results = import_paths(((Path(p).expanduser(), p) for p in paths), progress, run)
        except ImportFailed as e:
            if shown:
                terminal.write("\r\x1b[K")
            for line in str(e).splitlines():
                self.stderr.write(line)
            count = len(e.problems)
            raise CommandError(f"nothing was imported ({count} problem{'s' if count != 1 else ''})") from None
        if shown:
            terminal.write("\n")
        for result in results:
            conversation = result.conversation
            verb = "imported" if result.created else ("updated" if result.added else "unchanged")
            self.stdout.write(
                f"{verb} {conversation.conversation_id}: {result.added} new of {conversation.event_count} events"
                f"{'' if result.added else ', nothing new'}, "
                f"{conversation.leaf_count} branch{'es' if conversation.leaf_count != 1 else ''}  "
                f"{base_url.rstrip('/')}{conversation.get_absolute_url()}"
            )
        if len(results) > 1 and not any(result.added for result in results):
            self.stdout.write("nothing new")
