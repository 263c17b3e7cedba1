"""How many connections `polytok serve` keeps open, and which one gives way.

The standard library's ``ThreadingHTTPServer`` starts one thread per connection
and keeps it as long as the client keeps the connection open, so clients that
connect and send nothing (or a byte now and then) could take threads until the
process can start no more. Here:

- each connection's socket has a timeout (`IDLE_TIMEOUT`): a client silent that
  long, between requests or in the middle of one, is dropped (the stdlib's
  ``StreamRequestHandler.timeout``);
- at most `MAX_CONNECTIONS` are open at once. A new one beyond that takes the
  place of a connection that is not working: one waiting for a request first,
  then one still sending its request (headers or body), the one in that state
  longest first. A connection whose request is being worked on is never
  dropped; when every one is, the new connection is answered
  ``503 Service Unavailable`` at once and closed.

So idle and slow clients cannot keep out a client that has a request to make,
and the number of threads stays bounded.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

__all__ = ["IDLE_TIMEOUT", "MAX_CONNECTIONS", "IDLE", "SENDING", "WORKING", "Connections"]

IDLE_TIMEOUT = 20.0
MAX_CONNECTIONS = 32
IDLE, SENDING, WORKING = "idle", "sending", "working"
_GIVES_WAY = (IDLE, SENDING)  # in this order


class Connections:
    """The open connections and what each is doing; `admit` makes room for a new one."""

    def __init__(self, cap: int = MAX_CONNECTIONS) -> None:
        if cap < 1:
            raise ValueError("at least one connection must be allowed")
        self.cap = cap
        self._lock = threading.Lock()
        self._states: dict[socket.socket, tuple[str, float]] = {}

    def __len__(self) -> int:
        with self._lock:
            return len(self._states)

    def count(self, state: str) -> int:
        """How many open connections are in `state`."""
        with self._lock:
            return sum(known == state for known, _ in self._states.values())

    def admit(self, sock: socket.socket) -> bool:
        """Take `sock` in (as idle), dropping a connection that is not working if the cap is reached.

        Returns False when every open connection is working: the caller refuses `sock`.
        """
        with self._lock:
            if len(self._states) >= self.cap:
                victim = self._victim()
                if victim is None:
                    return False
                del self._states[victim]
                _hang_up(victim)
            self._states[sock] = (IDLE, time.monotonic())
            return True

    def mark(self, sock: socket.socket, state: str) -> None:
        """Record what `sock`'s request is doing now (a dropped connection stays dropped)."""
        with self._lock:
            known = self._states.get(sock)
            if known is not None and known[0] != state:  # the time is when it entered this state
                self._states[sock] = (state, time.monotonic())

    def drop(self, sock: socket.socket) -> None:
        with self._lock:
            self._states.pop(sock, None)

    def _victim(self) -> socket.socket | None:
        waiting = [(_GIVES_WAY.index(state), since, n, sock)
                   for n, (sock, (state, since)) in enumerate(self._states.items()) if state in _GIVES_WAY]
        return min(waiting)[3] if waiting else None


def _hang_up(sock: socket.socket) -> None:
    """End a connection another thread is reading from: its read returns end-of-file at once."""
    with contextlib.suppress(OSError):  # already closed by its client
        sock.shutdown(socket.SHUT_RDWR)
