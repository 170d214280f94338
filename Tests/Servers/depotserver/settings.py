"""Settings of the Depot test server: a JSONPlaceholder-shaped API for tests only.

The database is SQLite at $DEPOT_DRF_DB (scripts/test puts it in a fresh temporary
directory on every run). Nothing here is fit for production: there is no
authentication, no CSRF protection and a fixed secret key.
"""
import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = "depot-tests-only-not-a-secret"
DEBUG = os.environ.get("DEPOT_DRF_DEBUG") == "1"
ALLOWED_HOSTS = ["*"]

INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "rest_framework",
    "placeholder",
]

MIDDLEWARE = [
    "django.middleware.common.CommonMiddleware",
    "placeholder.test_headers.TestHeadersMiddleware",
]

ROOT_URLCONF = "depotserver.urls"
WSGI_APPLICATION = "depotserver.wsgi.application"

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("DEPOT_DRF_DB", str(BASE_DIR / "db.sqlite3")),
        "OPTIONS": {
            # Writers queue for the lock instead of failing with "database is locked".
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# URLs are exactly as routed: /posts and /posts/1, never redirected to /posts/.
APPEND_SLASH = False

USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en-us"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "rest_framework.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"handlers": ["console"], "level": "ERROR"}},
}
