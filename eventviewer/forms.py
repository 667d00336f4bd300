from __future__ import annotations

import math
import re
from datetime import datetime, timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db.models import F, OrderBy
from django.utils import timezone

from eventviewer.models import Label
from eventviewer.trajectory import patterns, runs
from eventviewer.trajectory.failures import CODES

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class EventIdField(forms.CharField):
    """An SDK event id: any string up to 255 characters without control characters."""

    def __init__(self, max_length: int = 255, **kwargs: Any) -> None:
        super().__init__(max_length=max_length, required=False, strip=False, **kwargs)

    def validate(self, value: str) -> None:
        super().validate(value)
        if _CONTROL.search(value):
            raise forms.ValidationError("contains control characters")


class ViewField(forms.ChoiceField):
    """``view``: how a page reads a branch, the whole of it (``full``, the default, cleaned
    to "") or what the model was sent (``model``); every link of the page keeps it (``Scope``)."""

    def __init__(self) -> None:
        super().__init__(choices=[("full", "full"), ("model", "model")], required=False)

    def clean(self, value: Any) -> str:
        view = super().clean(value)
        return "" if view == "full" else view


class SlugsField(forms.Field):
    """Several slugs from repeated parameters (``?run=a&run=b``), each checked, at most ``most``."""

    widget = forms.MultipleHiddenInput

    def __init__(self, most: int = 20, what: str = "runs", **kwargs: Any) -> None:
        super().__init__(required=False, **kwargs)
        self.most, self.what = most, what

    def to_python(self, value: Any) -> list[str]:
        # Each value may itself be a list: ``?runs=a,b,c`` as well as ``?runs=a&runs=b``.
        found = [s for v in (value or []) for s in v.split(",") if s]
        if len(found) > self.most:
            raise forms.ValidationError(f"at most {self.most} {self.what}")
        for slug in found:
            if len(slug) > 200 or not re.fullmatch(r"[-a-zA-Z0-9_]+", slug):
                raise forms.ValidationError(f"{slug[:50]!r} is not a run's slug")
        return list(dict.fromkeys(found))


