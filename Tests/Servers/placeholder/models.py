"""JSONPlaceholder's collections, kept per *space*.

Every row belongs to a space, a named copy of the seed data. `/posts` is the space
"main"; `/s/<name>/posts` is the space <name>, created and seeded on first use. A
test that writes picks a fresh space name, so it sees exactly the seed data (100
posts, next id 101) whatever other tests do at the same time.

Django reserves the field name `id` for primary keys, so the public id is stored
as `number` (unique per space) and serialized as `id`.
"""
from django.db import models


class Space(models.Model):
    """A named, independently seeded copy of the data."""

    name = models.CharField(max_length=64, unique=True)


class User(models.Model):
    space = models.CharField(max_length=64)
    number = models.IntegerField()
    name = models.CharField(max_length=200)
    username = models.CharField(max_length=200)
    email = models.CharField(max_length=200)
    address = models.JSONField(default=dict)
    phone = models.CharField(max_length=100, blank=True, default="")
    website = models.CharField(max_length=200, blank=True, default="")
    company = models.JSONField(default=dict)

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["space", "number"], name="user_space_number")]


class Post(models.Model):
    space = models.CharField(max_length=64)
    number = models.IntegerField()
    user_number = models.IntegerField()
    title = models.CharField(max_length=500)
    body = models.TextField()

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["space", "number"], name="post_space_number")]


class Comment(models.Model):
    space = models.CharField(max_length=64)
    number = models.IntegerField()
    post_number = models.IntegerField()
    name = models.CharField(max_length=500)
    email = models.CharField(max_length=200)
    body = models.TextField()

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["space", "number"], name="comment_space_number")]


class IdempotencyRecord(models.Model):
    """A write applied under an `Idempotency-Key`: what it asked and what it answered.

    One per (space, key). `fingerprint` is the SHA-256 of method, path with query and
    body; `status`, `headers` (name/value pairs, Content-Length left out) and `body`
    are the answer replayed to a later request with the same key and fingerprint.
    """

    space = models.CharField(max_length=64)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    method = models.CharField(max_length=10)
    path = models.TextField()
    status = models.IntegerField()
    headers = models.JSONField(default=list)
    body = models.BinaryField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["space", "key"], name="idempotency_space_key")]
