"""Self-test of the transfer routes (transfer_routes.py), on both servers that serve them.

    python3 scripts/servers/test_transfer_routes.py

The Swift transfer tests trust these routes to tell the truth about ranges, cuts and
digests, so the routes are checked here on their own, with Python's http.client (and a
raw socket where http.client cannot go: `Expect: 100-continue`, pipelined requests).
It starts fault_server.py and bench_server.py on free ports of 127.0.0.1, runs every
check against each, uploads 50 MB raw and 120 MB of multipart streamed from generators,
downloads 100 MB, and reads each server's peak RSS (VmHWM of /proc/PID/status) to show
that it stays under 60 MB. Prints one line per check, then `N passed, M failed`; exits 1
when a check failed. Standard library and Linux's /proc; a few seconds.
"""
import contextlib
import hashlib
import http.client
import json
import os
import pathlib
import random
import socket
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
MIB = 1 << 20
PEAK_RSS_LIMIT_MB = 60
LAST_MODIFIED = "Thu, 01 Jan 2015 00:00:00 GMT"
BOUNDARY = "depot-test-boundary-7MA4YWxkTrZu0gW"


class CheckFailed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def expect_equal(actual, expected, what):
    expect(actual == expected, f"{what}: {actual!r}, expected {expected!r}")


