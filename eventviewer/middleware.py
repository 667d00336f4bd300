"""Site-wide policies: a strict Content-Security-Policy, and login when required."""

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.http import HttpRequest, HttpResponse, JsonResponse

# No inline script or style anywhere: htmx and our own script load from /static/.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

Middleware = Callable[[HttpRequest], HttpResponse]


def content_security_policy(get_response: Middleware) -> Middleware:
    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = CSP
        return response

    return middleware


class LoginRequired(LoginRequiredMiddleware):
    """Django's LoginRequiredMiddleware (views marked ``login_not_required`` are public:
    logging in, share links), switched by EVENTVIEWER_REQUIRE_LOGIN. The API answers a
    JSON 401 instead of a redirect, and the admin asks for its own staff login."""

    def process_view(self, request, view_func, view_args, view_kwargs):
        if not settings.EVENTVIEWER_REQUIRE_LOGIN or request.resolver_match.namespace == "admin":
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)

    def handle_no_permission(self, request, view_func):
        if request.path_info.startswith("/api/"):
            return JsonResponse({"error": "authentication required: log in first"}, status=401)
        return super().handle_no_permission(request, view_func)
