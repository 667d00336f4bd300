"""Site-wide pages: our own error pages (never Django's debug or resolver details) and
the favicon."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.template import loader
from django.templatetags.static import static
from django.urls import Resolver404
from django.views.decorators.http import require_safe

from eventviewer.models import ShareLink
from eventviewer.scope import Scope
from eventviewer.views import HtmxHttpRequest

ERRORS = {
    400: ("Bad request", "That request did not make sense."),
    403: ("Forbidden", "You are not allowed to do that."),
    404: ("Not found", "There is nothing at this address."),
}


def _error_page(request: HtmxHttpRequest, exception: Exception | None, status: int) -> HttpResponse:
    """The message is the exception's only when it is one of ours, written for the user
    (BadRequest, PermissionDenied, Http404 with a text); never the URL resolver's internals."""
    title, message = ERRORS[status]
    if exception is not None and not isinstance(exception, Resolver404) and exception.args:
        if isinstance(exception.args[0], str) and exception.args[0]:
            message = exception.args[0]
    context = {"status": status, "title": title, "message": message, "scope": _scope_of(request)}
    return render(request, "error.html", context, status=status)


def _scope_of(request: HtmxHttpRequest) -> Scope | None:
    """A reviewer's scope for errors under /s/<token>/: their way back is the shared view
    (when the link still works), never the list they cannot open."""
    parts = request.path_info.split("/")
    if len(parts) < 4 or parts[1] != "s":
        return None
    share = ShareLink.objects.select_related("conversation").filter(token=parts[2]).first()
    return Scope.shared(share) if share is not None and share.is_active else Scope(None, reviewer=True)


def bad_request(request: HtmxHttpRequest, exception: Exception) -> HttpResponse:
    return _error_page(request, exception, 400)


def permission_denied(request: HtmxHttpRequest, exception: Exception) -> HttpResponse:
    return _error_page(request, exception, 403)


def page_not_found(request: HtmxHttpRequest, exception: Exception) -> HttpResponse:
    return _error_page(request, exception, 404)


def server_error(request: HtmxHttpRequest) -> HttpResponse:
    # Nothing that could fail again: no context processors, no database.
    return HttpResponse(loader.get_template("500.html").render(), status=500)


@require_safe
@login_not_required
def favicon(request: HtmxHttpRequest) -> HttpResponse:
    return redirect(static("eventviewer/favicon.svg"), permanent=True)