class SortedForm(forms.Form):
    """A sortable table's query: ``sort`` one of SORTS' keys (each naming its column),
    ``dir`` the order; a column in ASCENDING reads A to Z first, any other largest first.
    Rows without the figure come last either way; TIEBREAK orders equal ones."""

    SORTS: dict[str, str] = {}
    DEFAULT_SORT = ""
    ASCENDING: tuple[str, ...] = ()
    TIEBREAK = F("id").desc()

    dir = forms.ChoiceField(choices=[("asc", "asc"), ("desc", "desc")], required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["sort"] = forms.ChoiceField(choices=[(k, k) for k in self.SORTS], required=False)

    def sorted_by(self) -> tuple[str, str]:
        """(the column, "asc" or "desc")."""
        sort = self.cleaned_data.get("sort") or self.DEFAULT_SORT
        return sort, self.cleaned_data.get("dir") or ("asc" if sort in self.ASCENDING else "desc")

    def ordering(self) -> list[OrderBy]:
        sort, direction = self.sorted_by()
        column = F(self.SORTS[sort])
        first = column.desc(nulls_last=True) if direction == "desc" else column.asc(nulls_last=True)
        return [first, self.TIEBREAK]


# The review columns' sorts, each annotated by views.comments.with_review_counts.
REVIEW_SORTS = {"comments": "comment_open", "labels": "label_count", "verdicts": "verdict_count"}


class ReviewFilters(forms.Form):
    """The review filters of a table of conversations (the list, a run's instances): a label
    on the conversation or one of its comments; a verdict given (none: no verdict yet);
    comment threads open, any or none."""

    VERDICTS = [("", "any"), ("pass", "pass"), ("fail", "fail"), ("unsure", "unsure"), ("none", "none")]
    COMMENTS = [("", "any or none"), ("open", "open"), ("any", "any"), ("none", "none")]
    label = forms.CharField(max_length=100, required=False)
    verdict = forms.ChoiceField(choices=VERDICTS, required=False)
    comments = forms.ChoiceField(choices=COMMENTS, required=False)
    REVIEW_FILTERS = ("label", "verdict", "comments")

    def clean_label(self) -> str:
        name: str = self.cleaned_data["label"].strip()
        if name and not Label.objects.filter(name=name).exists():
            raise forms.ValidationError(f"there is no label {name!r}")
        return name


class ConversationListForm(ReviewFilters, SortedForm):
    DEFAULT_SORT = "imported"
    ASCENDING = ("title", "run")
    SORTS = {
        "imported": "imported_at",
        "title": "title",
        "status": "listed_status",  # annotated: Conversation.shown_status
        "events": "event_count",
        "branches": "leaf_count",
        "pending": "pending_count",
        "mismatched": "mismatch_count",
        "failures": "failure_count",
        "tokens": "tokens",  # annotated: prompt + completion
        "cost": "cost",
        "duration": "duration",
        "started": "listed_started",  # annotated: the first event's timestamp
        "run": "instance__run__name",  # conversations outside a run last
        **REVIEW_SORTS,
    }
    q = forms.CharField(max_length=200, required=False)
    status = forms.CharField(max_length=40, required=False)
    model = forms.CharField(max_length=200, required=False)
    agent = forms.CharField(max_length=100, required=False)
    problems = forms.BooleanField(required=False)  # pending or mismatched on HEAD's branch
    failures = forms.BooleanField(required=False)  # an event recording a failure, on any branch
    # "from"/"to" are Python keywords: the fields take their names in ``add_prefix``.
    imported_from = forms.DateField(required=False)
    imported_to = forms.DateField(required=False)
    page = forms.IntegerField(min_value=1, required=False)
    run = SlugsField()  # only these evaluation runs' instances
    outcome = forms.ChoiceField(choices=[("", "any"), *((k, k) for k in runs.OUTCOMES)], required=False)  # theirs

    def add_prefix(self, field_name: str) -> str:
        return {"imported_from": "from", "imported_to": "to"}.get(field_name, field_name)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        start, end = data.get("imported_from"), data.get("imported_to")
        if start and end and start > end:
            raise forms.ValidationError("from must not be after to")
        return data


class ConversationExportForm(ConversationListForm):
    """The list's conversations, its filters and order, as JSON lines: ``format`` summary,
    messages (HEAD's branch as the model's messages) or events (verbatim)."""

    format = forms.ChoiceField(choices=[(f, f) for f in ("summary", "messages", "events")])


class QueueForm(forms.Form):
    """A branch page walked in a review queue: ``queue`` is the list's query string, checked
    by the list's own form (views.queue); ``reviewed`` walks the conversations already given
    a verdict too; ``blind`` hides the others' verdicts and labels until one's own."""

    queue = forms.CharField(max_length=2000, required=False, strip=False)
    reviewed = forms.BooleanField(required=False)
    blind = forms.BooleanField(required=False)


class PathForm(forms.Form):
    """Which branch to show (``leaf``), where on it (``at``, ``before``, ``after``), and
    as what (``view``: the whole branch, or what the model was sent)."""

    leaf = EventIdField()
    at = EventIdField()
    before = EventIdField()
    after = EventIdField()
    view = ViewField()
    problem = forms.ChoiceField(choices=[(code, code) for code in CODES], required=False)  # the list of one kind
    hl = forms.CharField(max_length=200, required=False)  # words a search marks in the cards (app.js)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if sum(1 for k in ("at", "before", "after") if data.get(k)) > 1:
            raise forms.ValidationError("give at most one of at, before and after")
        return data


class BranchListForm(forms.Form):
    """The branch list beside the diagram: ``bq`` filters it, ``bsort``/``bdir`` order it,
    ``bpage`` pages through it."""

    SORTS = ("recent", "label", "fork", "length", "outcome", "problems")
    bq = forms.CharField(max_length=200, required=False)
    bsort = forms.ChoiceField(choices=[(k, k) for k in SORTS], required=False)
    bdir = forms.ChoiceField(choices=[("asc", "asc"), ("desc", "desc")], required=False)
    bpage = forms.IntegerField(min_value=1, required=False)


class LiveForm(forms.Form):
    """A conversation page asking what changed: the version it holds (``v``), the leaf
    its URL names (none: it follows HEAD), the leaf it shows and its last turn drawn
    (sent only when it shows the branch's end)."""

    v = forms.CharField(max_length=80, required=False)
    leaf = EventIdField()
    shown = EventIdField()
    turn = forms.IntegerField(min_value=0, required=False)
    view = ViewField()


class EventForm(forms.Form):
    leaf = EventIdField()
    view = ViewField()


class PathPageForm(EventForm):
    """A page of a branch for the path API: ``limit`` events from position ``offset``."""

    offset = forms.IntegerField(min_value=0, required=False)
    limit = forms.IntegerField(min_value=1, required=False)

    def clean_limit(self) -> int:
        limit = self.cleaned_data["limit"] or settings.EVENTVIEWER_API_PATH_LIMIT
        if limit > settings.EVENTVIEWER_API_PATH_MAX_LIMIT:
            raise forms.ValidationError(f"at most {settings.EVENTVIEWER_API_PATH_MAX_LIMIT:,}")
        return limit


class HeadForm(forms.Form):
    leaf = EventIdField()

    def clean_leaf(self) -> str:
        if not self.cleaned_data["leaf"]:
            raise forms.ValidationError("name the event to make HEAD")
        value: str = self.cleaned_data["leaf"]
        return value


class ShareForm(forms.Form):
    EXPIRY = {"never": None, "1d": timedelta(days=1), "7d": timedelta(days=7), "30d": timedelta(days=30)}
    DEFAULT_EXPIRY = "7d"
    leaf = EventIdField(widget=forms.HiddenInput)
    focus = EventIdField(widget=forms.TextInput(attrs={"placeholder": "event id", "data-focus-input": ""}))
    expires = forms.ChoiceField(
        choices=[("1d", "in a day"), ("7d", "in a week"), ("30d", "in 30 days"), ("never", "never")],
        required=False,
        initial=DEFAULT_EXPIRY,
    )
    note = forms.CharField(
        max_length=500, required=False, widget=forms.TextInput(attrs={"placeholder": "What should they look at?"})
    )
    can_comment = forms.BooleanField(required=False, label="the reviewer may comment")

    def expires_at(self) -> datetime | None:
        delta = self.EXPIRY[self.cleaned_data.get("expires") or self.DEFAULT_EXPIRY]
        return timezone.now() + delta if delta else None


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": ".zip,.json,.jsonl"}))
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile[Any]]:
        single = super().clean
        files = [single(d, initial) for d in data] if isinstance(data, (list, tuple)) else [single(data, initial)]
        if not files:
            raise forms.ValidationError("Choose at least one file to import.")
        for f in files:
            if f.size > settings.EVENTVIEWER_MAX_UPLOAD_BYTES:
                raise forms.ValidationError(
                    f"{f.name} is {f.size:,} bytes, over the limit of "
                    f"{settings.EVENTVIEWER_MAX_UPLOAD_BYTES:,} (EVENTVIEWER_MAX_UPLOAD_BYTES)"
                )
            if not f.name.lower().endswith((".zip", ".json", ".jsonl")):
                raise forms.ValidationError(
                    f"{f.name}: upload a .zip of conversation folders, or a .json or .jsonl file"
                )
        return files


