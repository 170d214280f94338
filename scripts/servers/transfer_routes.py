"""File-transfer routes of the project's own servers: big, ranged, cut and uploaded bodies.

The fault server (`bash scripts/test`, DEPOT_FAULT_URL) and the benchmark server
(`bash scripts/bench`) both serve these routes. httpbin has no body larger than 100 KiB,
no ranges, no ETag to resume against and no way to digest an upload it never keeps;
these routes stream everything in bounded memory, so a test can move hundreds of
megabytes through a server whose memory does not grow with them. Standard library only.

Routes (the query string is read where a route says so):

- `GET|HEAD /blob?bytes=N&seed=S` (S defaults to 1): 200 with exactly N bytes of
  deterministic pseudo-random content, `Content-Length: N`,
  `Content-Type: application/octet-stream`, `Accept-Ranges: bytes`,
  `ETag: "blob-N-S"` (strong) and `Last-Modified: Thu, 01 Jan 2015 00:00:00 GMT`.
  The content depends on S only, so the blob of N bytes is the first N bytes of any
  larger one with the same seed; each 1 MiB block of it is the seed's random MiB
  rotated by a different amount, so a range served or stored at the wrong offset
  never matches. Keep-alive.
  - `Range: bytes=A-B`, `bytes=A-` or `bytes=-K` (one range; B past the end means the
    end): 206 with `Content-Range: bytes A-B/N` and those bytes. A range starting at
    or past N (or `bytes=-0`) is 416 with `Content-Range: bytes */N` and no body.
    Any other Range value (several ranges, another unit, B < A) is ignored: 200.
  - `If-Range`: equal to the current ETag (quotes included), the Range counts; any
    other value (a different tag, a date) makes the answer 200 with the whole body.
  - `&etag=X`: the ETag is `"X"` instead, so a test can make the resource change
    between two attempts (an If-Range with the old tag then gets the whole body).
  - `&noranges=1`: Range and If-Range are ignored and there is no Accept-Ranges:
    always 200 with the whole body (a server where resuming cannot work).
  - `&cut=K`: the head is sent unchanged (the Content-Length the answer would have),
    then only the first K bytes of this answer's body, then the connection is closed
    (a transfer cut mid-way; with a Range, K counts from the range's first byte; a K
    at or past the body's length sends it all, then closes).
  - `&rate=R`: the body is sent in 16 KiB slices at R bytes per second, so a client
    can cancel half way at a predictable moment.
- `GET /blob-digest?bytes=N&seed=S[&start=A]`: 200
  `{"sha256": "<hex of bytes A..N-1 of that blob>", "bytes": N-A}` (A defaults to 0,
  at most N).
- `POST|PUT /upload`: reads the body as it arrives (`Content-Length` or
  `Transfer-Encoding: chunked`; `Expect: 100-continue` is answered) and answers 200
  `{"method", "bytes", "sha256" (of the body as sent), "contentType" (or null),
  "parts", "idempotencyKey" (the Idempotency-Key header, or null), "authorization"
  (whether an Authorization header came)}`. `parts` is `[]` unless the Content-Type is
  `multipart/form-data; boundary=...`; then it lists each part as
  `{"name", "filename" (or null), "contentType" (or null), "bytes", "sha256"}` of its
  content, and a body without its closing delimiter is a 400. With `&status=S`
  (200-599) the body is read all the same and the answer is S with
  `{"error": "status S requested", "status": S, "bytes": <body size>}`. Keep-alive.
- `GET /missing-file`: 404 `text/html` `<html>not here</html>` (a download whose
  answer must not become a file).

A malformed query or body is a 400 `{"error": ...}` and another method a 405 with
`Allow` (on bench_server.py, a method other than GET, HEAD, POST and PUT gets the
standard library's 501); both close the connection, since a body may be left unread.
So does `Connection: close` in the request.
"""
import email.message
import email.parser
import email.utils
import functools
import hashlib
import http.client
import json
import random
import re
import time

