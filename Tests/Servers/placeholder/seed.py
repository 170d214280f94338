"""The seed data: 10 users, 100 posts (10 per user), 500 comments (5 per post).

Generated from a fixed random seed, so every space and every run holds the same
records: post n belongs to user (n - 1) // 10 + 1, comment n to post (n - 1) // 5 + 1.
"""
import random
import threading

from django.db import transaction

from .models import Comment, Post, Space, User

FIRST_NAMES = ["Ada", "Brook", "Carmen", "Dmitri", "Elif", "Farid", "Grace", "Hiro", "Ines", "Jonas"]
LAST_NAMES = ["Lovell", "Okafor", "Reyes", "Volkov", "Demir", "Haddad", "Hopper", "Tanaka", "Costa", "Berg"]
LOREM = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut "
    "labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris "
    "nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit esse "
    "cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui "
    "officia deserunt mollit anim id est laborum"
).split()

# One writer at a time: SQLite has a single write lock, and seeding a space must
# happen once even when its first requests arrive together.
WRITE_LOCK = threading.RLock()
_seeded = set()


def _words(rng, count):
    return " ".join(rng.choice(LOREM) for _ in range(count))


def _sentences(rng, count):
    return "\n".join(_words(rng, rng.randint(6, 11)) for _ in range(count))


def _records(space):
    rng = random.Random(1)
    users = []
    for n in range(1, 11):
        first, last = FIRST_NAMES[n - 1], LAST_NAMES[n - 1]
        users.append(
            User(
                space=space,
                number=n,
                name=f"{first} {last}",
                username=f"{first[0]}{last}".lower(),
                email=f"{first.lower()}@{last.lower()}.example",
                address={
                    "street": f"{_words(rng, 1).capitalize()} Street",
                    "suite": f"Apt. {100 + n * 7}",
                    "city": _words(rng, 1).capitalize(),
                    "zipcode": f"{10000 + n * 137:05d}",
                    "geo": {"lat": f"{rng.uniform(-90, 90):.4f}", "lng": f"{rng.uniform(-180, 180):.4f}"},
                },
                phone=f"1-555-{n:03d}-{n * 101:04d}",
                website=f"{last.lower()}.example",
                company={"name": f"{last} Group", "catchPhrase": _words(rng, 3), "bs": _words(rng, 3)},
            )
        )
    posts = [
        Post(space=space, number=n, user_number=(n - 1) // 10 + 1, title=_words(rng, 5), body=_sentences(rng, 4))
        for n in range(1, 101)
    ]
    comments = [
        Comment(
            space=space,
            number=n,
            post_number=(n - 1) // 5 + 1,
            name=_words(rng, 4),
            email=f"{_words(rng, 1)}@{_words(rng, 1)}.example",
            body=_sentences(rng, 3),
        )
        for n in range(1, 501)
    ]
    return users, posts, comments


def ensure_space(name):
    """Creates and seeds space `name` unless it exists."""
    if name in _seeded:
        return
    with WRITE_LOCK:
        if name in _seeded:
            return
        with transaction.atomic():
            if not Space.objects.filter(name=name).exists():
                users, posts, comments = _records(name)
                User.objects.bulk_create(users)
                Post.objects.bulk_create(posts)
                Comment.objects.bulk_create(comments)
                Space.objects.create(name=name)
        _seeded.add(name)