# --- servers -------------------------------------------------------------------------------


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def running(script, *arguments):
    """A server process on a free port, stopped (by its PID) whatever happens."""
    port = free_port()
    command = [sys.executable, str(HERE / script), "--port", str(port), *arguments]
    process = subprocess.Popen(command, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{script} did not start")
                time.sleep(0.05)
        yield port, process.pid
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def peak_rss_mb(pid):
    """The process's peak resident set (VmHWM), in MB."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc")


# --- client helpers ------------------------------------------------------------------------


def connect(port):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=30)


def fetch(connection, method, path, headers=None, body=None, **options):
    connection.request(method, path, body=body, headers=headers or {}, **options)
    response = connection.getresponse()
    return response, response.read()


def fetch_json(connection, method, path, headers=None, body=None, **options):
    response, data = fetch(connection, method, path, headers, body, **options)
    return response, json.loads(data)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def blob(connection, size, seed=1):
    response, data = fetch(connection, "GET", f"/blob?bytes={size}&seed={seed}")
    expect_equal(response.status, 200, "status of the whole blob")
    return data


class Source:
    """`size` pseudo-random bytes as 1 MiB views, hashed as they are handed out."""

    def __init__(self, size, seed):
        block = random.Random(seed).randbytes(MIB)
        self.data = memoryview(block + block)
        self.size = size
        self.digest = hashlib.sha256()

    def __iter__(self):
        for index, start in enumerate(range(0, self.size, MIB)):
            offset = (index * 7919) % MIB
            piece = self.data[offset : offset + min(MIB, self.size - start)]
            self.digest.update(piece)
            yield piece


def multipart(parts):
    """A multipart/form-data body as a list of pieces (bytes, or a Source) and its length.

    `parts` holds (name, filename or None, content type or None, content) tuples.
    """
    pieces = [b"a preamble that the server skips"]
    for name, filename, content_type, content in parts:
        disposition = f'form-data; name="{name}"'
        if filename is not None:
            disposition += f'; filename="{filename}"'
        lines = [f"\r\n--{BOUNDARY}", f"Content-Disposition: {disposition}"]
        if content_type is not None:
            lines.append(f"Content-Type: {content_type}")
        pieces += ["\r\n".join(lines + ["", ""]).encode("utf-8"), content]
    pieces.append(f"\r\n--{BOUNDARY}--\r\nan epilogue".encode("ascii"))
    length = sum(piece.size if isinstance(piece, Source) else len(piece) for piece in pieces)
    return pieces, length


def part_summary(name, filename, content_type, size, digest):
    """One entry of /upload's `parts`, as the server should report it."""
    return {"name": name, "filename": filename, "contentType": content_type, "bytes": size, "sha256": digest}


def stream(pieces):
    for piece in pieces:
        if isinstance(piece, Source):
            yield from piece
        else:
            yield piece


def raw_exchange(port, data):
    """Sends `data` on a new socket and returns every byte until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(data)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
        return received


# --- checks of /blob and /blob-digest ------------------------------------------------------


def check_blob_whole(port):
    size = 3 * MIB + 12345
    connection = connect(port)
    response, data = fetch(connection, "GET", f"/blob?bytes={size}&seed=7")
    sock = connection.sock
    expect_equal(response.status, 200, "status")
    expect_equal(len(data), size, "length")
    expect_equal(response.getheader("Content-Length"), str(size), "Content-Length")
    expect_equal(response.getheader("Content-Type"), "application/octet-stream", "Content-Type")
    expect_equal(response.getheader("Accept-Ranges"), "bytes", "Accept-Ranges")
    expect_equal(response.getheader("ETag"), f'"blob-{size}-7"', "ETag")
    expect_equal(response.getheader("Last-Modified"), LAST_MODIFIED, "Last-Modified")
    _, digest = fetch_json(connection, "GET", f"/blob-digest?bytes={size}&seed=7")
    expect_equal(digest, {"sha256": sha256(data), "bytes": size}, "digest")
    first, second = data[:MIB], data[MIB : 2 * MIB]
    expect(first != second and (first + first).find(second) > 0, "block 1 is not block 0 rotated")
    expect_equal(blob(connection, 1000, seed=7), data[:1000], "a smaller blob of the seed")
    expect(blob(connection, 1000, seed=8) != data[:1000], "another seed gives the same bytes")
    expect(connection.sock is sock, "the connection was not kept alive")


def check_blob_ranges(port):
    size = 2 * MIB + 100
    connection = connect(port)
    whole = blob(connection, size)
    sock = connection.sock
    etag = f'"blob-{size}-1"'
    path = f"/blob?bytes={size}"
    for header, start, end in [
        ("bytes=1048000-1049000", 1048000, 1049001),
        ("bytes=2000000-", 2000000, size),
        ("bytes=10-99999999", 10, size),
        ("bytes=-100", size - 100, size),
        ("bytes=0-0", 0, 1),
    ]:
        for condition in [None, etag]:
            headers = {"Range": header} | ({"If-Range": condition} if condition else {})
            response, data = fetch(connection, "GET", path, headers)
            expect_equal(response.status, 206, f"status for {headers}")
            content_range = f"bytes {start}-{end - 1}/{size}"
            expect_equal(response.getheader("Content-Range"), content_range, "Content-Range")
            expect_equal(response.getheader("Content-Length"), str(end - start), "Content-Length")
            expect(data == whole[start:end], f"wrong bytes for {header}")
    for headers in [
        {"Range": "bytes=100-", "If-Range": '"another"'},
        {"Range": "bytes=100-", "If-Range": LAST_MODIFIED},
        {"Range": "bytes=5-3"},
        {"Range": "bytes=0-1,5-6"},
        {"Range": "items=0-5"},
    ]:
        response, data = fetch(connection, "GET", path, headers)
        expect_equal(response.status, 200, f"status for {headers}")
        expect(data == whole, f"not the whole blob for {headers}")
    response, data = fetch(connection, "HEAD", path, {"Range": "bytes=100-199"})
    expect_equal((response.status, response.getheader("Content-Length"), data), (206, "100", b""), "HEAD")
    response, data = fetch(connection, "HEAD", path)
    expect_equal((response.status, response.getheader("Content-Length"), data), (200, str(size), b""), "HEAD")
    expect(connection.sock is sock, "the connection was not kept alive")


def check_blob_unsatisfiable(port):
    connection = connect(port)
    for header in ["bytes=1000-", "bytes=5000-6000", "bytes=-0"]:
        response, data = fetch(connection, "GET", "/blob?bytes=1000", {"Range": header})
        expect_equal(response.status, 416, f"status for {header}")
        expect_equal(response.getheader("Content-Range"), "bytes */1000", "Content-Range")
        expect_equal(data, b"", "body")
    sock = connection.sock
    expect_equal(len(blob(connection, 1000)), 1000, "the blob after a 416")
    expect(connection.sock is sock, "the connection was not kept alive")


def check_blob_cut_and_resume(port):
    size, cut = MIB + 500, 300000
    etag = f'"blob-{size}-3"'
    connection = connect(port)
    connection.request("GET", f"/blob?bytes={size}&seed=3&cut={cut}")
    response = connection.getresponse()
    expect_equal(response.getheader("Content-Length"), str(size), "Content-Length of the cut answer")
    try:
        response.read()
        raise CheckFailed("the cut answer was whole")
    except http.client.IncompleteRead as error:
        partial = error.partial
    expect_equal(len(partial), cut, "bytes before the cut")
    connection.close()
    connection = connect(port)
    headers = {"Range": f"bytes={len(partial)}-", "If-Range": etag}
    response, rest = fetch(connection, "GET", f"/blob?bytes={size}&seed=3", headers)
    expect_equal(response.status, 206, "status of the resumed download")
    _, digest = fetch_json(connection, "GET", f"/blob-digest?bytes={size}&seed=3")
    expect_equal(sha256(partial + rest), digest["sha256"], "digest of the resumed download")

    # With a Range, the cut counts the bytes of the 206's body.
    connection.request("GET", f"/blob?bytes={size}&seed=3&cut=500", headers={"Range": "bytes=1000-"})
    response = connection.getresponse()
    expect_equal(response.status, 206, "status of a cut range")
    expect_equal(response.getheader("Content-Length"), str(size - 1000), "Content-Length of a cut range")
    try:
        response.read()
        raise CheckFailed("the cut range was whole")
    except http.client.IncompleteRead as error:
        expect(error.partial == (partial + rest)[1000:1500], "wrong bytes before the cut of a range")


def check_blob_noranges(port):
    connection = connect(port)
    whole = blob(connection, 5000)
    headers = {"Range": "bytes=10-", "If-Range": '"blob-5000-1"'}
    response, data = fetch(connection, "GET", "/blob?bytes=5000&noranges=1", headers)
    expect_equal(response.status, 200, "status")
    expect_equal(response.getheader("Accept-Ranges"), None, "Accept-Ranges")
    expect(data == whole, "not the whole blob")


def check_blob_etag_override(port):
    connection = connect(port)
    path = "/blob?bytes=5000&etag=v2"
    response, _ = fetch(connection, "GET", path)
    expect_equal(response.getheader("ETag"), '"v2"', "ETag")
    response, data = fetch(connection, "GET", path, {"Range": "bytes=10-", "If-Range": '"blob-5000-1"'})
    expect_equal((response.status, len(data)), (200, 5000), "status and length with the old tag")
    response, data = fetch(connection, "GET", path, {"Range": "bytes=10-", "If-Range": '"v2"'})
    expect_equal((response.status, len(data)), (206, 4990), "status and length with the new tag")


def check_blob_rate(port):
    connection = connect(port)
    started = time.monotonic()
    response, data = fetch(connection, "GET", f"/blob?bytes={96 * 1024}&rate={256 * 1024}")
    elapsed = time.monotonic() - started
    expect_equal((response.status, len(data)), (200, 96 * 1024), "status and length")
    # Six 16 KiB slices at 256 KiB/s: the last one leaves 5/16 s after the first.
    expect(0.28 <= elapsed < 3, f"96 KiB at 256 KiB/s took {elapsed:.2f} s")


def check_blob_digest_start(port):
    size = MIB + 3
    connection = connect(port)
    whole = blob(connection, size, seed=5)
    for start in [0, 12345, MIB, size]:
        _, digest = fetch_json(connection, "GET", f"/blob-digest?bytes={size}&seed=5&start={start}")
        expect_equal(digest, {"sha256": sha256(whole[start:]), "bytes": size - start}, f"digest from {start}")
    response, _ = fetch_json(connection, "GET", f"/blob-digest?bytes={size}&start={size + 1}")
    expect_equal(response.status, 400, "status of a start past the end")


def check_bad_requests(port):
    for method, path, status in [
        ("GET", "/blob", 400),
        ("GET", "/blob?bytes=ten", 400),
        ("GET", "/blob?bytes=10&cut=-1", 400),
        ("POST", "/upload?status=99", 400),
        ("PUT", "/blob?bytes=10", 405),
        ("GET", "/upload", 405),
    ]:
        response, body = fetch_json(connect(port), method, path)
        expect_equal(response.status, status, f"status of {method} {path}")
        expect("error" in body, f"no error in {body}")
    response, _ = fetch(connect(port), "POST", "/blob")
    expect_equal(response.getheader("Allow"), "GET, HEAD", "Allow")


def check_missing_file(port):
    response, data = fetch(connect(port), "GET", "/missing-file")
    expect_equal(response.status, 404, "status")
    expect_equal(response.getheader("Content-Type"), "text/html", "Content-Type")
    expect_equal(data, b"<html>not here</html>", "body")


# --- checks of /upload ---------------------------------------------------------------------


def check_upload_raw(port):
    source = Source(50_000_000, seed=11)
    headers = {
        "Content-Length": str(source.size),
        "Content-Type": "application/octet-stream",
        "Idempotency-Key": "key-1",
        "Authorization": "Bearer token",
    }
    connection = connect(port)
    response, summary = fetch_json(connection, "PUT", "/upload", headers, iter(source))
    expect_equal(response.status, 200, "status")
    expected = {
        "method": "PUT",
        "bytes": source.size,
        "sha256": source.digest.hexdigest(),
        "contentType": "application/octet-stream",
        "parts": [],
        "idempotencyKey": "key-1",
        "authorization": True,
    }
    expect_equal(summary, expected, "summary")


def check_upload_chunked(port):
    pieces = [b"a", b"bcdefgh", random.Random(2).randbytes(100000), b"xyz"]
    connection = connect(port)
    _, summary = fetch_json(connection, "POST", "/upload", body=iter(pieces), encode_chunked=True)
    sock = connection.sock
    expected = {
        "method": "POST",
        "bytes": 100011,
        "sha256": sha256(b"".join(pieces)),
        "contentType": None,
        "parts": [],
        "idempotencyKey": None,
        "authorization": False,
    }
    expect_equal(summary, expected, "summary")
    _, summary = fetch_json(connection, "POST", "/upload", body=iter([b"again"]), encode_chunked=True)
    expect_equal(summary["sha256"], sha256(b"again"), "digest of the second upload")
    _, summary = fetch_json(connection, "POST", "/upload")
    expect_equal((summary["bytes"], summary["sha256"]), (0, sha256(b"")), "an empty body")
    expect(connection.sock is sock, "the connection was not kept alive")


def check_upload_status(port):
    connection = connect(port)
    response, body = fetch_json(connection, "POST", "/upload?status=500", body=b"x" * 1000)
    sock = connection.sock
    error = {"error": "status 500 requested", "status": 500, "bytes": 1000}
    expect_equal((response.status, body), (500, error), "500")
    response, body = fetch_json(connection, "PUT", "/upload?status=404", body=b"y" * 10)
    expect_equal((response.status, body["bytes"]), (404, 10), "404")
    response, body = fetch_json(connection, "POST", "/upload", body=b"z")
    expect_equal((response.status, body["bytes"]), (200, 1), "the upload after")
    expect(connection.sock is sock, "the connection was not kept alive")


def check_upload_expect_continue(port):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        request = "POST /upload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n"
        connection.sendall(request.encode("ascii"))
        expect_equal(connection.recv(1000), b"HTTP/1.1 100 Continue\r\n\r\n", "the interim answer")
        connection.sendall(b"0123456789")
        answer = connection.recv(4096)
    expect(answer.startswith(b"HTTP/1.1 200 "), f"the final answer: {answer[:40]!r}")
    expect(sha256(b"0123456789").encode("ascii") in answer, "the digest of the body")


def check_upload_pipelined(port):
    """A chunked upload (with a trailer) and a GET sent at once: neither eats the other."""
    first = b"POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    first += b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n"
    second = b"GET /blob?bytes=10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    received = raw_exchange(port, first + second)
    expect_equal(received.count(b"HTTP/1.1 200 "), 2, "answers")
    expect(sha256(b"hello world").encode("ascii") in received, "the digest of the chunked body")
    expect(received.endswith(blob(connect(port), 10)), "the blob after the upload")


def check_multipart_small(port):
    # Almost delimiters: the boundary cut short after CRLF--, and whole but without the CRLF.
    tricky = f"\r\n--{BOUNDARY[:-1]}\r\nx--{BOUNDARY}\r\n".encode("ascii")
    parts = [
        ("title", None, None, b"hello"),
        ("doc", "a b.txt", "text/plain; charset=utf-8", tricky * 3),
        ("empty", "e.bin", "application/octet-stream", b""),
        ("cv", "résumé.pdf", "application/pdf", b"%PDF-1.7"),
    ]
    pieces, _ = multipart(parts)
    body = b"".join(pieces)
    content_type = f"multipart/form-data; boundary={BOUNDARY}"
    # 7-byte chunks: every delimiter and part head reaches the parser in several pieces.
    chunks = [body[i : i + 7] for i in range(0, len(body), 7)]
    connection = connect(port)
    _, summary = fetch_json(
        connection, "POST", "/upload", {"Content-Type": content_type}, iter(chunks), encode_chunked=True
    )
    expected = [
        part_summary(name, filename, kind, len(content), sha256(content))
        for name, filename, kind, content in parts
    ]
    expect_equal(summary["parts"], expected, "parts")
    expect_equal((summary["bytes"], summary["sha256"]), (len(body), sha256(body)), "the whole body")
    expect_equal(summary["contentType"], content_type, "contentType")
    response, _ = fetch_json(connect(port), "POST", "/upload", {"Content-Type": content_type}, body[:-20])
    expect_equal(response.status, 400, "status of a body without its closing delimiter")


def check_large_transfers(port, pid):
    """120 MB of multipart up and 100 MB down, with the server's peak RSS measured."""
    before = peak_rss_mb(pid)
    files = [Source(60_000_000, seed=21), Source(60_000_001, seed=22)]
    parts = [
        ("poster", "poster.jpg", "image/jpeg", files[0]),
        ("trailer", "trailer.mp4", "video/mp4", files[1]),
    ]
    pieces, length = multipart(parts)
    headers = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}", "Content-Length": str(length)}
    connection = connect(port)
    started = time.monotonic()
    response, summary = fetch_json(connection, "POST", "/upload", headers, stream(pieces))
    upload_seconds = time.monotonic() - started
    expect_equal(response.status, 200, "status of the upload")
    expect_equal(summary["bytes"], length, "bytes of the upload")
    expected = [
        part_summary(name, filename, kind, source.size, source.digest.hexdigest())
        for name, filename, kind, source in parts
    ]
    expect_equal(summary["parts"], expected, "parts")

    size = 100 * MIB
    started = time.monotonic()
    connection.request("GET", f"/blob?bytes={size}&seed=4")
    response = connection.getresponse()
    digest, received = hashlib.sha256(), 0
    while chunk := response.read(MIB):
        digest.update(chunk)
        received += len(chunk)
    download_seconds = time.monotonic() - started
    _, expected = fetch_json(connection, "GET", f"/blob-digest?bytes={size}&seed=4")
    expect_equal((received, digest.hexdigest()), (size, expected["sha256"]), "the 100 MiB download")

    after = peak_rss_mb(pid)
    print(
        f"     server peak RSS {before:.1f} MB before, {after:.1f} MB after "
        f"{length / 1e6:.0f} MB up ({upload_seconds:.1f} s) and "
        f"{size // MIB} MiB down ({download_seconds:.1f} s)"
    )
    expect(after < PEAK_RSS_LIMIT_MB, f"peak RSS {after:.1f} MB, over {PEAK_RSS_LIMIT_MB} MB")


