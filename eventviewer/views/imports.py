"""The Import page: files sent from the browser are imported in the background, and a
page follows each upload to its result."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from eventviewer import tasks
from eventviewer.forms import UploadForm
from eventviewer.models import Instance, Upload
from eventviewer.views import HtmxHttpRequest, is_partial

HEADINGS = {"waiting": "Importing", "running": "Importing", "done": "Imported"}  # else "Import failed:"


@require_http_methods(["GET", "HEAD", "POST"])
@vary_on_headers("HX-Request")
def import_upload(request: HtmxHttpRequest) -> HttpResponse:
    if request.method != "POST":
        return render(request, "imports/import.html", {"form": UploadForm()})
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        template = "imports/import.html#form" if is_partial(request) else "imports/import.html"
        return render(request, template, {"form": form}, status=400)
    files = form.cleaned_data["files"]
    upload = Upload.objects.create(
        names=[f.name for f in files],
        created_by=request.user if request.user.is_authenticated else None,
        run=form.cleaned_data["run"],
    )
    upload.folder.mkdir(parents=True)
    for number, sent in enumerate(files):
        with open(upload.folder / upload.stored_name(number), "wb") as out:
            for chunk in sent.chunks():
                out.write(chunk)
    # The task may start (and, run inline, finish) before the id is saved: it needs none.
    result = tasks.import_upload.enqueue(str(upload.id))
    Upload.objects.filter(pk=upload.pk).update(task_id=str(result.id))
    if request.htmx:
        return HttpResponseClientRedirect(upload.get_absolute_url())
    return redirect(upload)


@require_safe
@vary_on_headers("HX-Request")
def import_progress(request: HtmxHttpRequest, upload_id: str) -> HttpResponse:
    upload = Upload.objects.filter(pk=upload_id).first()
    if upload is None:
        raise Http404("There is no such import.")
    state, progress = tasks.upload_state(upload)
    total = progress.get("events_total") if progress else None
    context = {
        "upload": upload,
        "state": state,
        "heading": HEADINGS.get(state, "Import failed:"),
        "progress": progress,
        "percent": min(100, progress["events"] * 100 // total) if progress and total else None,
        "runs": _runs_of(upload.results) if state == "done" else [],
        "nothing_new": state == "done" and not any(r["added"] for r in upload.results),
        "stopped": tasks.STOPPED,
    }
    if is_partial(request):
        return render(request, "imports/progress.html#status", context)
    return render(request, "imports/progress.html", context)


def _runs_of(results: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    """The runs an evaluation output's rows went into: (name, URL, instances imported)."""
    ids = [r["conversation_id"] for r in results]
    found: dict[tuple[str, str], int] = {}
    for start in range(0, len(ids), 500):
        rows = Instance.objects.filter(conversation__conversation_id__in=ids[start : start + 500])
        for name, slug in rows.values_list("run__name", "run__slug"):
            found[name, slug] = found.get((name, slug), 0) + 1
    return [(name, reverse("eventviewer:run", args=[slug]), n) for (name, slug), n in sorted(found.items())]
