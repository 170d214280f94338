"""Prints N free TCP ports on 127.0.0.1, one per line.

All sockets are bound (port 0: the kernel picks) before any is closed, so the N
ports are distinct. The servers bind them a moment later.
"""
import socket
import sys

count = int(sys.argv[1]) if len(sys.argv) > 1 else 1
sockets = []
for _ in range(count):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    sockets.append(s)
for s in sockets:
    print(s.getsockname()[1])
for s in sockets:
    s.close()
