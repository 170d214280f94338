"""JSON in JSONPlaceholder's shape: `id`, `userId`, `postId`, camelCase."""
from rest_framework import serializers

from .models import Comment, Post, User


class PostSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(source="number", required=False, min_value=1)
    userId = serializers.IntegerField(source="user_number")

    class Meta:
        model = Post
        fields = ["userId", "id", "title", "body"]


class UserSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(source="number", required=False, min_value=1)

    class Meta:
        model = User
        fields = ["id", "name", "username", "email", "address", "phone", "website", "company"]
        extra_kwargs = {
            "address": {"required": False},
            "company": {"required": False},
            "phone": {"required": False},
            "website": {"required": False},
        }


class CommentSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(source="number", required=False, min_value=1)
    postId = serializers.IntegerField(source="post_number")

    class Meta:
        model = Comment
        fields = ["postId", "id", "name", "email", "body"]
