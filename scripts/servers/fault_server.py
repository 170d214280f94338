"""The fault server of `bash scripts/test`: HTTP answers that go wrong on purpose.

    python3 fault_server.py --port PORT

httpbin covers statuses, delays and redirects; this server covers what an HTTP
framework cannot do because it breaks HTTP itself. Standard library only, one thread
per connection (so a thousand requests in flight each get an answer), HTTP/1.1 with
keep-alive on the routes that answer properly. Its URL reaches the tests as
DEPOT_FAULT_URL (Tests/DepotTests/Network/FaultMatrixTests.swift and LoadTests.swift).

Routes (the query string is read where a route says so; anything else is 404):

- `GET /json?id=N`: 200 `{"id": N, "ok": true}` with a Content-Length, at once. The
  fast route of the load test; the connection stays open for the next request.
- `GET /truncated`: 200 with `Content-Length: 1000`, then 100 bytes of the body, then
  the connection closes (a body cut short mid-transfer).
- `GET /close`: reads the request and closes the connection without a byte of answer.
- `GET /garbage`: reads the request, sends bytes that are not HTTP, and closes.
- `GET /silent`: reads the request and never answers; the connection stays open until
  the client gives up (or 120 s pass).
- `GET /drip?duration=S&numbytes=N`: 200 with `Content-Length: N`, then one byte every
  S/N seconds (httpbin's /drip without its start delay).
- `GET /endless`: 200 with `Transfer-Encoding: chunked` and 64 KiB chunks until the
  client disconnects (at most 1 GiB): a body with no end and no declared length.
- `GET /chunked?bytes=N`: 200 with a chunked body of exactly N bytes (4 KiB chunks),
  then the terminating chunk: a finite body without a Content-Length. With `hold=1`
  the terminating chunk never comes: after N bytes the server waits, like `/silent`
  (so only a client that counts bytes as they arrive can fail before its timeout).
- `GET /large?bytes=N`: 200 with `Content-Length: N` and N bytes: a declared size.
- `GET /declared?bytes=N`: 200 with `Content-Length: N`, then nothing: the server waits
  like `/silent` (so only a client that reads the Content-Length can fail at once).

The file-transfer routes of transfer_routes.py, also served by bench_server.py (that
module's docstring has their exact semantics):

- `GET|HEAD /blob?bytes=N&seed=S`: N deterministic bytes with a strong ETag and
  `Accept-Ranges: bytes`; `Range`/`If-Range` give 206 (or 416 past the end);
  `&cut=K` closes after K bytes of the body, `&rate=R` paces it at R bytes/s,
  `&noranges=1` ignores ranges, `&etag=X` changes the ETag.
- `GET /blob-digest?bytes=N&seed=S[&start=A]`: the SHA-256 of that blob from byte A.
- `POST|PUT /upload[?status=S]`: reads the body as it comes (Content-Length or
  chunked) and answers its size and SHA-256, and each multipart/form-data part's
  name, filename, type, size and SHA-256; memory stays bounded whatever the size.
- `GET /missing-file`: 404 with an HTML page.
"""
import argparse
import socket
import socketserver
import sys
import time
import urllib.parse

import transfer_routes

MAX_HEAD = 64 * 1024


def head(status, reason, fields):
    lines = [f"HTTP/1.1 {status} {reason}"] + [f"{name}: {value}" for name, value in fields] + ["", ""]
    return "\r\n".join(lines).encode("ascii")


