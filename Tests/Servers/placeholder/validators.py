"""Strong `ETag`s on one record, and `If-Match` on its writes (RFC 9110 §8.8.3, §13.1.1).

Every successful `GET`, `PUT` and `PATCH` of one record (`/posts/{id}` and the same route
of every collection and paging style, under `/s/<space>/` too) carries

    ETag: "<sha1 hex of the record's JSON, keys sorted, no spaces>"

computed from the record as it is stored (after the write, for `PUT` and `PATCH`), so any
change to any field gives another tag, and the same record always the same one. Listings,
`POST` and `DELETE` answers carry none.

`PUT`, `PATCH` and `DELETE` of one record with `If-Match` run only when its value is `*` or
a list holding the record's current tag, compared strongly (`W/"…"` never matches);
otherwise they answer `412 {"detail": "…"}` and change nothing. The condition is evaluated
before the body is read: a stale tag with an invalid body is `412`, not `400`. A missing
record is `404` whatever `If-Match` says (RFC 9110 §13.2.1: preconditions are ignored when
the answer without them would not be 2xx). Without `If-Match` nothing changes.
"""
import hashlib
import json
import re

from rest_framework import status
from rest_framework.exceptions import APIException

HEADER = "If-Match"

# One entity-tag (RFC 9110 §8.8.3), weak or strong.
_ENTITY_TAG = re.compile(r'(W/)?"([^"]*)"')
# Optional white space and the list separators around members (RFC 9110 §5.6.1 allows
# empty members: `"a", , "b"`).
_SEPARATORS = " \t,"


class PreconditionFailed(APIException):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_detail = "The record changed since it was read."
    default_code = "precondition_failed"


def entity_tag(data):
    """The strong tag of a serialized record: `"` + SHA-1 of its canonical JSON + `"`."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return '"' + hashlib.sha1(canonical.encode("utf-8")).hexdigest() + '"'


def strong_tags(value):
    """The strong tags an `If-Match` value lists; None when it is not a list of entity-tags."""
    tags = []
    rest = value
    while True:
        rest = rest.lstrip(_SEPARATORS)
        if not rest:
            return tags
        match = _ENTITY_TAG.match(rest)
        if match is None:
            return None
        if match.group(1) is None:
            tags.append(match.group(0))
        rest = rest[match.end():].lstrip(" \t")
        if rest and not rest.startswith(","):
            return None


def check(request, current, noun="record"):
    """Raises `PreconditionFailed` when `request`'s `If-Match` does not name `current`.

    `current` is the record's tag now; without the header this does nothing.
    """
    value = request.headers.get(HEADER)
    if value is None or value.strip() == "*":
        return
    tags = strong_tags(value)
    if tags is not None and current in tags:
        return
    raise PreconditionFailed(
        f"The {noun} changed since it was read: If-Match {value.strip()} does not match "
        f"its current ETag {current}."
    )
