"""The WSGI entry point: `gunicorn --chdir Tests/Servers depotserver.wsgi:application`.

`X-Test-Drop-Response: 1` on any request makes the server handle it in full (a write is
applied, and its `Idempotency-Key` answer stored) and then close the connection without
sending a byte, so that the client sees a transport failure although the write happened.
It needs gunicorn's sync or gthread worker (`environ["gunicorn.socket"]`).
"""
import errno
import os
import socket

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "depotserver.settings")


class DropResponse:
    """Runs the app, then shuts the socket instead of answering when the request asks for it."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        if environ.get("HTTP_X_TEST_DROP_RESPONSE") != "1":
            return self.app(environ, start_response)
        sock = environ.get("gunicorn.socket")
        if sock is None:
            start_response("501 Not Implemented", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"X-Test-Drop-Response needs gunicorn's sync or gthread worker.\n"]
        result = self.app(environ, lambda status, headers, exc_info=None: (lambda data: None))
        try:
            for _ in result:  # the whole answer is produced, then thrown away
                pass
        finally:
            if hasattr(result, "close"):
                result.close()  # Django's request_finished: the database connection is closed
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        # gunicorn treats EPIPE as a client that went away: it closes the connection and
        # writes nothing (not even an error page).
        raise OSError(errno.EPIPE, "X-Test-Drop-Response: connection closed without an answer")


application = DropResponse(get_wsgi_application())
