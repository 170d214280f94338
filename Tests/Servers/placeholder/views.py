"""Model viewsets for users, posts and comments, with json-server's behaviour.

`/posts` (and `/users`, `/comments`) page with headers when `_page` is given and
answer a bare array otherwise; `/drf/posts` (and the others) page with Django REST
framework's `{count, next, previous, results}` envelope. Both accept json-server's
filters. Everything also exists under `/s/<space>/`, a private copy of the data.
Writes honour `Idempotency-Key` (see idempotency.py). One record's `GET`, `PUT` and
`PATCH` answers carry a strong `ETag`, and its `PUT`, `PATCH` and `DELETE` honour
`If-Match` (see validators.py).
"""
from django.db.models import Max
from rest_framework import status, viewsets
from rest_framework.exceptions import APIException, NotFound
from rest_framework.response import Response

from . import filtering, idempotency, validators
from .models import Comment, Post, User
from .pagination import (
    EnvelopePagination,
    IdCursorPagination,
    grape_page,
    header_page,
    link_page,
    looping_page,
    v1_page,
)
from .seed import WRITE_LOCK, ensure_space
from .serializers import CommentSerializer, PostSerializer, UserSerializer

UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "A record with this id already exists."
    default_code = "conflict"


class Collection(viewsets.ModelViewSet):
    """One collection of one space, with json-server's listing and id rules."""

    model = None
    noun = "record"
    lookup_url_kwarg = "pk"
    pagination_class = None

    @property
    def space(self):
        return self.kwargs.get("space", "main")

    def dispatch(self, request, *args, **kwargs):
        space = kwargs.get("space", "main")
        ensure_space(space)
        if request.method not in UNSAFE:
            return super().dispatch(request, *args, **kwargs)
        key = idempotency.key_of(request)
        if key is not None:
            view = super().dispatch
            return idempotency.once(request, space, key, lambda: view(request, *args, **kwargs))
        with WRITE_LOCK:
            response = super().dispatch(request, *args, **kwargs)
        idempotency.hold(request)
        return response

    def get_queryset(self):
        return self.model.objects.filter(space=self.space)

    def get_object(self):
        raw = self.kwargs[self.lookup_url_kwarg]
        try:
            number = int(raw)
        except ValueError:
            number = None
        found = self.get_queryset().filter(number=number).first() if number is not None else None
        if found is None:
            raise NotFound(f"No {self.noun} with id {raw}.")
        return found

    def filtered(self, queryset, serializer_class):
        return filtering.apply(queryset, self.request.query_params, serializer_class)

    def listing(self, queryset, serializer_class):
        items = list(queryset)
        params = self.request.query_params
        if "_page" in params:
            page, headers = header_page(self.request, items)
            return Response(serializer_class(page, many=True).data, headers=headers)
        items = filtering.slice_without_page(items, params)
        return Response(serializer_class(items, many=True).data)

    def list(self, request, *args, **kwargs):
        return self.listing(self.filtered(self.get_queryset(), self.serializer_class), self.serializer_class)

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        number = serializer.validated_data.get("number")
        queryset = self.get_queryset()
        if number is None:
            # SQL's max over the (space, number) index: a space of thousands of posts stays fast.
            number = (queryset.aggregate(top=Max("number"))["top"] or 0) + 1
        elif queryset.filter(number=number).exists():
            raise Conflict(f"A {self.noun} with id {number} already exists.")
        serializer.save(space=self.space, number=number)
        location = self.request.build_absolute_uri(f"{self.request.path}/{number}")
        return Response(serializer.data, status=status.HTTP_201_CREATED, headers={"Location": location})

    def tag_of(self, instance):
        """The record's strong `ETag`, from its JSON as a `GET` serves it."""
        return validators.entity_tag(self.get_serializer(instance).data)

    def retrieve(self, request, *args, **kwargs):
        data = self.get_serializer(self.get_object()).data
        return Response(data, headers={"ETag": validators.entity_tag(data)})

    def update(self, request, *args, **kwargs):
        # PATCH comes here too (partial=True). Writes hold the write lock (see dispatch), so
        # nothing changes the record between the If-Match check and the write. The
        # condition is checked before the body is validated (RFC 9110 §13.2.1).
        validators.check(request, self.tag_of(self.get_object()), self.noun)
        response = super().update(request, *args, **kwargs)
        # The tag of the record as stored now, read back: the one a following GET gives.
        response["ETag"] = self.tag_of(self.get_object())
        return response

    def perform_update(self, serializer):
        # The id is the URL's, as in json-server: a body cannot move a record.
        serializer.save(number=serializer.instance.number)

    def destroy(self, request, *args, **kwargs):
        instance = self.get_object()
        validators.check(request, self.tag_of(instance), self.noun)
        instance.delete()
        return Response({}, status=status.HTTP_200_OK)


class EnvelopeCollection(Collection):
    """The same collection, paged with DRF's `PageNumberPagination` envelope."""

    pagination_class = EnvelopePagination

    def list(self, request, *args, **kwargs):
        queryset = self.filtered(self.get_queryset(), self.serializer_class)
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class PostViewSet(Collection):
    model = Post
    noun = "post"
    serializer_class = PostSerializer


class UserViewSet(Collection):
    model = User
    noun = "user"
    serializer_class = UserSerializer


class CommentViewSet(Collection):
    model = Comment
    noun = "comment"
    serializer_class = CommentSerializer


class EnvelopePostViewSet(EnvelopeCollection):
    model = Post
    noun = "post"
    serializer_class = PostSerializer


class EnvelopeUserViewSet(EnvelopeCollection):
    model = User
    noun = "user"
    serializer_class = UserSerializer


class EnvelopeCommentViewSet(EnvelopeCollection):
    model = Comment
    noun = "comment"
    serializer_class = CommentSerializer


class LinkPostViewSet(PostViewSet):
    """`/link/posts`: GitHub's paging, `page`/`per_page` and a `Link` header only."""

    def listing(self, queryset, serializer_class):
        page, headers = link_page(self.request, list(queryset))
        return Response(serializer_class(page, many=True).data, headers=headers)


class GrapePostViewSet(PostViewSet):
    """`/grape/posts`: Grape's paging, `page`/`per_page` and `X-Total`, `X-Next-Page`, …"""

    def listing(self, queryset, serializer_class):
        page, headers = grape_page(self.request, list(queryset))
        return Response(serializer_class(page, many=True).data, headers=headers)


class CursorPostViewSet(EnvelopeCollection):
    """`/cursor/posts`: DRF's `CursorPagination` by id, `cursor` and `page_size`."""

    model = Post
    noun = "post"
    serializer_class = PostSerializer
    pagination_class = IdCursorPagination


class V1PostViewSet(PostViewSet):
    """`/v1/posts`: json-server 1.x's envelope for `_page`/`_per_page`; the bare array without `_page`."""

    def listing(self, queryset, serializer_class):
        if "_page" not in self.request.query_params:
            return super().listing(queryset, serializer_class)
        envelope, page = v1_page(self.request, list(queryset))
        return Response({**envelope, "data": serializer_class(page, many=True).data})


class LoopPostViewSet(PostViewSet):
    """`/loop/posts`: a DRF-style envelope whose `next` is always page 2 (for loop detection)."""

    def listing(self, queryset, serializer_class):
        envelope, page = looping_page(self.request, list(queryset))
        return Response({**envelope, "results": serializer_class(page, many=True).data})
