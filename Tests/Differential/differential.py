#!/usr/bin/env python3
"""Seeded random differential: InMemoryBackend against a real json-server 0.17.4.

Sends the same random requests to a fresh json-server and to InMemoryBackend (through the
depot-inmemory-replay executable), both seeded with JSONPlaceholder's data, and prints every
difference with its seed. Per seed: random reads on the pristine data, then random write
sequences (POST with and without ids, PUT, PATCH, DELETE of existing, fresh and missing ids,
nested POSTs, reads in between), each on a fresh json-server and a fresh backend, each ending
with GET /db.

For a developer's machine, not CI: it needs json-server assembled by
../shared/tools/json-server.sh, and skips (exit 0) with a message when JSONSERVER_DIR is unset.
See Tests/Differential/README.md.

    python3 Tests/Differential/differential.py --seeds 1-10 --sequences 20 --reads 500
"""

import argparse
import http.client
import json
import os
import random
import re
import socket
import subprocess
import sys
import time
import urllib.parse

COLLECTIONS = ["posts", "comments", "albums", "photos", "users", "todos"]
PARENT = {"posts": "users", "comments": "posts", "albums": "users", "photos": "albums", "todos": "users"}
FOREIGN_KEY = {"posts": "userId", "comments": "postId", "albums": "userId", "photos": "albumId", "todos": "userId"}
TEXT_FIELDS = {
    "posts": ["title", "body"], "comments": ["name", "email", "body"], "albums": ["title"],
    "photos": ["title", "url"], "users": ["name", "username", "email"], "todos": ["title"],
}
WORDS = ["qui", "est", "et", "sunt", "dolor", "magnam", "ea", "Bret", "nesciunt", "zzz", "ab"]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class JSONServer:
    """A fresh json-server 0.17.4 over DATA_JSON on a free port, stopped by PID."""

    def __init__(self, directory, node_path, data):
        self.port = free_port()
        env = dict(os.environ, PORT=str(self.port), DATA_JSON=data, NODE_PATH=node_path)
        self.process = subprocess.Popen(
            ["node", "serve-stateful.js"], cwd=directory, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                self.connection.request("GET", "/db")
                self.connection.getresponse().read()
                return
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError("json-server did not start")
                time.sleep(0.05)

    def send(self, method, path, body):
        headers = {"Content-Type": "application/json"} if body is not None else {}
        self.connection.request(method, "/" + path, body=body, headers=headers)
        response = self.connection.getresponse()
        text = response.read().decode("utf-8", "replace")
        fields = {name: response.getheader(name) for name in ["Content-Type", "X-Total-Count", "Link", "Location"]}
        return {"status": response.status, "headers": {k: v for k, v in fields.items() if v is not None},
                "body": text}

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Replay:
    """InMemoryBackend in depot-inmemory-replay, fed one JSON line per request."""

    def __init__(self, executable, data):
        self.process = subprocess.Popen(
            [executable, data], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def call(self, line):
        self.process.stdin.write(json.dumps(line) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError("depot-inmemory-replay stopped")
        return json.loads(answer)

    def send(self, method, path, body):
        return self.call({"method": method, "path": path, "body": body})

    def reset(self):
        self.call({"reset": True})

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


def parse(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


def normalize_link(value):
    """A URL header without its scheme and host; an empty field (json-server sends `Link: ` on a
    page past the end) as no field."""
    return re.sub(r"https?://[^/]+/", "/", value) if value else None


def same(js, depot, tolerant, key=None):
    """JSON equality; `tolerant` also takes json-server's `"userId": "1"` for Depot's `1` in a
    foreign key (a nested POST stores the URL's text: a deliberate difference)."""
    if isinstance(js, dict) and isinstance(depot, dict):
        return js.keys() == depot.keys() and all(same(js[k], depot[k], tolerant, k) for k in js)
    if isinstance(js, list) and isinstance(depot, list):
        return len(js) == len(depot) and all(same(a, b, tolerant) for a, b in zip(js, depot))
    if (tolerant and key is not None and key.endswith("Id") and isinstance(js, str)
            and isinstance(depot, int) and not isinstance(depot, bool) and js == str(depot)):
        return True
    return type(js) is type(depot) and js == depot


def compare(js, depot, tolerant=False):
    """The differences between two answers, as text; empty when they agree."""
    differences = []
    if js["status"] != depot["status"]:
        differences.append(f"status {js['status']} vs {depot['status']}")
    js_body, depot_body = parse(js["body"]), parse(depot["body"])
    if not same(js_body, depot_body, tolerant):
        differences.append(f"body {js['body'][:300]!r} vs {depot['body'][:300]!r}")
        if isinstance(js_body, list) and isinstance(depot_body, list):
            for index, (a, b) in enumerate(zip(js_body, depot_body)):
                if not same(a, b, tolerant):
                    differences.append(f"first difference at [{index}]: {json.dumps(a)} vs {json.dumps(b)}")
                    break
            else:
                longer = js_body if len(js_body) > len(depot_body) else depot_body
                extra = json.dumps(longer[min(len(js_body), len(depot_body))])
                differences.append(f"lengths {len(js_body)} vs {len(depot_body)}; first extra: {extra}")
    for name in ["X-Total-Count", "Link", "Location"]:
        a, b = normalize_link(js["headers"].get(name)), normalize_link(depot["headers"].get(name))
        if a != b:
            differences.append(f"{name} {a!r} vs {b!r}")
    return differences


def documented(method, js, depot):
    """The row of the README's table of deliberate differences this answer falls under, if any."""
    if method == "POST" and js["status"] == 500 and depot["status"] == 409:
        return "POST with an id that is taken"
    if not compare(js, depot, tolerant=True):
        return "nested POST stores the parent's id as stored"
    return None


class Model:
    """What the generator knows of the data: ids per collection (to pick existing, fresh and
    missing ones), updated from the answers of the backend under test."""

    def __init__(self, database):
        self.ids = {name: [r["id"] for r in database[name]] for name in COLLECTIONS}
        self.sample = {name: database[name][:50] for name in COLLECTIONS}

    def learn(self, method, path, depot):
        parts = path.split("?")[0].split("/")
        name = parts[-1] if method == "POST" else parts[0]
        if name not in self.ids:
            return
        if method == "POST" and depot["status"] == 201:
            record = parse(depot["body"])
            if isinstance(record, dict) and "id" in record:
                self.ids[name].append(record["id"])


def pick_id(rng, model, name):
    roll = rng.random()
    if roll < 0.75 and model.ids[name]:
        return rng.choice(model.ids[name])
    if roll < 0.9:
        return max([i for i in model.ids[name] if isinstance(i, int)] or [0]) + rng.randint(0, 3)
    return rng.choice([9999, "nope", 0, -1])


def foreign_value(rng, model, name):
    parent = PARENT[name]
    roll = rng.random()
    if roll < 0.7:
        return rng.choice(model.ids[parent])
    if roll < 0.8:
        return str(rng.choice(model.ids[parent]))
    if roll < 0.92:
        return rng.randint(500, 20000)
    return rng.choice([False, "", "x"])


def record_body(rng, model, name, with_id):
    body = {}
    for field in TEXT_FIELDS[name]:
        if rng.random() < 0.7:
            body[field] = rng.choice(WORDS) + " " + rng.choice(WORDS)
    if name in FOREIGN_KEY and rng.random() < 0.85:
        body[FOREIGN_KEY[name]] = foreign_value(rng, model, name)
    if name == "todos" and rng.random() < 0.5:
        body["completed"] = rng.random() < 0.5
    if with_id:
        roll = rng.random()
        if roll < 0.4:
            body["id"] = rng.choice(model.ids[name]) if model.ids[name] else 1
        elif roll < 0.8:
            body["id"] = max([i for i in model.ids[name] if isinstance(i, int)] or [0]) + rng.randint(1, 50)
        else:
            body["id"] = "x" + "".join(rng.choice("abcdefgh") for _ in range(5))
    return body


def path_id(value):
    return urllib.parse.quote(str(value), safe="")


def random_write(rng, model):
    name = rng.choice(COLLECTIONS)
    roll = rng.random()
    if roll < 0.3:
        return "POST", name, json.dumps(record_body(rng, model, name, with_id=rng.random() < 0.4))
    if roll < 0.4 and name in PARENT:
        parent = PARENT[name]
        parent_id = pick_id(rng, model, parent)
        body = record_body(rng, model, name, with_id=False)
        body.pop(FOREIGN_KEY[name], None)
        return "POST", f"{parent}/{path_id(parent_id)}/{name}", json.dumps(body)
    if roll < 0.55:
        return "PUT", f"{name}/{path_id(pick_id(rng, model, name))}", json.dumps(record_body(rng, model, name, False))
    if roll < 0.7:
        return "PATCH", f"{name}/{path_id(pick_id(rng, model, name))}", json.dumps(record_body(rng, model, name, False))
    return "DELETE", f"{name}/{path_id(pick_id(rng, model, name))}", None


def query_string(items):
    return "&".join(f"{urllib.parse.quote(k, safe='_')}={urllib.parse.quote(str(v), safe='')}" for k, v in items)


def random_read(rng, model, pristine):
    name = rng.choice(COLLECTIONS)
    roll = rng.random()
    if roll < 0.15:
        return f"{name}/{path_id(pick_id(rng, model, name))}"
    if roll < 0.22 and name in PARENT:
        return f"{PARENT[name]}/{path_id(pick_id(rng, model, PARENT[name]))}/{name}"
    items = []
    sample = rng.choice(model.sample[name]) if model.sample[name] else {}
    fields = [f for f in sample if not isinstance(sample[f], (dict, list))]
    for _ in range(rng.randint(0, 3)):
        kind = rng.random()
        if not fields:
            break
        field = rng.choice(fields)
        # json-server answers a repeated _sort, _page, … with a 500 (its `_sort.split`): each once.
        used = {key for key, _ in items if key.startswith("_")}
        if 0.45 <= kind < 0.85 and used & {"_sort", "_page", "_start"}:
            continue
        if kind < 0.3:
            items.append((field, sample[field]))
            if rng.random() < 0.3:
                other = rng.choice(model.sample[name])
                items.append((field, other.get(field, "")))
        elif kind < 0.45:
            items.append(("q", rng.choice(WORDS)))
        elif kind < 0.6 and (pristine or not field.endswith("Id")):
            items.append(("_sort", field))
            if rng.random() < 0.6:
                items.append(("_order", rng.choice(["asc", "desc"])))
        elif kind < 0.75:
            items.append(("_page", rng.randint(1, 6)))
            items.append(("_limit", rng.randint(1, 25)))
        elif kind < 0.85:
            start = rng.randint(0, 60)
            items.append(("_start", start))
            items.append(("_end", start + rng.randint(0, 30)))
        elif (kind < 0.92 and isinstance(sample[field], (int, float)) and not isinstance(sample[field], bool)
              and (pristine or not field.endswith("Id"))):
            items.append((field + rng.choice(["_gte", "_lte", "_ne"]), sample[field]))
        elif isinstance(sample[field], str):
            items.append((field + "_like", rng.choice(WORDS)))
    if pristine and rng.random() < 0.1:
        if name in PARENT:
            items.append(("_expand", PARENT[name][:-1]))
        elif name == "users":
            items.append(("_embed", rng.choice(["posts", "albums", "todos"])))
    if not any(k in ("_limit", "_end", "_page", "_start") for k, _ in items) and rng.random() < 0.7:
        items.append(("_limit", rng.randint(1, 10)))
    return name + ("?" + query_string(items) if items else "")


class Run:
    def __init__(self, args, database):
        self.args = args
        self.database = database
        self.replay = Replay(args.replay, os.environ["DATA_JSON"])
        self.requests = 0
        self.reads = 0
        self.writes = 0
        self.differences = 0
        self.documented = {}

    def step(self, seed, label, server, method, path, body, model=None):
        js = server.send(method, path, body)
        depot = self.replay.send(method, path, body)
        self.requests += 1
        if method in ("GET", "HEAD"):
            self.reads += 1
        else:
            self.writes += 1
        if model is not None:
            model.learn(method, path, depot)
        found = compare(js, depot)
        if found:
            row = documented(method, js, depot)
            if row:
                self.documented[row] = self.documented.get(row, 0) + 1
                return True
            self.differences += 1
            print(f"seed {seed} {label}: {method} /{path} {body or ''}", flush=True)
            for line in found:
                print("    " + line)
            return False
        return True

    def fresh(self):
        """A fresh json-server, and the backend seeded afresh."""
        server = JSONServer(os.environ["JSONSERVER_DIR"], os.environ.get("JSONSERVER_NODE_PATH", ""),
                            os.environ["DATA_JSON"])
        self.replay.reset()
        return server

    def seed(self, seed):
        rng = random.Random(seed)
        server = self.fresh()
        try:
            model = Model(self.database)
            for index in range(self.args.reads):
                self.step(seed, f"read {index}", server, "GET", random_read(rng, model, True), None)
        finally:
            server.stop()
        for sequence in range(self.args.sequences):
            server = self.fresh()
            try:
                model = Model(self.database)
                for index in range(self.args.writes):
                    method, path, body = random_write(rng, model)
                    label = f"sequence {sequence} write {index}"
                    if not self.step(seed, label, server, method, path, body, model):
                        break
                    if rng.random() < 0.5:
                        self.step(seed, label + " read", server, "GET", random_read(rng, model, False), None)
                self.step(seed, f"sequence {sequence} end", server, "GET", "db", None)
            finally:
                server.stop()


def seeds(text):
    result = []
    for part in text.split(","):
        if "-" in part:
            low, high = part.split("-")
            result.extend(range(int(low), int(high) + 1))
        else:
            result.append(int(part))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="1-10", help="seeds: 1-10 or 3,7,12 (default 1-10)")
    parser.add_argument("--sequences", type=int, default=20, help="write sequences per seed (default 20)")
    parser.add_argument("--writes", type=int, default=16, help="writes per sequence (default 16)")
    parser.add_argument("--reads", type=int, default=500, help="reads of the pristine data per seed (default 500)")
    parser.add_argument("--replay", help="the depot-inmemory-replay executable (default: built with swift build)")
    args = parser.parse_args()
    if not os.environ.get("JSONSERVER_DIR"):
        print("differential skipped: JSONSERVER_DIR is not set. Assemble json-server 0.17.4 with "
              "../shared/tools/json-server.sh OUTDIR MIRROR_ROOT and export the lines it prints "
              "(see Tests/Differential/README.md).")
        return 0
    if not os.environ.get("DATA_JSON"):
        print("differential: DATA_JSON is not set; export the lines json-server.sh prints", file=sys.stderr)
        return 2
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not args.replay:
        subprocess.run(["swift", "build", "--product", "depot-inmemory-replay"], cwd=root, check=True)
        bin_path = subprocess.run(["swift", "build", "--show-bin-path"], cwd=root, check=True,
                                  capture_output=True, text=True).stdout.strip()
        args.replay = os.path.join(bin_path, "depot-inmemory-replay")
    with open(os.environ["DATA_JSON"], encoding="utf-8") as handle:
        database = json.load(handle)
    run = Run(args, database)
    try:
        for seed in seeds(args.seeds):
            run.seed(seed)
            print(f"seed {seed} done: {run.requests} requests so far, {run.differences} differences", flush=True)
    finally:
        run.replay.stop()
    documented_text = ", ".join(f"{row}: {count}" for row, count in sorted(run.documented.items())) or "none"
    print(f"differential: seeds {args.seeds}, {run.requests} requests ({run.reads} reads, {run.writes} writes, "
          f"{len(seeds(args.seeds)) * args.sequences} write sequences), {run.differences} differences; "
          f"documented differences seen: {documented_text}")
    return 1 if run.differences else 0


if __name__ == "__main__":
    sys.exit(main())
