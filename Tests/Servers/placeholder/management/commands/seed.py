from django.core.management.base import BaseCommand

from placeholder.seed import ensure_space


class Command(BaseCommand):
    help = "Seeds the space 'main' (served at /posts, /users, /comments) unless it exists."

    def handle(self, *args, **options):
        ensure_space("main")
