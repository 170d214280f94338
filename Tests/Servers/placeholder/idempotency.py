"""`Idempotency-Key` on the collections' writes (draft-ietf-httpapi-idempotency-key-header).

A `POST`, `PUT`, `PATCH` or `DELETE` with `Idempotency-Key: K` is applied once per
(space, K). The first request runs; when it succeeds (2xx) its answer is stored in the
database together with the write, in one transaction. A later request with the same key:

- and the same method, path (query included) and body gets the stored answer again
  (status, headers, body) plus `Idempotent-Replayed: true`, and changes nothing;
- with another method, path or body is refused: `422` (application/problem+json);
- while the first is still being processed: `409` (application/problem+json).

A refused write (4xx) applied nothing and is not stored: the key may be sent again.
The key is a plain token or a Structured Fields string (`"K"`, as the draft writes it);
an empty key or one over 255 characters is `400`.

`X-Test-Delay: S` (seconds, at most 10) holds the answer to a write for S seconds after
it is applied, its key still in flight, so that a test can send the same key meanwhile.

Per space, the process counts what happened to keyed writes (`counts`, served by
`GET /idempotency/count?space=S`): applied (first with its key, 2xx), replayed (the key was
applied before: the stored answer again), conflicts (409, in flight) and mismatches (422).
"""
import hashlib
import threading
import time

from django.db import transaction
from django.http import HttpResponse, JsonResponse

from .models import IdempotencyRecord
from .seed import WRITE_LOCK

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
MAX_DELAY = 10.0
PROBLEMS = "https://depot.example/problems/"

# Keys whose first request is being processed, as (space, key). gunicorn runs one worker.
_in_flight = set()
_in_flight_lock = threading.Lock()
# Notified whenever a key leaves `_in_flight`.
_settled = threading.Condition(_in_flight_lock)
# Per space: {"applied", "replayed", "conflicts", "mismatches"}, under `_in_flight_lock`.
_counts = {}
COUNTED = ("applied", "replayed", "conflicts", "mismatches")
MAX_SETTLE = 30.0


def _count(space, outcome):
    with _in_flight_lock:
        tally = _counts.setdefault(space, dict.fromkeys(COUNTED, 0))
        tally[outcome] += 1


def counts(space, settle=0.0):
    """What keyed writes to `space` did so far, and how many are still being processed.

    With `settle` > 0, first waits (at most `settle` seconds, at most 30) until no keyed
    write to `space` is being processed.
    """
    with _settled:
        _settled.wait_for(
            lambda: not any(slot[0] == space for slot in _in_flight), timeout=min(max(settle, 0.0), MAX_SETTLE)
        )
        tally = dict(_counts.get(space) or dict.fromkeys(COUNTED, 0))
        tally["outstanding"] = sum(1 for slot in _in_flight if slot[0] == space)
    return tally


def key_of(request):
    """The request's idempotency key, unquoted; None without the header."""
    raw = request.headers.get(HEADER)
    if raw is None:
        return None
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return value


def problem(request, status, slug, title, detail):
    body = {"type": PROBLEMS + slug, "title": title, "status": status, "detail": detail, "instance": request.path}
    return JsonResponse(body, status=status, content_type="application/problem+json")


def hold(request):
    """Sleeps as long as `X-Test-Delay` asks (at most 10 s)."""
    try:
        seconds = float(request.headers.get("X-Test-Delay", "0"))
    except ValueError:
        seconds = 0.0
    if seconds > 0:
        time.sleep(min(seconds, MAX_DELAY))


def fingerprint(request):
    digest = hashlib.sha256()
    for part in (request.method.encode(), request.get_full_path().encode(), request.body):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def replay(record):
    response = HttpResponse(bytes(record.body), status=record.status)
    for name, value in record.headers:
        response[name] = value
    response[REPLAYED] = "true"
    return response


def once(request, space, key, apply):
    """Runs `apply()` (the view, under the write lock) once for (`space`, `key`)."""
    if not key or len(key) > MAX_KEY_LENGTH:
        return problem(
            request, 400, "idempotency-key-invalid", "Idempotency-Key is invalid",
            f"An Idempotency-Key is 1 to {MAX_KEY_LENGTH} characters.",
        )
    sent = fingerprint(request)
    slot = (space, key)
    with _in_flight_lock:
        if slot in _in_flight:
            _counts.setdefault(space, dict.fromkeys(COUNTED, 0))["conflicts"] += 1
            return problem(
                request, 409, "idempotency-key-in-flight", "A request is outstanding for this Idempotency-Key",
                f"A request with Idempotency-Key {key!r} is still being processed; retry later.",
            )
        _in_flight.add(slot)
    try:
        with WRITE_LOCK:
            record = IdempotencyRecord.objects.filter(space=space, key=key).first()
            if record is not None:
                if record.fingerprint != sent:
                    _count(space, "mismatches")
                    return problem(
                        request, 422, "idempotency-key-reused", "Idempotency-Key is already used",
                        f"Idempotency-Key {key!r} was used for {record.method} {record.path} with another "
                        "payload; a key must not be reused across different payloads.",
                    )
                _count(space, "replayed")
                return replay(record)
            with transaction.atomic():
                response = apply()
                if 200 <= response.status_code < 300:
                    if hasattr(response, "render"):
                        response.render()
                    headers = [(name, value) for name, value in response.items() if name.lower() != "content-length"]
                    IdempotencyRecord.objects.create(
                        space=space, key=key, fingerprint=sent, method=request.method,
                        path=request.get_full_path(), status=response.status_code, headers=headers,
                        body=bytes(response.content),
                    )
                    _count(space, "applied")
        hold(request)
        return response
    finally:
        with _settled:
            _in_flight.discard(slot)
            _settled.notify_all()