class UploadForm(forms.Form):
    # Not Form.files: the form's metaclass moves a field out of the class, into base_fields.
    files = MultipleFileField(label="Files")  # type: ignore[assignment]
    # The run an evaluation output's rows import into; without it, the file's name.
    run = forms.CharField(max_length=200, required=False, strip=True)


class FilesForm(forms.Form):
    """A branch's Files tab: which branch, and which page of its edits."""

    leaf = EventIdField()
    page = forms.IntegerField(min_value=1, required=False)
    view = ViewField()


class FileDiffForm(forms.Form):
    """One file change's whole diff, as a download: the result that recorded it, and the file."""

    event = EventIdField()
    file = forms.CharField(max_length=4096, strip=False)

    def clean_event(self) -> str:
        if not self.cleaned_data["event"]:
            raise forms.ValidationError("name the result that recorded the change: event=<event-id>")
        value: str = self.cleaned_data["event"]
        return value


class CompareForm(forms.Form):
    """The two branches to compare, each named by its leaf: ``<event-id>`` in the
    conversation at hand or ``<conversation-id>:<event-id>`` (one missing: pick it in the
    diagram); and which page of the comparison."""

    a = EventIdField(max_length=300)
    b = EventIdField(max_length=300)
    page = forms.IntegerField(min_value=1, required=False)
    view = ViewField()


class RawForm(forms.Form):
    """``?raw=1``: the owner asks for base_state.json as imported, secrets and all."""

    # empty_value may be any value (Django's docs); the stubs allow only str or None.
    raw = forms.TypedChoiceField(choices=[("", ""), ("1", "1")], coerce=bool, empty_value=False, required=False)  # type: ignore[arg-type]


class ExportForm(forms.Form):
    FORMATS = ("events", "messages", "markdown")
    leaf = EventIdField()
    format = forms.ChoiceField(choices=[(f, f) for f in FORMATS])
    view = ViewField()


