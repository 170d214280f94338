"""Endpoints that exist for Depot's middleware and error tests (see ../README.md).

State lives in this process (gunicorn runs one worker), keyed by a `key` the test
chooses, so tests running at the same time never share a counter.
"""
import secrets
import threading
from http import HTTPStatus

from django.http import HttpResponse
from rest_framework.decorators import api_view
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from . import idempotency

ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]

_lock = threading.Lock()
_flaky = {}
_auth = {}


def _key(request):
    key = request.query_params.get("key")
    if not key:
        raise ValidationError({"key": ["Pass ?key=<a name of your own> to keep your counters apart."]})
    return key


def _integer(request, name, default, low, high):
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        raise ValidationError({name: [f"{name} must be an integer from {low} to {high}."]})
    return value


@api_view(ALL_METHODS)
def flaky(request):
    """Fails the first `fail` calls for `key` with `status` (503) and `Retry-After`, then succeeds."""
    key = _key(request)
    fail = _integer(request, "fail", 1, 0, 1000)
    code = _integer(request, "status", 503, 400, 599)
    retry_after = request.query_params.get("retry_after", "1")
    with _lock:
        attempt = _flaky.get(key, 0) + 1
        _flaky[key] = attempt
    if attempt <= fail:
        headers = {} if retry_after == "none" else {"Retry-After": retry_after}
        body = {"detail": f"Temporarily unavailable: attempt {attempt} of {fail} failing.", "attempt": attempt}
        return Response(body, status=code, headers=headers)
    return Response({"key": key, "attempt": attempt, "method": request.method})


@api_view(["GET"])
def flaky_count(request):
    """How many calls `/flaky` received for `key`."""
    key = _key(request)
    with _lock:
        return Response({"key": key, "attempts": _flaky.get(key, 0)})


def _auth_state(key):
    return _auth.setdefault(key, {"token": None, "valid": False, "issued": 0, "accepted": 0, "rejected": 0})


@api_view(["POST"])
def auth_token(request):
    """Issues a new access token for `key`; earlier tokens for `key` stop working."""
    key = _key(request)
    with _lock:
        state = _auth_state(key)
        state["issued"] += 1
        token = f"{key}.{state['issued']}.{secrets.token_hex(8)}"
        state["token"], state["valid"] = token, True
    return Response(
        {"access_token": token, "token_type": "Bearer", "expires_in": 3600, "refresh_token": f"refresh.{key}"}
    )


@api_view(ALL_METHODS)
def auth_me(request):
    """200 with the token's owner when `Authorization: Bearer <latest token for key>`, else 401."""
    key = _key(request)
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    with _lock:
        state = _auth_state(key)
        ok = scheme.lower() == "bearer" and state["valid"] and token.strip() == state["token"]
        state["accepted" if ok else "rejected"] += 1
    if ok:
        return Response({"key": key, "token": token.strip(), "method": request.method, "user": {"id": 1, "name": "Ada Lovell"}})
    if header:
        challenge = 'Bearer realm="depot", error="invalid_token", error_description="The access token expired"'
        detail = "The access token is expired, revoked or unknown."
    else:
        challenge = 'Bearer realm="depot"'
        detail = "Authentication credentials were not provided."
    return Response({"detail": detail}, status=401, headers={"WWW-Authenticate": challenge})


@api_view(["POST"])
def auth_expire(request):
    """Makes the current token for `key` invalid, as if it had expired."""
    key = _key(request)
    with _lock:
        _auth_state(key)["valid"] = False
    return Response({"key": key, "expired": True})


@api_view(["GET"])
def auth_count(request):
    """Tokens issued, and requests accepted and rejected by /auth/me, for `key`."""
    key = _key(request)
    with _lock:
        state = _auth_state(key)
        return Response(
            {"key": key, "issued": state["issued"], "accepted": state["accepted"], "rejected": state["rejected"]}
        )


@api_view(ALL_METHODS)
def error(request, code):
    """Answers status `code` with a body in the shape `style` asks for."""
    if not 200 <= code <= 599:
        raise ValidationError({"status": ["status must be from 200 to 599."]})
    style = request.query_params.get("style", "detail")
    reason = HTTPStatus(code).phrase if code in HTTPStatus._value2member_map_ else "Status"
    text = f"{reason}: asked for {code}"
    headers = {}
    if "retry_after" in request.query_params:
        headers["Retry-After"] = request.query_params["retry_after"]
    if code == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="depot"'
    if style == "problem":
        body = {"type": f"https://depot.example/problems/{code}", "title": reason, "status": code, "detail": text, "instance": request.path}
        response = Response(body, status=code, headers=headers, content_type="application/problem+json")
        return response
    if style == "validation":
        body = {"title": ["This field is required."], "userId": ["A valid integer is required."]}
        return Response(body, status=code, headers=headers)
    if style in ("text", "empty"):
        response = HttpResponse(text if style == "text" else b"", status=code, content_type="text/plain; charset=utf-8")
        for name, value in headers.items():
            response[name] = value
        return response
    if style not in ("detail", "message", "error"):
        raise ValidationError({"style": ["style is one of detail, message, error, problem, validation, text, empty."]})
    return Response({style: text}, status=code, headers=headers)


@api_view(["GET"])
def idempotency_count(request):
    """What keyed writes to `space` did (see idempotency.counts); `settle=S` waits for those in flight."""
    space = request.query_params.get("space")
    if not space:
        raise ValidationError({"space": ["Pass ?space=<the space's name> (main for the root routes)."]})
    try:
        settle = float(request.query_params.get("settle", "0"))
    except ValueError:
        raise ValidationError({"settle": ["settle is a number of seconds."]})
    return Response({"space": space, **idempotency.counts(space, settle)})
