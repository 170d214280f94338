"""json-server 0.17's nested routes: `GET/POST /users/<id>/posts`, `GET/POST /posts/<id>/comments`.

`GET /users/1/posts?…` is `GET /posts?userId=1&…`: every filter, `q`, `_sort`, slicing
and `_page`/`_limit` header paging apply, and the route's `userId` replaces any
`userId` in the query. The parent need not exist (`/users/99/posts` is `[]`).
`POST /users/1/posts` stores a post with `userId` 1, whatever the body says, and
answers 201 with `Location: …/posts/<new id>`.

On these nested listings, `_embed=comments` adds each post's comments and
`_expand=user` its user; on comments, `_expand=post` adds the post.
"""
from rest_framework.exceptions import ValidationError

from . import filtering, views
from .models import Comment, Post, User
from .serializers import CommentSerializer, PostSerializer, UserSerializer

# child model -> {relation name: (model, serializer, foreign key column on the child or the other side)}
EMBEDS = {Post: {"comments": (Comment, CommentSerializer, "post_number")}}
EXPANDS = {
    Post: {"user": (User, UserSerializer, "user_number")},
    Comment: {"post": (Post, PostSerializer, "post_number")},
}


def relate(space, model, objects, data, params):
    """Adds `_embed` children and `_expand` parents to the serialized `data` of `objects`."""
    for name in params.getlist("_embed"):
        child, serializer, key = EMBEDS.get(model, {}).get(name, (None, None, None))
        groups = {}
        if child is not None:
            numbers = [item.number for item in objects]
            for row in child.objects.filter(space=space, **{f"{key}__in": numbers}).order_by("number"):
                groups.setdefault(getattr(row, key), []).append(serializer(row).data)
        for item, entry in zip(objects, data):
            entry[name] = groups.get(item.number, [])
    for name in params.getlist("_expand"):
        relation = EXPANDS.get(model, {}).get(name)
        if relation is None:
            continue
        parent, serializer, key = relation
        wanted = {getattr(item, key) for item in objects}
        found = {row.number: serializer(row).data for row in parent.objects.filter(space=space, number__in=wanted)}
        for item, entry in zip(objects, data):
            if getattr(item, key) in found:
                entry[name] = found[getattr(item, key)]
            else:
                entry.pop(name, None)
    return data


class _Nested:
    """Mixed into a collection view set: the children of `parent` only."""

    parent_key = None  # the JSON name of the foreign key, "userId"
    parent_column = None  # its model field, "user_number"
    relation_model = None

    def parent_number(self):
        try:
            return int(self.kwargs["parent"])
        except ValueError:
            return None

    def get_queryset(self):
        """The parent's children when listing; the whole collection (for the next id) when creating."""
        queryset = super().get_queryset()
        if self.request.method not in ("GET", "HEAD"):
            return queryset
        number = self.parent_number()
        return queryset.none() if number is None else queryset.filter(**{self.parent_column: number})

    def filtered(self, queryset, serializer_class):
        params = self.request.query_params.copy()
        params.pop(self.parent_key, None)
        return filtering.apply(queryset, params, serializer_class)

    def listing(self, queryset, serializer_class):
        response = super().listing(queryset, serializer_class)
        params = self.request.query_params
        if params.getlist("_embed") or params.getlist("_expand"):
            numbers = [entry["id"] for entry in response.data]
            objects = {item.number: item for item in self.model.objects.filter(space=self.space, number__in=numbers)}
            relate(self.space, self.model, [objects[n] for n in numbers], response.data, params)
        return response

    def get_serializer(self, *args, **kwargs):
        if "data" in kwargs:
            data = kwargs["data"]
            data = data.dict() if hasattr(data, "dict") else dict(data)
            data[self.parent_key] = self.parent_number()
            kwargs["data"] = data
        return super().get_serializer(*args, **kwargs)

    def create(self, request, *args, **kwargs):
        if self.parent_number() is None:
            raise ValidationError({self.parent_key: [f"{self.kwargs['parent']!r} is not an id."]})
        response = super().create(request, *args, **kwargs)
        collection = self.request.path.rsplit("/", 3)[0] + "/" + self.collection_name
        response["Location"] = self.request.build_absolute_uri(f"{collection}/{response.data['id']}")
        return response


class UserPostsViewSet(_Nested, views.PostViewSet):
    """`/users/<parent>/posts`."""

    parent_key = "userId"
    parent_column = "user_number"
    collection_name = "posts"


class PostCommentsViewSet(_Nested, views.CommentViewSet):
    """`/posts/<parent>/comments`."""

    parent_key = "postId"
    parent_column = "post_number"
    collection_name = "comments"


user_posts = UserPostsViewSet.as_view({"get": "list", "post": "create"})
post_comments = PostCommentsViewSet.as_view({"get": "list", "post": "create"})
