"""Site-wide policies: a strict Content-Security-Policy, and login when required."""

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse

# No inline script or style anywhere: htmx and our own script load from /static/.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

# Reachable without an account: logging in, static files, reviewers' share links,
# and the admin (which asks for a staff login itself).
PUBLIC_PREFIXES = ("/accounts/login/", "/static/", "/s/", "/admin/", "/favicon.ico")

Middleware = Callable[[HttpRequest], HttpResponse]


def content_security_policy(get_response: Middleware) -> Middleware:
    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = CSP
        return response

    return middleware


def login_required(get_response: Middleware) -> Middleware:
    def middleware(request: HttpRequest) -> HttpResponse:
        if (
            settings.EVENTVIEWER_REQUIRE_LOGIN
            and not request.user.is_authenticated
            and not request.path_info.startswith(PUBLIC_PREFIXES)
        ):
            if request.path_info.startswith("/api/"):
                return JsonResponse({"error": "authentication required: log in first"}, status=401)
            return redirect_to_login(request.get_full_path())
        return get_response(request)

    return middleware