# --- the run -------------------------------------------------------------------------------

CHECKS = [
    check_blob_whole,
    check_blob_ranges,
    check_blob_unsatisfiable,
    check_blob_cut_and_resume,
    check_blob_noranges,
    check_blob_etag_override,
    check_blob_rate,
    check_blob_digest_start,
    check_bad_requests,
    check_missing_file,
    check_upload_raw,
    check_upload_chunked,
    check_upload_status,
    check_upload_expect_continue,
    check_upload_pipelined,
    check_multipart_small,
]


def check_fault_server_routes(port):
    _, body = fetch_json(connect(port), "GET", "/json?id=3")
    expect_equal(body, {"id": 3, "ok": True}, "/json")


def check_bench_server_routes(port):
    _, body = fetch_json(connect(port), "GET", "/photos/1")
    expect_equal(body, {"id": 1, "title": "one"}, "/photos/1")


def run_all(label, port, pid, own_routes, results):
    checks = [(check, (port,)) for check in [own_routes, *CHECKS]] + [(check_large_transfers, (port, pid))]
    for check, arguments in checks:
        name = f"{label} {check.__name__.removeprefix('check_')}"
        try:
            check(*arguments)
        except Exception as error:  # every failure is reported, and the run goes on
            results["failed"] += 1
            print(f"FAIL {name}: {error!r}", flush=True)
        else:
            results["passed"] += 1
            print(f"ok   {name}", flush=True)


def main():
    results = {"passed": 0, "failed": 0}
    started = time.monotonic()
    with running("fault_server.py") as (port, pid):
        run_all("fault", port, pid, check_fault_server_routes, results)
    with tempfile.TemporaryDirectory() as folder:
        photos = pathlib.Path(folder) / "photos.jsonl"
        photos.write_text('{"id":1,"title":"one"}\n')
        with running("bench_server.py", "--data", str(photos)) as (port, pid):
            run_all("bench", port, pid, check_bench_server_routes, results)
    print(f"     {time.monotonic() - started:.1f} s")
    print(f"{results['passed']} passed, {results['failed']} failed")
    sys.exit(1 if results["failed"] else 0)


if __name__ == "__main__":
    main()
