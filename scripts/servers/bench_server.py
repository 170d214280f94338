"""The loopback server of `bash scripts/bench`: json-server's answers for /photos.

    python3 bench_server.py --port PORT --data photos.jsonl

`photos.jsonl` holds one photo per line, exactly the bytes of the benchmark's fixture
(`depot-benchmarks --write-server-data FILE` writes it). The server answers, over
HTTP/1.1 with keep-alive:

- `GET /photos`: `[` + the lines joined with `,` + `]` (the fixture itself);
- `GET /photos/ID`: that photo's line; 404 `{}` for an unknown id;
- the file-transfer routes of transfer_routes.py (its docstring has them):
  `GET|HEAD /blob?bytes=N` (deterministic bytes, ranges), `GET /blob-digest`,
  `POST|PUT /upload` (size and SHA-256 of the body and of each multipart part) and
  `GET /missing-file`, for the transfer benchmarks.

Every /photos answer is built once at start, so the server adds as little as Python
allows and the same bytes reach Depot and the hand-written baseline; the transfer
routes stream their bodies in bounded memory. Standard library only; one thread per
connection.
"""
import argparse
import http.server
import socketserver
import sys
import urllib.parse

import transfer_routes


def response(status, body):
    reason = {200: "OK", 404: "Not Found"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Content-Type: application/json; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\n"
        "\r\n"
    )
    return head.encode("ascii") + body


def load(path):
    with open(path, "rb") as file:
        lines = [line.rstrip(b"\n") for line in file if line.strip()]
    answers = {"/photos": response(200, b"[" + b",".join(lines) + b"]")}
    for line in lines:
        # Each line is an object with an integer "id" member; read it without a JSON parser
        # so that the bytes stay exactly as written.
        start = line.index(b'"id":') + len(b'"id":')
        end = start
        while end < len(line) and line[end : end + 1].isdigit():
            end += 1
        answers[f"/photos/{int(line[start:end])}"] = response(200, line)
    return answers


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One write per answer and no Nagle delay: small answers must not wait for an ACK.
    disable_nagle_algorithm = True
    answers = {}
    not_found = response(404, b"{}")

    def do_GET(self):
        path = self.path.split("?", 1)[0].rstrip("/")
        answer = self.answers.get(path)
        if answer is None and self.transfer():
            return
        self.wfile.write(answer or self.not_found)

    def do_POST(self):
        """HEAD, POST and PUT serve only the transfer routes; elsewhere the 501 of before."""
        if not self.transfer():
            self.send_error(501, f"Unsupported method ({self.command!r})")

    do_HEAD = do_PUT = do_POST

    def transfer(self):
        """Answers a route of transfer_routes.py; False when the path is not one of them."""
        target = urllib.parse.urlsplit(self.path)
        if target.path not in transfer_routes.ROUTES:
            return False
        query = dict(urllib.parse.parse_qsl(target.query))
        send = self.connection.sendall
        request = transfer_routes.Request(self.command, target.path, query, self.headers, self.rfile, send)
        try:
            keep = transfer_routes.answer(request)
        except OSError:
            # The client went away (it cancelled, or hit its size limit).
            keep = False
        self.close_connection = self.close_connection or not keep
        return True

    def handle_expect_100(self):
        """/upload answers `Expect: 100-continue` itself, once it has checked its query."""
        return True

    def log_message(self, format, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data", required=True)
    args = parser.parse_args()
    Handler.answers = load(args.data)
    server = Server(("127.0.0.1", args.port), Handler)
    print(f"serving {len(Handler.answers) - 1} photos on 127.0.0.1:{args.port}", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