class RangeField(forms.CharField):
    """``<low>:<high>``, a chart bar's range: low <= value < high."""

    def __init__(self) -> None:
        super().__init__(max_length=60, required=False)

    # A range, where CharField's to_python gives a str.
    def to_python(self, value: str | None) -> tuple[float, float] | None:  # type: ignore[override]
        text = super().to_python(value)
        if not text:
            return None
        low, colon, high = text.partition(":")
        try:
            bounds = (float(low), float(high))
        except ValueError:
            raise forms.ValidationError("give a range as <low>:<high>, two numbers") from None
        if not colon or not all(math.isfinite(b) for b in bounds) or bounds[0] > bounds[1]:
            raise forms.ValidationError("give a range as <low>:<high>, low not above high")
        return bounds


class RunForm(ReviewFilters, SortedForm):
    """A run's instances: ``q`` filters by instance id, ``outcome`` by outcome, ``pattern``
    by failure pattern, ``pending=1`` to those with pending or mismatched results, and by
    reviews as the list does (ReviewFilters); ``sort`` and ``dir`` order them, ``page`` pages them."""

    DEFAULT_SORT = "instance"
    ASCENDING = ("instance", "outcome", "failure")
    TIEBREAK = F("instance_id").asc()
    SORTS = {
        "instance": "instance_id",
        "outcome": "outcome",
        "problems": "problems",  # annotated: pending + mismatched
        "failures": "failures",
        "turns": "turns",
        "tokens": "tokens",  # annotated: prompt + completion
        "cost": "conversation__cost",
        "duration": "conversation__duration",
        "failure": "first_failure_kind",
        **REVIEW_SORTS,
    }
    q = forms.CharField(max_length=200, required=False)
    outcome = forms.ChoiceField(choices=[(k, k) for k in runs.OUTCOMES], required=False)
    pattern = forms.CharField(max_length=patterns.SIGNATURE_CHARS, required=False, strip=False)
    pending = forms.BooleanField(required=False)
    turns = RangeField()
    cost = RangeField()
    duration = RangeField()
    page = forms.IntegerField(min_value=1, required=False)


class RunReviewsForm(forms.Form):
    """A run's reviews as a download: ``format`` jsonl or csv (as ``manage.py export_reviews``)."""

    format = forms.ChoiceField(choices=[("jsonl", "jsonl"), ("csv", "csv")])


class RunExportForm(forms.Form):
    """A run's export: ``format`` summary (the instance's fields), messages (its HEAD branch
    as the model's messages) or events (the branch's events verbatim)."""

    format = forms.ChoiceField(choices=[(f, f) for f in ("summary", "messages", "events")])


class RunCompareForm(forms.Form):
    """Two runs (``a`` and ``b``, by slug) over the same instances; ``change`` filters the
    table to one change (fixed, broken, ...), ``page`` pages it."""

    a = forms.SlugField(max_length=200)
    b = forms.SlugField(max_length=200)
    change = forms.ChoiceField(choices=[(c, c) for c in runs.CHANGES], required=False)
    page = forms.IntegerField(min_value=1, required=False)


class RunsCompareForm(forms.Form):
    """Several runs side by side (``runs=a,b,c``, by slug, 2 to RUNS_COMPARED), their
    instances the most disagreed on first; ``page`` pages the table."""

    RUNS_COMPARED = 12  # columns a table can show at 1400 px

    runs = SlugsField(most=RUNS_COMPARED)
    page = forms.IntegerField(min_value=1, required=False)

    def clean_runs(self) -> list[str]:
        if len(self.cleaned_data["runs"]) < 2:
            raise forms.ValidationError("name two runs or more: runs=<slug>,<slug>")
        value: list[str] = self.cleaned_data["runs"]
        return value


class SearchForm(forms.Form):
    """A search inside a conversation: the query (``q``), and the filters: an event kind,
    a tool, failures only (``problems=1``), the branch of ``leaf`` only (``branch=this``)."""

    q = forms.CharField(max_length=200, required=False, strip=False)
    kind = forms.CharField(max_length=100, required=False)
    tool = forms.CharField(max_length=255, required=False)
    problems = forms.BooleanField(required=False)
    leaf = EventIdField()
    branch = forms.ChoiceField(choices=[("", "all"), ("this", "this")], required=False)
    page = forms.IntegerField(min_value=1, required=False)
    view = ViewField()

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if data.get("branch") == "this" and not data.get("leaf"):
            raise forms.ValidationError("branch=this needs the branch: give leaf=<event-id>")
        return data
