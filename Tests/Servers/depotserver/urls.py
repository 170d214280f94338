from django.urls import include, path

urlpatterns = [path("", include("placeholder.urls"))]
