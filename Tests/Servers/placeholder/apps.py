from django.apps import AppConfig


class PlaceholderConfig(AppConfig):
    """JSONPlaceholder's users, posts and comments, plus the endpoints tests need."""

    name = "placeholder"
    default_auto_field = "django.db.models.BigAutoField"
