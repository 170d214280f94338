"""Answer header fields a test asks for, so Depot's tests can see what a server sends them.

`X-Test-Cache-Control: <value>` on a request sets `Cache-Control: <value>` on its answer
(how the offline tests get a `no-store` answer from a real server).
"""


class TestHeadersMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        cache_control = request.headers.get("X-Test-Cache-Control")
        if cache_control:
            response["Cache-Control"] = cache_control
        return response