BLOCK = 1 << 20
# Odd, so block i's rotation (i * ROTATION mod BLOCK) differs for every i below 2**20.
ROTATION = 0x9E3779B1
RATE_SLICE = 16 * 1024
RECEIVE = 256 * 1024
MAX_LINE = 8 * 1024
MAX_PART_HEAD = 64 * 1024
LAST_MODIFIED = "Thu, 01 Jan 2015 00:00:00 GMT"


class BadRequest(Exception):
    """A query or body this module cannot serve; answered 400 with the message."""


class Unsatisfiable(Exception):
    """A Range that starts at or past the end of the blob; answered 416."""


class Request:
    """One request as the two servers hand it over.

    `headers` maps lower-case names to values (an `email.message.Message` does too).
    `reader` has `read1(n)` and `readline(limit)` over the bytes after the head, like
    `io.BufferedReader`, so a route reads exactly its body and never the next request's
    first bytes. `send` writes everything it is given (a socket's `sendall`).
    """

    def __init__(self, method, path, query, headers, reader, send):
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.reader = reader
        self.send = send


def answer(request):
    """Answers a request whose path is in ROUTES; True to keep the connection.

    The connection closes after a 400 or 405, when the request says `Connection: close`,
    or when the client has gone (OSError, left to the server).
    """
    methods, route = ROUTES[request.path]
    if request.method not in methods:
        fields = [("Allow", ", ".join(methods)), ("Connection", "close")]
        send_json(request, 405, {"error": "method not allowed"}, fields)
        return False
    try:
        keep = route(request)
    except BadRequest as error:
        send_json(request, 400, {"error": str(error)}, [("Connection", "close")])
        return False
    return keep and request.headers.get("connection", "").lower() != "close"


def head(status, fields):
    lines = [f"HTTP/1.1 {status} {http.client.responses.get(status, 'Status')}"]
    lines += [f"{name}: {value}" for name, value in fields] + ["", ""]
    return "\r\n".join(lines).encode("latin-1")


def send_json(request, status, value, fields=()):
    body = json.dumps(value).encode("utf-8")
    fields = [("Content-Type", "application/json"), ("Content-Length", len(body)), *fields]
    request.send(head(status, fields) + body)


def number(query, name, default=None, minimum=0, maximum=None):
    """The query's integer `name` (or `default` when absent) within its bounds."""
    value = query.get(name)
    if value is None and default is not None:
        return default
    try:
        result = int(value)
    except (TypeError, ValueError):
        raise BadRequest(f"{name} must be an integer") from None
    if result < minimum or (maximum is not None and result > maximum):
        raise BadRequest(f"{name} out of range")
    return result


# --- /blob and /blob-digest -------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def pattern(seed):
    """The seed's random MiB twice over: any rotation of it is one slice, never a copy."""
    block = random.Random(seed).randbytes(BLOCK)
    return memoryview(block + block)


def blob_slices(seed, start, end, step):
    """Bytes start..end-1 of the seed's blob, as views of at most `step` bytes."""
    data = pattern(seed)
    position = start
    while position < end:
        index, within = divmod(position, BLOCK)
        offset = (index * ROTATION) % BLOCK + within
        length = min(step, end - position, BLOCK - within)
        yield data[offset : offset + length]
        position += length


def requested_range(headers, etag, size):
    """The (start, end) that Range asks for and If-Range allows, or None for the whole body.

    Raises Unsatisfiable for a range that starts at or past `size`.
    """
    value = headers.get("range")
    if value is None:
        return None
    condition = headers.get("if-range")
    if condition is not None and condition.strip() != etag:
        return None
    match = re.fullmatch(r"\s*bytes\s*=\s*(\d*)-(\d*)\s*", value, re.ASCII | re.IGNORECASE)
    if not match or match.groups() == ("", ""):
        return None
    first, last = match.groups()
    if first == "":
        if int(last) == 0:
            raise Unsatisfiable()
        return max(0, size - int(last)), size
    start = int(first)
    if last and int(last) < start:
        return None
    if start >= size:
        raise Unsatisfiable()
    end = min(int(last) + 1, size) if last else size
    return start, end


