"""Writing and reading `summary.json`, the one file the HTML renderer needs.

The renderer accepts a summary made elsewhere (on a cluster, by an older run), so reading it is a
user-facing step: a missing, unreadable or foreign file is a usage error with one line, never a
traceback.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from isrcheck.contract.errors import UsageError
from isrcheck.reports.summary_layout import FORMAT

SUMMARY_NAME = "summary.json"


def now_utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _finite(value: Any) -> Any:
    """Non-finite floats (a record may hold 1e999 in free-form evidence) become null: JSON has none."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def write_summary(summary: dict[str, Any], directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / SUMMARY_NAME
    try:
        text = json.dumps(summary, indent=1, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(summary), indent=1, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def is_summary_input(path: Path) -> bool:
    """A `.json` file, or a directory holding summary.json (what `isrcheck summarize` writes)."""
    return (path.is_file() and path.suffix == ".json") or (path.is_dir() and (path / SUMMARY_NAME).is_file())


def load_summary(path: Path) -> dict[str, Any]:
    file = path / SUMMARY_NAME if path.is_dir() else path
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{file}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{file}: cannot read: {getattr(error, 'strerror', None) or error}") from None
    try:
        summary = json.loads(text)
    except ValueError as error:
        raise UsageError(f"{file}: not a summary: invalid JSON ({error})") from None
    if not isinstance(summary, dict) or summary.get("format") != FORMAT:
        raise UsageError(f"{file}: not a summary: expected \"format\": \"{FORMAT}\"")
    return summary
