from django.urls import include, path
from rest_framework.routers import DefaultRouter, SimpleRouter

from . import testing_views, views


def _register(router):
    router.register("posts", views.PostViewSet, basename="post")
    router.register("users", views.UserViewSet, basename="user")
    router.register("comments", views.CommentViewSet, basename="comment")
    router.register("drf/posts", views.EnvelopePostViewSet, basename="drf-post")
    router.register("drf/users", views.EnvelopeUserViewSet, basename="drf-user")
    router.register("drf/comments", views.EnvelopeCommentViewSet, basename="drf-comment")
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
    path("s/<slug:space>/", include((space_router.urls, "space"), namespace="space")),
    path("", include(router.urls)),
]