def blob(request):
    """Streams the blob, or the part of it a resuming client asks for, from one cached MiB."""
    query = request.query
    size = number(query, "bytes")
    seed = number(query, "seed", 1)
    cut = number(query, "cut", -1)
    rate = number(query, "rate", 0)
    etag = '"%s"' % query["etag"] if "etag" in query else f'"blob-{size}-{seed}"'
    ranges = query.get("noranges") != "1"
    fields = [
        ("Content-Type", "application/octet-stream"),
        ("ETag", etag),
        ("Last-Modified", LAST_MODIFIED),
    ]
    if ranges:
        fields.append(("Accept-Ranges", "bytes"))
    try:
        wanted = requested_range(request.headers, etag, size) if ranges else None
    except Unsatisfiable:
        fields += [("Content-Range", f"bytes */{size}"), ("Content-Length", 0)]
        request.send(head(416, fields))
        return True
    start, end = wanted or (0, size)
    if wanted:
        fields.append(("Content-Range", f"bytes {start}-{end - 1}/{size}"))
    fields.append(("Content-Length", end - start))
    request.send(head(206 if wanted else 200, fields))
    if request.method == "HEAD":
        return True
    if cut >= 0:
        end = min(end, start + cut)
    send_blob(request, seed, start, end, rate)
    return cut < 0


def send_blob(request, seed, start, end, rate):
    """Sends the bytes in 1 MiB views, or paced slices when a rate is given."""
    if not rate:
        for piece in blob_slices(seed, start, end, BLOCK):
            request.send(piece)
        return
    began = time.monotonic()
    sent = 0
    for piece in blob_slices(seed, start, end, RATE_SLICE):
        delay = began + sent / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        request.send(piece)
        sent += len(piece)


def blob_digest(request):
    size = number(request.query, "bytes")
    seed = number(request.query, "seed", 1)
    start = number(request.query, "start", 0, maximum=size)
    digest = hashlib.sha256()
    for piece in blob_slices(seed, start, size, BLOCK):
        digest.update(piece)
    send_json(request, 200, {"sha256": digest.hexdigest(), "bytes": size - start})
    return True


# --- /upload -----------------------------------------------------------------------------


def upload(request):
    """Digests the body as it arrives: the memory is the same for 1 KB and 1 GB."""
    status = number(request.query, "status", 200, minimum=200, maximum=599)
    content_type = request.headers.get("content-type")
    boundary = multipart_boundary(content_type)
    parts = MultipartDigests(boundary) if boundary else None
    # Only once the query and Content-Type are accepted; otherwise the 400 goes out instead.
    if request.headers.get("expect", "").lower() == "100-continue":
        request.send(b"HTTP/1.1 100 Continue\r\n\r\n")
    digest = hashlib.sha256()
    total = 0
    for chunk in body_chunks(request):
        digest.update(chunk)
        total += len(chunk)
        if parts is not None:
            parts.feed(chunk)
    if status != 200:
        error = {"error": f"status {status} requested", "status": status, "bytes": total}
        send_json(request, status, error)
        return True
    summary = {
        "method": request.method,
        "bytes": total,
        "sha256": digest.hexdigest(),
        "contentType": content_type,
        "parts": parts.finish() if parts is not None else [],
        "idempotencyKey": request.headers.get("idempotency-key"),
        "authorization": request.headers.get("authorization") is not None,
    }
    send_json(request, 200, summary)
    return True


def body_chunks(request):
    """The request body as it arrives, framing removed, never read past its end.

    Another request may follow on the same connection: its bytes stay in the reader.
    """
    if "chunked" in request.headers.get("transfer-encoding", "").lower():
        return chunked_body(request.reader)
    try:
        length = int(request.headers.get("content-length", "0"))
    except ValueError:
        raise BadRequest("bad Content-Length") from None
    return exactly(request.reader, length)


def exactly(reader, count):
    while count > 0:
        data = reader.read1(min(count, RECEIVE))
        if not data:
            raise ConnectionError("the request body was cut short")
        count -= len(data)
        yield data


def chunked_body(reader):
    while True:
        line = reader.readline(MAX_LINE)
        if not line:
            raise ConnectionError("the request body was cut short")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise BadRequest("bad chunk size") from None
        if size == 0:
            break
        yield from exactly(reader, size)
        if reader.readline(MAX_LINE).strip():
            raise BadRequest("a chunk longer than its size")
    # Trailer fields, if any, up to the empty line that ends the body.
    while reader.readline(MAX_LINE).strip():
        pass


