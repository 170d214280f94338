"""The two paging conventions the tests read.

- json-server's header pagination: `?_page=3&_limit=10` answers the bare array of
  that page with `X-Total-Count` (the whole listing's size) and an RFC 8288 `Link`
  header with `first`, `prev`, `next` and `last`, absolute URLs as json-server 0.17
  sends them. A page past the end is an empty array.
- Django REST framework's own envelope, `PageNumberPagination`:
  `?page=2&page_size=10` answers `{"count", "next", "previous", "results"}`.
"""
from urllib.parse import urlencode

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination


class EnvelopePagination(PageNumberPagination):
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
