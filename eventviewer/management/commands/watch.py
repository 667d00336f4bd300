import signal
import threading
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from eventviewer.imports.agentserver import described
from eventviewer.imports.watch import EVERY, FolderWatch
from eventviewer.models import Conversation


class Command(BaseCommand):
    help = (
        "Follow a conversation folder, or a persistence root like ~/.openhands/conversations, that an "
        "agent is writing: new events are stored within two seconds. Ctrl-C stops."
    )
    stealth_options = ("stop",)  # a threading.Event that ends it (the tests' Ctrl-C)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", metavar="PATH")
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000", help="printed in front of each conversation's URL"
        )

    def handle(self, *args: Any, path: str, base_url: str, **options: Any) -> None:
        stop = options.get("stop") or threading.Event()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
        watch = FolderWatch(Path(path).expanduser(), self.stdout.write)
        self.stdout.write(f"watching {path} (every {EVERY:g} s); Ctrl-C stops")
        watched: set[int] = set()
        try:
            while True:
                for imported in watch.look():
                    conversation = imported.conversation
                    watched.add(conversation.pk)
                    url = f"{base_url.rstrip('/')}{conversation.get_absolute_url()}"
                    self.stdout.write(f"{described(imported, conversation.conversation_id)}  {url}")
                if stop.wait(EVERY):
                    break
        except KeyboardInterrupt:
            pass
        finally:
            Conversation.objects.filter(pk__in=watched).update(live_until=None)
            self.stdout.write("stopped watching")
