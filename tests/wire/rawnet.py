"""Raw-socket helpers for the wire tests (127.0.0.1 only)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from types import TracebackType

from isrcheck.adapters.wire.codec import DecodedRequest, decode_request, parse_frame_size


def recv_exactly(sock: socket.socket, size: int) -> bytes:
    """Read ``size`` bytes or raise EOFError if the peer closes first."""
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise EOFError(f"closed after {len(data)} of {size} bytes")
        data += chunk
    return bytes(data)


def read_frame(sock: socket.socket) -> bytes:
    """Payload of the next frame (size prefix removed)."""
    return recv_exactly(sock, parse_frame_size(recv_exactly(sock, 4)))


def send_and_drain(address: tuple[str, int], data: bytes, timeout_s: float = 5.0) -> tuple[bytes, bool]:
    """Send ``data``, half-close, read until the server closes.

    Returns everything received and whether the server closed the connection (False means the
    read timed out with the connection still open).
    """
    with socket.create_connection(address, timeout=timeout_s) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:  # the server may already have hung up on a bad prefix
            return b"", True
        received = bytearray()
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except TimeoutError:
            return bytes(received), False
        except ConnectionResetError:
            return bytes(received), True
        return bytes(received), True


class ScriptedServer:
    """One-connection-at-a-time socket server answering each decoded request with ``script``.

    ``script(request)`` returns the bytes to send back (a full frame, possibly wrong on
    purpose) or ``None`` to stay silent.
    """

    def __init__(self, script: Callable[[DecodedRequest], bytes | None]) -> None:
        self._script = script
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.address: tuple[str, int] = self._listener.getsockname()[:2]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(5)
        self._listener.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(0.2)
                self._serve(conn)

    def _serve(self, conn: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                payload = read_frame(conn)
            except TimeoutError:
                continue
            except (EOFError, OSError):
                return
            answer = self._script(decode_request(payload))
            if answer is not None:
                conn.sendall(answer)
