"""Waits until every URL given answers HTTP (any status), for at most --timeout seconds.

Exits 0 when all answer, 1 (naming the silent ones) when the time is up or when a
server process named with --pid has died.
"""
import argparse
import os
import sys
import time
import urllib.error
import urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("urls", nargs="+")
parser.add_argument("--timeout", type=float, default=60)
parser.add_argument("--pid", type=int, action="append", default=[])
args = parser.parse_args()


def answers(url):
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


deadline = time.monotonic() + args.timeout
waiting = list(args.urls)
while waiting:
    waiting = [url for url in waiting if not answers(url)]
    if not waiting:
        break
    dead = [pid for pid in args.pid if not alive(pid)]
    if dead:
        print(f"server process(es) {dead} exited; still waiting for {waiting}", file=sys.stderr)
        sys.exit(1)
    if time.monotonic() > deadline:
        print(f"no answer within {args.timeout:.0f} s from {waiting}", file=sys.stderr)
        sys.exit(1)
    time.sleep(0.2)
