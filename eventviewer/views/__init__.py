"""Pages, one module per resource: conversations (list, branch, diagram, HEAD), events,
share links (creating them and what a reviewer sees), imports, and the error pages; with
two helpers of the conversation page: the branch list and the problem reasons."""

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """What every view receives: django-htmx's middleware adds ``htmx`` to each request."""

    htmx: HtmxDetails


def is_partial(request: HtmxHttpRequest) -> bool:
    """Whether to answer with only the part htmx swaps in: an htmx request, except htmx
    restoring a page missing from its history cache, which needs the whole page."""
    return bool(request.htmx) and not request.htmx.history_restore_request
