from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from eventviewer.models import Conversation
from eventviewer.trajectory.ids import normalize_conversation_id


class Command(BaseCommand):
    help = (
        "Delete conversations by id, with their events, payloads, base_state.json, share links and "
        "sub-agents' conversations, a batch of events per transaction (readers and imports go on). "
        "An unknown id deletes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ids", nargs="+", metavar="ID")

    def handle(self, *args: Any, ids: list[str], **options: Any) -> None:
        conversations = []
        for raw in ids:
            conversation_id = normalize_conversation_id(raw)
            found = Conversation.objects.filter(conversation_id=conversation_id).first() if conversation_id else None
            if found is None:
                raise CommandError(f"{raw}: no such conversation (nothing was deleted)")
            conversations.append(found)
        for conversation in conversations:
            batches: list[float] = []
            count = conversation.delete_in_batches(timed=batches.append)
            self.stdout.write(f"deleted {conversation.conversation_id}: {count:,} events")
            if options["verbosity"] > 1 and batches:
                self.stdout.write(f"  {len(batches)} batches, the longest {max(batches):.3f} s")
