"""Site-wide policies: a strict Content-Security-Policy, login when required, and the
client's address behind proxies."""

import ipaddress
from collections.abc import Callable
from typing import Any

from axes.handlers.cache import AxesCacheHandler
from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.core.cache import BaseCache, caches
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase

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

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., HttpResponseBase],
        view_args: tuple[Any, ...],
        view_kwargs: dict[Any, Any],
    ) -> HttpResponseBase | None:
        match = request.resolver_match  # resolved before any process_view
        if not settings.EVENTVIEWER_REQUIRE_LOGIN or (match is not None and match.namespace == "admin"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)

    # The API's answer is JSON, not the redirect Django's returns.
    def handle_no_permission(  # type: ignore[override]
        self, request: HttpRequest, view_func: Callable[..., HttpResponseBase]
    ) -> HttpResponseBase:
        if request.path_info.startswith("/api/"):
            return JsonResponse({"error": "authentication required: log in first"}, status=401)
        return super().handle_no_permission(request, view_func)


def forwarded_client(remote_addr: str, forwarded_for: str, proxies: int) -> str:
    """The client's address behind ``proxies`` proxies that each append the address they
    were connected from to X-Forwarded-For (nginx's ``$proxy_add_x_forwarded_for``): the
    ``proxies``-th entry from the right. Entries left of it are the client's own to
    write, so never trusted; with fewer entries than proxies, or one that is not an
    address, the connecting address stands."""
    if proxies <= 0:
        return remote_addr
    entries = [e.strip() for e in forwarded_for.split(",")]
    if len(entries) < proxies:
        return remote_addr
    candidate = entries[-proxies]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote_addr


def client_address(request: HttpRequest) -> str:
    """The address the login lockout counts failures by (AXES_CLIENT_IP_CALLABLE)."""
    return forwarded_client(
        request.META.get("REMOTE_ADDR", ""),
        request.META.get("HTTP_X_FORWARDED_FOR", ""),
        settings.EVENTVIEWER_PROXY_COUNT,
    )


class FileLockouts(AxesCacheHandler):  # type: ignore[misc]  # django-axes ships no type hints: Any
    """django-axes' cache handler over the "lockouts" file cache (SQLite deployments: a
    login takes no write lock). That cache holds nothing else, so ``manage.py
    axes_reset`` without arguments ends every lockout by clearing it."""

    def __init__(self) -> None:
        pass  # no cache held: the "lockouts" alias is looked up each time (tests move it)

    @property
    def cache(self) -> BaseCache:
        return caches[settings.AXES_CACHE]

    def reset_attempts(
        self, *, ip_address: str | None = None, username: str | None = None, ip_or_username: bool = False
    ) -> int:
        if ip_address is None and username is None and not ip_or_username:
            self.cache.clear()
            return 0  # the cache cannot count what it held
        return int(super().reset_attempts(ip_address=ip_address, username=username, ip_or_username=ip_or_username))
