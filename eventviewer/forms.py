from __future__ import annotations

import re
from datetime import timedelta

from django import forms
from django.conf import settings
from django.utils import timezone

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class EventIdField(forms.CharField):
    """An SDK event id: any string up to 255 characters without control characters."""

    def __init__(self, **kwargs):
        super().__init__(max_length=255, required=False, strip=False, **kwargs)

    def validate(self, value: str) -> None:
        super().validate(value)
        if _CONTROL.search(value):
            raise forms.ValidationError("contains control characters")


class ConversationListForm(forms.Form):
    SORTS = {
        "imported": "imported_at",
        "title": "title",
        "status": "execution_status",
        "events": "event_count",
        "branches": "leaf_count",
        "pending": "pending_count",
        "mismatched": "mismatch_count",
    }
    q = forms.CharField(max_length=200, required=False)
    sort = forms.ChoiceField(choices=[(k, k) for k in SORTS], required=False)
    dir = forms.ChoiceField(choices=[("asc", "asc"), ("desc", "desc")], required=False)
    page = forms.IntegerField(min_value=1, required=False)

    def ordering(self) -> list[str]:
        sort = self.cleaned_data.get("sort") or "imported"
        default_dir = "asc" if sort == "title" else "desc"
        prefix = "-" if (self.cleaned_data.get("dir") or default_dir) == "desc" else ""
        return [prefix + self.SORTS[sort], "-id"]


class PathForm(forms.Form):
    """Which branch to show (``leaf``) and where on it (``at``, ``before``, ``after``)."""

    leaf = EventIdField()
    at = EventIdField()
    before = EventIdField()
    after = EventIdField()

    def clean(self):
        data = super().clean()
        if sum(1 for k in ("at", "before", "after") if data.get(k)) > 1:
            raise forms.ValidationError("give at most one of at, before and after")
        return data


class EventForm(forms.Form):
    leaf = EventIdField()


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
        return self.cleaned_data["leaf"]


class ShareForm(forms.Form):
    EXPIRY = {"never": None, "1d": timedelta(days=1), "7d": timedelta(days=7), "30d": timedelta(days=30)}
    leaf = EventIdField()
    focus = EventIdField()
    expires = forms.ChoiceField(
        choices=[("never", "never"), ("1d", "in a day"), ("7d", "in a week"), ("30d", "in 30 days")],
        required=False,
    )
    note = forms.CharField(max_length=500, required=False)

    def expires_at(self):
        delta = self.EXPIRY[self.cleaned_data.get("expires") or "never"]
        return timezone.now() + delta if delta else None


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": ".zip,.json,.jsonl"}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
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
    files = MultipleFileField(label="Files")
