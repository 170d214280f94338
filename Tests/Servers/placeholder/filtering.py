"""json-server 0.17's query rules, over a queryset of one space.

- `field=value`, repeated for OR (`userId=1&userId=2`); `id` and camelCase names as
  the JSON shows them;
- `field_gte`, `field_lte`, `field_ne`, `field_like` (case-insensitive regex);
- `q`: full-text search in every text field;
- `_sort=a,b&_order=asc,desc`;
- `_start`/`_end` and `_limit` without `_page`: a slice.
Unknown parameters are ignored, as json-server ignores them.
"""
from django.db.models import Q
from rest_framework.exceptions import ValidationError

RESERVED = {"_page", "_limit", "_sort", "_order", "_start", "_end", "q", "page", "page_size", "_embed", "_expand"}


def field_map(serializer_class):
    """JSON name -> model field, e.g. {"id": "number", "userId": "user_number"}."""
    fields = serializer_class().fields
    return {name: (field.source or name) for name, field in fields.items()}


def _text_fields(model):
    return [f.name for f in model._meta.get_fields() if f.get_internal_type() in ("CharField", "TextField")]


def apply(queryset, params, serializer_class):
    fields = field_map(serializer_class)
    model = queryset.model
    for key, values in params.lists():
        if key in RESERVED:
            continue
        name, lookup = key, "in"
        for suffix, django_lookup in (("_gte", "gte"), ("_lte", "lte"), ("_ne", "ne"), ("_like", "iregex")):
            if key.endswith(suffix) and key[: -len(suffix)] in fields:
                name, lookup = key[: -len(suffix)], django_lookup
        column = fields.get(name)
        if column is None or column == "*":
            continue
        try:
            if lookup == "in":
                queryset = queryset.filter(**{f"{column}__in": values})
            elif lookup == "ne":
                queryset = queryset.exclude(**{f"{column}__in": values})
            else:
                queryset = queryset.filter(**{f"{column}__{lookup}": values[-1]})
        except (ValueError, TypeError):
            return queryset.none()
    text = params.get("q")
    if text:
        condition = Q()
        for column in _text_fields(model):
            if column != "space":
                condition |= Q(**{f"{column}__icontains": text})
        queryset = queryset.filter(condition)
    sort = params.get("_sort")
    if sort:
        orders = (params.get("_order") or "").split(",")
        keys = []
        for index, name in enumerate(sort.split(",")):
            column = fields.get(name.strip())
            if column is None:
                raise ValidationError({"_sort": [f"unknown field {name!r}"]})
            descending = index < len(orders) and orders[index].strip().lower() == "desc"
            keys.append(("-" if descending else "") + column)
        queryset = queryset.order_by(*keys)
    return queryset


def slice_without_page(items, params):
    """`_start`/`_end`/`_limit` when `_page` is absent."""
    if "_page" in params:
        return items

    def integer(name):
        raw = params.get(name)
        if raw is None:
            return None
        try:
            return max(0, int(raw))
        except ValueError:
            raise ValidationError({name: [f"{name} must be an integer, got {raw!r}."]})

    start, end, limit = integer("_start"), integer("_end"), integer("_limit")
    start = start or 0
    if end is None and limit is not None:
        end = start + limit
    return items[start:end]
