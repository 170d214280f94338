"""The paging conventions the tests read.

- json-server's header pagination: `?_page=3&_limit=10` answers the bare array of
  that page with `X-Total-Count` (the whole listing's size) and an RFC 8288 `Link`
  header with `first`, `prev`, `next` and `last`, absolute URLs as json-server 0.17
  sends them. A page past the end is an empty array.
- Django REST framework's own envelope, `PageNumberPagination`:
  `?page=2&page_size=10` answers `{"count", "next", "previous", "results"}`.
- GitHub's: `?page=2&per_page=30` answers the bare array with a `Link` header only
  (no total); the last page has no `rel="next"`.
- Grape's (grape-kaminari): `?page=2&per_page=25` answers the bare array with
  `X-Total`, `X-Total-Pages`, `X-Per-Page`, `X-Page`, `X-Next-Page` and `X-Prev-Page`
  (empty when there is none).
- DRF's `CursorPagination`: `?page_size=10`, then the `next` URL with an opaque
  `cursor`; answers `{"next", "previous", "results"}`.
- json-server 1.x's envelope: `?_page=2&_per_page=10` answers `{"first", "prev",
  "next", "last", "pages", "items", "data"}` with page numbers; a page past the end
  answers the last page, as json-server 1.x does.
"""
from urllib.parse import urlencode

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import CursorPagination, PageNumberPagination


class EnvelopePagination(PageNumberPagination):
    page_size = 10
    page_size_query_param = "page_size"
    max_page_size = 1000


class IdCursorPagination(CursorPagination):
    """DRF's cursor paging over the public id (`number`), `page_size` up to 1000."""

    ordering = "number"
    page_size = 10
    page_size_query_param = "page_size"
    max_page_size = 1000


def _positive(request, name, default):
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValidationError({name: [f"{name} must be a positive integer, got {raw!r}."]})
    return value


def header_page(request, items):
    """Slices `items` (a list) for `_page`/`_limit`; returns (page_items, headers)."""
    page = _positive(request, "_page", 1)
    limit = _positive(request, "_limit", 10)
    total = len(items)
    last = max(1, (total + limit - 1) // limit)
    start = (page - 1) * limit

    def url(number):
        pairs = [(k, v) for k, values in request.query_params.lists() if k != "_page" for v in values]
        query = urlencode([("_page", str(number))] + pairs)
        return request.build_absolute_uri(request.path) + "?" + query

    links = [f'<{url(1)}>; rel="first"']
    if page > 1:
        links.append(f'<{url(min(page - 1, last))}>; rel="prev"')
    if page < last:
        links.append(f'<{url(page + 1)}>; rel="next"')
    links.append(f'<{url(last)}>; rel="last"')
    headers = {
        "X-Total-Count": str(total),
        "Link": ", ".join(links),
        "Access-Control-Expose-Headers": "X-Total-Count, Link",
    }
    return items[start : start + limit], headers


def _page_url(request, name, number):
    """The absolute URL of this request with parameter `name` set to `number`, others kept."""
    pairs = [(k, v) for k, values in request.query_params.lists() if k != name for v in values]
    return request.build_absolute_uri(request.path) + "?" + urlencode([(name, str(number))] + pairs)


def _slice(request, items, page_name, size_name, default_size):
    """(page, size, last page, the page's items) for `page_name`/`size_name`."""
    page = _positive(request, page_name, 1)
    size = _positive(request, size_name, default_size)
    last = max(1, (len(items) + size - 1) // size)
    start = (page - 1) * size
    return page, size, last, items[start : start + size]


def link_page(request, items):
    """GitHub's paging: `page`/`per_page` (default 30), a `Link` header and nothing else."""
    page, _, last, page_items = _slice(request, items, "page", "per_page", 30)
    links = []
    if page < last:
        links.append(f'<{_page_url(request, "page", page + 1)}>; rel="next"')
        links.append(f'<{_page_url(request, "page", last)}>; rel="last"')
    if page > 1:
        links.append(f'<{_page_url(request, "page", 1)}>; rel="first"')
        links.append(f'<{_page_url(request, "page", min(page - 1, last))}>; rel="prev"')
    headers = {"Access-Control-Expose-Headers": "Link"}
    if links:
        headers["Link"] = ", ".join(links)
    return page_items, headers


def grape_page(request, items):
    """Grape's paging: `page`/`per_page` (default 25) and the `X-…` headers."""
    page, size, last, page_items = _slice(request, items, "page", "per_page", 25)
    headers = {
        "X-Total": str(len(items)),
        "X-Total-Pages": str(last),
        "X-Per-Page": str(size),
        "X-Page": str(page),
        "X-Next-Page": str(page + 1) if page < last else "",
        "X-Prev-Page": str(min(page - 1, last)) if page > 1 else "",
        "Access-Control-Expose-Headers": "X-Total, X-Total-Pages, X-Per-Page, X-Page, X-Next-Page, X-Prev-Page",
    }
    return page_items, headers


def v1_page(request, items):
    """json-server 1.x's envelope for `_page`/`_per_page` (default 10); past the end, the last page."""
    asked = _positive(request, "_page", 1)
    size = _positive(request, "_per_page", 10)
    pages = max(1, (len(items) + size - 1) // size)
    page = min(asked, pages)
    start = (page - 1) * size
    envelope = {
        "first": 1,
        "prev": page - 1 if page > 1 else None,
        "next": page + 1 if page < pages else None,
        "last": pages,
        "pages": pages,
        "items": len(items),
    }
    return envelope, items[start : start + size]


def looping_page(request, items):
    """A DRF-style envelope whose `next` always names page 2: a server bug clients must survive."""
    page, size, _, page_items = _slice(request, items, "page", "page_size", 10)
    envelope = {
        "count": len(items),
        "next": _page_url(request, "page", 2),
        "previous": _page_url(request, "page", page - 1) if page > 1 else None,
    }
    return envelope, page_items
