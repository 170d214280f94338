"""The WSGI entry point: `gunicorn --chdir Tests/Servers depotserver.wsgi:application`."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "depotserver.settings")

application = get_wsgi_application()
