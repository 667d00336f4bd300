from collections.abc import Sequence
from typing import cast

from django.contrib import admin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.html import format_html

from eventviewer import tasks
from eventviewer.models import (
    Comment,
    Conversation,
    ConversationQuerySet,
    Event,
    Instance,
    Label,
    Run,
    ShareLink,
    Verdict,
)
from eventviewer.templatetags.eventviewer import pretty_json


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin[Conversation]):
    list_display = ["title", "conversation_id", "execution_status", "event_count", "leaf_count", "imported_at"]
    list_filter = ["execution_status"]
    search_fields = ["title", "conversation_id"]
    readonly_fields = [*(f.name for f in Conversation._meta.fields if f.name not in ("title",)), "base_state"]
    exclude = ["skeleton"]

    @admin.display(description="base_state.json")
    def base_state(self, obj: Conversation) -> str:
        return format_html('<a href="{}base_state.json">download</a>', obj.get_absolute_url())

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # conversations come in through import only

    def get_queryset(self, request: HttpRequest) -> ConversationQuerySet:
        # The default manager's queryset (ConversationQuerySet.as_manager()), ordered by the admin.
        return cast(ConversationQuerySet, super().get_queryset(request)).shown()

    def get_deleted_objects(
        self, objs: Sequence[Conversation] | QuerySet[Conversation], request: HttpRequest
    ) -> tuple[list[str], dict[str, int], set[str], list[str]]:
        """What deleting means, in a few lines: listing every event would take longer
        than deleting them."""
        lines = [f"{c}: {c.event_count:,} events, its base_state.json and share links" for c in objs]
        lines += [f"sub-agent {s}: {s.event_count:,} events" for c in objs for s in c.subagent_conversations()]
        return lines, {}, set(), []

    def delete_model(self, request: HttpRequest, obj: Conversation) -> None:
        self.delete_queryset(request, Conversation.objects.filter(pk=obj.pk))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Conversation]) -> None:
        tasks.delete_in_background(queryset)  # a batch of events at a time


@admin.register(Event)
class EventAdmin(admin.ModelAdmin[Event]):
    list_display = ["event_id", "kind", "tool_name", "seq", "depth", "conversation"]
    list_filter = ["kind"]
    search_fields = ["event_id", "tool_call_id", "action_id"]
    list_select_related = ["conversation"]
    raw_id_fields = ["conversation", "parent"]
    show_full_result_count = False

    readonly_fields = ["original_json"]

    @admin.display(description="Original JSON")
    def original_json(self, obj: Event) -> str:
        return obj.payload.raw  # the admin escapes it

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Event | None = None) -> bool:
        return False  # events never change once imported

    def has_delete_permission(self, request: HttpRequest, obj: Event | None = None) -> bool:
        return False  # nor go away, but with their whole conversation (deleted from its page)


@admin.register(ShareLink)
class ShareLinkAdmin(admin.ModelAdmin[ShareLink]):
    list_display = ["conversation", "note", "created_by", "created_at", "expires_at", "revoked_at"]
    raw_id_fields = ["conversation"]
    readonly_fields = ["token", "created_by", "created_at"]


@admin.register(Instance)
class InstanceAdmin(admin.ModelAdmin[Instance]):
    """A run's instances, paged (a run can hold 10,000), each linking to its conversation
    (deleted from there)."""

    list_display = ["instance_id", "run", "outcome", "conversation_link", "turns", "failures", "row"]
    list_filter = ["run", "outcome"]
    search_fields = ["instance_id"]
    ordering = ["run", "instance_id"]
    list_select_related = ["run", "conversation"]
    show_full_result_count = False

    @admin.display(description="conversation")
    def conversation_link(self, obj: Instance) -> str:
        conversation = obj.conversation
        return format_html('<a href="{}">{}</a>', conversation.get_absolute_url(), conversation)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Instance]:
        return super().get_queryset(request).filter(conversation__deleting=False)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Instance | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Instance | None = None) -> bool:
        return False  # with its conversation


@admin.register(Run)
class RunAdmin(admin.ModelAdmin[Run]):
    list_display = ["name", "slug", "instance_count", "source", "imported_at"]
    search_fields = ["name", "slug"]
    readonly_fields = ("name", "slug", "source", "shown_metadata", "imported_at", "instances")
    fields = readonly_fields  # the stored metadata only as shown_metadata masks it

    @admin.display(description="metadata (secrets masked)")
    def shown_metadata(self, obj: Run) -> str:
        return format_html("<pre>{}</pre>", pretty_json(obj.shown_metadata))

    @admin.display(description="instances", ordering="instance_count")
    def instance_count(self, obj: Run) -> int:
        count: int = obj.instance_count  # type: ignore[attr-defined]  # get_queryset's annotation
        return count

    @admin.display(description="instances")
    def instances(self, obj: Run) -> str:
        listed = reverse("admin:eventviewer_instance_changelist")
        count: int = obj.instance_count  # type: ignore[attr-defined]  # get_queryset's annotation
        return format_html(
            '<a href="{}?run__id__exact={}">{} instance{}</a>', listed, obj.pk, f"{count:,}", pluralize(count)
        )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Run]:
        shown = Q(instances__conversation__deleting=False)
        return super().get_queryset(request).annotate(instance_count=Count("instances", filter=shown))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # runs come in through import only

    def has_change_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        return False  # as imported: a run's rows are re-scored by importing its file again

    def has_delete_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        return False  # its conversations are deleted one by one (their page, the conversation admin)


@admin.register(Label)
class LabelAdmin(admin.ModelAdmin[Label]):
    """The team's labels for events and conversations (a migration made the first ones)."""

    list_display = ["name", "colour", "description"]
    search_fields = ["name", "description"]


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin[Comment]):
    list_display = ["author", "conversation", "event_id", "resolved", "created_at"]
    list_filter = ["resolved", "labels"]
    search_fields = ["body", "author", "event_id"]
    raw_id_fields = ["conversation", "parent", "share"]
    readonly_fields = ["uid"]


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin[Verdict]):
    list_display = ["reviewer", "conversation", "outcome", "updated_at"]
    list_filter = ["outcome"]
    raw_id_fields = ["conversation", "share"]