def multipart_boundary(content_type):
    """The boundary of a multipart/form-data Content-Type, or None for any other type."""
    if not content_type:
        return None
    message = email.message.Message()
    message["Content-Type"] = content_type
    if message.get_content_type() != "multipart/form-data":
        return None
    boundary = message.get_param("boundary")
    if not boundary:
        raise BadRequest("multipart/form-data without a boundary")
    return boundary.encode("latin-1")


class MultipartDigests:
    """The size and SHA-256 of every part of a multipart/form-data body fed in chunks.

    A state machine over the chunks as they come: it keeps at most one chunk plus a
    delimiter's length (and one part's head), so a 200 MB upload costs no more memory
    than a small one. Each state method consumes what it can and returns True when the
    next state should look at the buffer at once.
    """

    def __init__(self, boundary):
        self.delimiter = b"\r\n--" + boundary
        # The CRLF makes the first delimiter, at the very start, look like every later one.
        self.buffer = b"\r\n"
        self.state = self.content
        self.part = None
        self.parts = []

    def feed(self, chunk):
        self.buffer += chunk
        while self.state():
            pass

    def finish(self):
        if self.state != self.epilogue:
            raise BadRequest("multipart body without its closing delimiter")
        return self.parts

    def content(self):
        """A part's content (or the preamble, before the first part) up to a delimiter."""
        found = self.buffer.find(self.delimiter)
        if found < 0:
            # The last bytes may be the start of a delimiter: keep them for the next chunk.
            keep = len(self.delimiter) - 1
            if len(self.buffer) > keep:
                self.consume(self.buffer[:-keep])
                self.buffer = self.buffer[-keep:]
            return False
        self.consume(self.buffer[:found])
        self.buffer = self.buffer[found + len(self.delimiter) :]
        if self.part:
            part, digest = self.part
            self.parts.append({**part, "sha256": digest.hexdigest()})
            self.part = None
        self.state = self.after_delimiter
        return True

    def consume(self, data):
        if self.part:
            part, digest = self.part
            part["bytes"] += len(data)
            digest.update(data)

    def after_delimiter(self):
        """`--` ends the body; CRLF starts a part's head (the CRLF is left for part_head)."""
        if len(self.buffer) < 2:
            return False
        if self.buffer.startswith(b"--"):
            self.state = self.epilogue
        elif self.buffer.startswith(b"\r\n"):
            self.state = self.part_head
        else:
            raise BadRequest("a multipart delimiter followed by neither CRLF nor --")
        return True

    def part_head(self):
        """CRLF, the part's header lines, CRLF CRLF (just CRLF CRLF when it has none)."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_PART_HEAD:
                raise BadRequest("a multipart part head too long")
            return False
        text = self.buffer[2:end].decode("utf-8", "replace")
        self.buffer = self.buffer[end + 4 :]
        fields = email.parser.HeaderParser().parsestr(text + "\r\n\r\n")
        part = {
            "name": parameter(fields, "name"),
            "filename": fields.get_filename(),
            "contentType": fields.get("content-type"),
            "bytes": 0,
        }
        self.part = (part, hashlib.sha256())
        self.state = self.content
        return True

    def epilogue(self):
        """Whatever follows the closing delimiter is ignored."""
        self.buffer = b""
        return False


def parameter(fields, name):
    """A Content-Disposition parameter, RFC 2231 encoded or not, or None."""
    value = fields.get_param(name, header="content-disposition")
    return None if value is None else email.utils.collapse_rfc2231_value(value)


def missing_file(request):
    body = b"<html>not here</html>"
    fields = [("Content-Type", "text/html"), ("Content-Length", len(body))]
    request.send(head(404, fields) + body)
    return True


# Path -> (the methods it answers, its function). Each function returns True to keep the
# connection for another request.
ROUTES = {
    "/blob": (("GET", "HEAD"), blob),
    "/blob-digest": (("GET",), blob_digest),
    "/upload": (("POST", "PUT"), upload),
    "/missing-file": (("GET",), missing_file),
}