class Handler(socketserver.BaseRequestHandler):
    def setup(self):
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def read_request(self):
        """The request line and the header fields (lower-case names), or None when the
        client closed. Only the transfer routes read a body (through read1/readline)."""
        while b"\r\n\r\n" not in self.buffer:
            if len(self.buffer) > MAX_HEAD:
                return None
            data = self.request.recv(65536)
            if not data:
                return None
            self.buffer += data
        raw, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        line, *lines = raw.decode("latin-1").split("\r\n")
        fields = {}
        for field in lines:
            name, _, value = field.partition(":")
            fields[name.strip().lower()] = value.strip()
        return line, fields

    def read1(self, limit):
        """Up to `limit` bytes of what follows the head: the buffer first, else one recv."""
        if not self.buffer:
            return self.request.recv(limit)
        data, self.buffer = self.buffer[:limit], self.buffer[limit:]
        return data

    def readline(self, limit):
        """One line with its newline (at most `limit` bytes; less when the client closed)."""
        while self.buffer.find(b"\n", 0, limit) < 0 and len(self.buffer) < limit:
            data = self.request.recv(65536)
            if not data:
                break
            self.buffer += data
        end = self.buffer.find(b"\n", 0, limit)
        end = min(limit, len(self.buffer)) if end < 0 else end + 1
        line, self.buffer = self.buffer[:end], self.buffer[end:]
        return line

    def handle(self):
        try:
            while True:
                request = self.read_request()
                if request is None:
                    return
                line, headers = request
                parts = line.split(" ")
                target = urllib.parse.urlsplit(parts[1] if len(parts) > 1 else "/")
                query = dict(urllib.parse.parse_qsl(target.query))
                route = getattr(self, "route_" + target.path.strip("/"), None)
                if route is not None:
                    keep = route(query)
                elif target.path in transfer_routes.ROUTES:
                    send = self.request.sendall
                    keep = transfer_routes.answer(
                        transfer_routes.Request(parts[0], target.path, query, headers, self, send)
                    )
                else:
                    body = b'{"error": "no such route"}'
                    fields = [("Content-Type", "application/json"), ("Content-Length", len(body))]
                    self.request.sendall(head(404, "Not Found", fields) + body)
                    continue
                if not keep:
                    return
        except OSError:
            # The client went away (it cancelled, timed out, or hit its size limit).
            return

    # Each route returns True to keep the connection for another request.

    def route_json(self, query):
        body = ('{"id": %d, "ok": true}' % int(query.get("id", "0"))).encode("ascii")
        fields = [("Content-Type", "application/json"), ("Content-Length", len(body))]
        self.request.sendall(head(200, "OK", fields) + body)
        return True

    def route_truncated(self, query):
        fields = [("Content-Type", "application/json"), ("Content-Length", 1000)]
        self.request.sendall(head(200, "OK", fields) + b"[" + b"1," * 49 + b"1")
        return False

    def route_close(self, query):
        return False

    def route_garbage(self, query):
        self.request.sendall(b"\x00\x01\x02 this is not HTTP at all \xff\xfe\r\n\r\n")
        return False

    def route_silent(self, query):
        self.request.settimeout(120)
        try:
            while self.request.recv(65536):
                pass
        except OSError:
            pass
        return False

    def route_drip(self, query):
        duration = float(query.get("duration", "10"))
        count = max(1, int(query.get("numbytes", "10")))
        fields = [("Content-Type", "application/octet-stream"), ("Content-Length", count)]
        self.request.sendall(head(200, "OK", fields))
        for _ in range(count):
            time.sleep(duration / count)
            self.request.sendall(b"*")
        return True

    def route_endless(self, query):
        fields = [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")]
        self.request.sendall(head(200, "OK", fields))
        chunk = b"%x\r\n" % 65536 + b"x" * 65536 + b"\r\n"
        for _ in range(16384):  # 1 GiB at most
            self.request.sendall(chunk)
        self.request.sendall(b"0\r\n\r\n")
        return False

    def route_chunked(self, query):
        remaining = int(query.get("bytes", "0"))
        fields = [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")]
        self.request.sendall(head(200, "OK", fields))
        while remaining > 0:
            size = min(4096, remaining)
            self.request.sendall(b"%x\r\n" % size + b"x" * size + b"\r\n")
            remaining -= size
        if query.get("hold") == "1":
            return self.route_silent(query)
        self.request.sendall(b"0\r\n\r\n")
        return True

    def route_declared(self, query):
        size = int(query.get("bytes", "0"))
        fields = [("Content-Type", "application/octet-stream"), ("Content-Length", size)]
        self.request.sendall(head(200, "OK", fields))
        return self.route_silent(query)

    def route_large(self, query):
        size = int(query.get("bytes", "0"))
        fields = [("Content-Type", "application/octet-stream"), ("Content-Length", size)]
        self.request.sendall(head(200, "OK", fields))
        block = b"x" * 65536
        while size > 0:
            self.request.sendall(block[: min(size, len(block))])
            size -= len(block)
        return True


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
    # The load test opens many connections at once: keep them all in the backlog.
    request_queue_size = 2048


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    with Server((args.host, args.port), Handler) as server:
        print(f"fault server on http://{args.host}:{args.port}", file=sys.stderr, flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()
