from django.urls import include, path
from rest_framework.routers import DefaultRouter, SimpleRouter

from . import nested, testing_views, views


def _register(router):
    router.register("posts", views.PostViewSet, basename="post")
    router.register("users", views.UserViewSet, basename="user")
    router.register("comments", views.CommentViewSet, basename="comment")
    router.register("drf/posts", views.EnvelopePostViewSet, basename="drf-post")
    router.register("drf/users", views.EnvelopeUserViewSet, basename="drf-user")
    router.register("drf/comments", views.EnvelopeCommentViewSet, basename="drf-comment")
    router.register("link/posts", views.LinkPostViewSet, basename="link-post")
    router.register("grape/posts", views.GrapePostViewSet, basename="grape-post")
    router.register("cursor/posts", views.CursorPostViewSet, basename="cursor-post")
    router.register("v1/posts", views.V1PostViewSet, basename="v1-post")
    router.register("loop/posts", views.LoopPostViewSet, basename="loop-post")
    return router


router = _register(DefaultRouter(trailing_slash=False))
space_router = _register(SimpleRouter(trailing_slash=False))

urlpatterns = [
    path("flaky", testing_views.flaky),
    path("flaky/count", testing_views.flaky_count),
    path("auth/token", testing_views.auth_token),
    path("auth/me", testing_views.auth_me),
    path("auth/expire", testing_views.auth_expire),
    path("auth/count", testing_views.auth_count),
    path("errors/<int:code>", testing_views.error),
    path("idempotency/count", testing_views.idempotency_count),
    # json-server's nested routes (GET and POST), before the routers' own actions.
    path("users/<str:parent>/posts", nested.user_posts),
    path("posts/<str:parent>/comments", nested.post_comments),
    path("s/<slug:space>/users/<str:parent>/posts", nested.user_posts),
    path("s/<slug:space>/posts/<str:parent>/comments", nested.post_comments),
    path("s/<slug:space>/", include((space_router.urls, "space"), namespace="space")),
    path("", include(router.urls)),
]
