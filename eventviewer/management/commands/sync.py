import os
import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from eventviewer.imports.agentserver import AgentServer, Gone, OverLimit, ServerError, described, sync
from eventviewer.imports.follow import Follow, listed
from eventviewer.imports.importer import Imported, ImportFailed
from eventviewer.models import Conversation
from eventviewer.trajectory.ids import normalize_conversation_id


class Command(BaseCommand):
    help = (
        "Copy the conversations of a running OpenHands agent-server (all of them, or those named), "
        "adding only new events; with --follow, stay connected and store events as they come."
    )
    stealth_options = ("stop",)  # a threading.Event that ends --follow (the tests' Ctrl-C)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--server", required=True, metavar="URL", help="e.g. http://127.0.0.1:8000")
        parser.add_argument(
            "--api-key",
            default=os.environ.get("EVENTVIEWER_AGENT_SERVER_API_KEY", ""),
            help="the server's session API key (default: $EVENTVIEWER_AGENT_SERVER_API_KEY)",
        )
        parser.add_argument(
            "--conversation", action="append", default=[], metavar="ID", help="only this one (repeatable)"
        )
        parser.add_argument("--follow", action="store_true", help="keep following until interrupted")
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000", help="printed in front of each conversation's URL"
        )

    def handle(
        self, *args: Any, server: str, api_key: str, conversation: list[str], follow: bool, **options: Any
    ) -> None:
        self.base_url = options["base_url"].rstrip("/")
        self.lock = threading.Lock()
        try:
            agent_server = AgentServer(server, api_key)
        except ValueError as e:
            raise CommandError(str(e)) from None
        wanted = []
        for raw in conversation:
            conversation_id = normalize_conversation_id(raw)
            if conversation_id is None:
                raise CommandError(f"{raw!r} is not a conversation id (32 hex digits, or a dashed UUID)")
            wanted.append(conversation_id)
        try:
            ids = wanted or listed(agent_server)
        except ServerError as e:
            raise CommandError(str(e)) from None
        failed = 0
        for conversation_id in ids:
            try:
                self.say(self.line(sync(agent_server, conversation_id), conversation_id))
            except Gone as e:
                if wanted:
                    raise CommandError(str(e)) from None
                self.stderr.write(f"{e} any more (deleted meanwhile?): skipped")
            except OverLimit as e:
                failed += 1
                self.stderr.write(f"{conversation_id}: nothing new stored, refused: {e}")
            except ServerError as e:
                raise CommandError(f"{e}; what was stored before is kept") from None
            except ImportFailed as e:
                failed += 1
                for line in [f"{conversation_id}: nothing stored, its events do not import:", *e.problems]:
                    self.stderr.write(line)
        if follow:
            failed += self.follow(
                agent_server, ids, follow_new=not wanted, stop=options.get("stop") or threading.Event()
            )
        if failed:
            raise CommandError(f"{failed} conversation{'s' if failed != 1 else ''} could not be stored")

    def line(self, imported: Imported | None, conversation_id: str) -> str:
        url = f"{self.base_url}/c/{conversation_id}/"
        return f"{'synced' if imported else 'unchanged'} {described(imported, conversation_id)}  {url}"

    def say(self, message: str) -> None:
        with self.lock:
            self.stdout.write(message)

    def follow(self, agent_server: AgentServer, ids: list[str], follow_new: bool, stop: threading.Event) -> int:
        """Until Ctrl-C (or ``stop``); the conversations it had to stop following."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
        following = Follow(agent_server, self.say, stop)
        try:
            following.run(ids, follow_new)
        except KeyboardInterrupt:
            pass
        live = Conversation.objects.filter(conversation_id__in=following.followed).count()
        self.say(f"stopped following ({live} conversation{'s' if live != 1 else ''} stored)")
        return len(following.refused)
