"""Loaded by every Python started with this directory on PYTHONPATH (the server under test).

When MLTRIAGE_NETGUARD_LOG names a file, an audit hook records and refuses every attempt to reach
the network: name resolution, connect, bind, sendto. The first line written proves the hook was armed.
"""

import os
import sys

_LOG = os.environ.get("MLTRIAGE_NETGUARD_LOG")
_NETWORK_EVENTS = frozenset(
    {
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyaddr",
        "socket.getnameinfo",
        "urllib.Request",
        "http.client.connect",
    }
)

if _LOG:

    def _write(line: str) -> None:
        with open(_LOG, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def _hook(event: str, args: tuple) -> None:
        if event in _NETWORK_EVENTS:
            _write(f"VIOLATION {event} {args!r}")
            raise PermissionError(f"network access refused under test: {event}")

    sys.addaudithook(_hook)
    _write(f"armed pid={os.getpid()}")
