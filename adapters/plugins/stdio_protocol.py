"""The `exec:` plug-in protocol: one JSON request per line on the implementation's stdin, one
JSON reply per line on its stdout (docs/exec-protocol.md). Both sides use these helpers."""

from __future__ import annotations

import json
from typing import Any

PROTOCOL = "isrcheck.exec/1"
METHODS = ("describe", "open", "execute", "observe", "close")


def request_line(request_id: int, method: str, params: dict[str, Any]) -> str:
    return json.dumps({"id": request_id, "method": method, "params": params}, separators=(",", ":")) + "\n"


def reply_line(request_id: Any, result: Any = None, error: dict[str, str] | None = None) -> str:
    body: dict[str, Any] = {"id": request_id}
    if error is not None:
        body["error"] = error
    else:
        body["result"] = result
    return json.dumps(body, separators=(",", ":")) + "\n"
