"""The Import page: upload conversation files from the browser."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from eventviewer.forms import UploadForm
from eventviewer.imports.importer import ImportFailed, import_paths


@require_http_methods(["GET", "HEAD", "POST"])
def import_upload(request: HttpRequest) -> HttpResponse:
    form = UploadForm(request.POST, request.FILES) if request.method == "POST" else UploadForm()
    problems: list[str] = []
    if request.method == "POST" and form.is_valid():
        with tempfile.TemporaryDirectory(prefix="eventviewer-upload-") as tmp:
            paths = []
            for number, upload in enumerate(form.cleaned_data["files"]):
                suffix = Path(upload.name).suffix.lower()
                target = Path(tmp) / f"upload-{number}{suffix}"
                with open(target, "wb") as out:
                    for chunk in upload.chunks():
                        out.write(chunk)
                paths.append((target, upload.name))
            try:
                results = import_paths(paths)
            except ImportFailed as e:
                problems = e.problems
            else:
                for result in results:
                    verb = "Imported" if result.created else "Updated"
                    messages.success(request, f"{verb} {result.conversation} ({result.added} new events).")
                if len(results) == 1:
                    return redirect(results[0].conversation.get_absolute_url())
                return redirect("eventviewer:conversation-list")
    status = 400 if request.method == "POST" else 200
    return render(request, "conversations/import.html", {"form": form, "problems": problems}, status=status)
