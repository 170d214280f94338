"""json-server 0.17's query rules, over a queryset of one space.

- `field=value`, repeated for OR (`userId=1&userId=2`); `id` and camelCase names as
  the JSON shows them, and dotted paths into JSON fields (`address.city`);
- `field_gte`, `field_lte`, `field_ne`, `field_like` (case-insensitive regex); repeated,
  any of the values (none of them for `_ne`); on a field that does not exist, nothing
  matches, as in json-server;
- `q`: full-text search, case-insensitive, in every value of the record as it is
  serialized (numbers and nested objects included);
- `_sort=a,b&_order=asc,desc` (ties keep id order; an unknown field sorts nothing);
- `_start`/`_end` and `_limit` without `_page`: a slice, negative positions counting
  from the end.
A plain filter on an unknown field is ignored, as json-server ignores it.
"""
import re

from django.db.models import JSONField, Q
from rest_framework.exceptions import ValidationError

RESERVED = {
    "_page", "_limit", "_per_page", "_sort", "_order", "_start", "_end", "q", "page", "page_size", "per_page",
    "cursor", "_embed", "_expand", "callback", "_",
}
SUFFIXES = (("_gte", "gte"), ("_lte", "lte"), ("_ne", "ne"), ("_like", "iregex"))


def field_map(serializer_class):
    """JSON name -> model field, e.g. {"id": "number", "userId": "user_number"}."""
    fields = serializer_class().fields
    return {name: (field.source or name) for name, field in fields.items()}


def _column(fields, model, name):
    """The ORM path of JSON name `name` (`address.city` -> `address__city`), or None."""
    head, _, rest = name.partition(".")
    column = fields.get(head)
    if column is None or column == "*":
        return None
    if not rest:
        return column
    try:
        is_json = isinstance(model._meta.get_field(column), JSONField)
    except Exception:
        is_json = False
    return column + "__" + rest.replace(".", "__") if is_json else None


def _any(column, lookup, values):
    condition = Q()
    for value in values:
        condition |= Q(**{f"{column}__{lookup}": value})
    return condition


def apply(queryset, params, serializer_class):
    fields = field_map(serializer_class)
    model = queryset.model
    for key, values in params.lists():
        if key in RESERVED:
            continue
        name, lookup = key, "in"
        for suffix, django_lookup in SUFFIXES:
            if key.endswith(suffix):
                name, lookup = key[: -len(suffix)], django_lookup
                break
        column = _column(fields, model, name)
        if column is None:
            if lookup != "in":
                return queryset.none()  # json-server: an undefined field never compares
            continue
        try:
            if lookup == "in":
                queryset = queryset.filter(**{f"{column}__in": values})
            elif lookup == "ne":
                queryset = queryset.exclude(**{f"{column}__in": values})
            elif lookup == "iregex":
                for value in values:
                    re.compile(value)
                queryset = queryset.filter(_any(column, lookup, values))
            else:
                queryset = queryset.filter(_any(column, lookup, values))
        except re.error:
            raise ValidationError({key: [f"{key}={values[0]!r} is not a valid regular expression."]})
        except (ValueError, TypeError):
            if lookup == "ne":
                continue  # a value of another type differs from every record
            return queryset.none()
    sort = params.get("_sort")
    if sort:
        orders = (params.get("_order") or "").split(",")
        keys = []
        for index, name in enumerate(sort.split(",")):
            column = _column(fields, model, name)
            if column is None:
                continue
            descending = index < len(orders) and orders[index].lower() == "desc"
            keys.append(("-" if descending else "") + column)
        queryset = queryset.order_by(*keys, "number")
    text = params.get("q")
    if text:
        text = text.lower()
        matching = [item.pk for item in queryset if _contains(serializer_class(item).data, text)]
        queryset = queryset.filter(pk__in=matching)
    return queryset


def _contains(value, text):
    """json-server's `deepQuery`: a truthy value, at any depth, whose text contains `text`."""
    if isinstance(value, dict):
        return any(_contains(item, text) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(_contains(item, text) for item in value)
    if not value:
        return False
    if isinstance(value, bool):
        return text in "true"
    return text in str(value).lower()


def _js_int(raw):
    """JavaScript's `parseInt(raw, 10)`: leading digits with a sign, or None (NaN)."""
    match = re.match(r"\s*([+-]?\d+)", raw or "")
    return int(match.group(1)) if match else None


def slice_without_page(items, params):
    """`_start`/`_end`/`_limit` when `_page` is absent, as lodash's `slice` takes them."""
    if "_page" in params:
        return items
    start = _js_int(params.get("_start")) or 0
    if params.get("_end"):
        end = _js_int(params.get("_end")) or 0
    elif params.get("_limit"):
        limit = _js_int(params.get("_limit"))
        end = start + limit if limit is not None else 0
    else:
        return items
    return items[start:end]
