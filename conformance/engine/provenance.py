"""What ran, for the records: the isrcheck version and the commit of the checkout it ran from,
and what each run checked (the properties of its level, the protocol outcomes it reached).

A report read later, by someone who was not there, must be able to say which isrcheck produced
it; the report reads nothing but records, so the engine writes these into every record.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path

from isrcheck.conformance.properties.catalogue import ALL_PROPERTIES, CONTROLLER_PROPERTIES

import isrcheck


@dataclass(frozen=True)
class Provenance:
    version: str | None
    commit: str | None


def _version() -> str | None:
    try:
        return metadata.version("isrcheck")
    except metadata.PackageNotFoundError:
        return None


def _git(checkout: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True, timeout=10,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def commit_of(checkout: Path) -> str | None:
    """`<sha>` of the checkout's HEAD, `<sha>+dirty` with uncommitted changes to tracked files,
    None when `checkout` is not a git work tree (an installed wheel) or git is absent."""
    head = _git(checkout, "rev-parse", "HEAD")
    if not head:
        return None
    changes = _git(checkout, "status", "--porcelain", "--untracked-files=no")
    return head + ("+dirty" if changes else "")


@cache
def current_provenance() -> Provenance:
    """Once per process: git is asked once, not once per run."""
    checkout = Path(isrcheck.__file__).resolve().parent.parent
    commit = commit_of(checkout) if (checkout / ".git").exists() else None
    return Provenance(_version(), commit)


def properties_checked(level: str) -> list[str]:
    """The properties a run of `level` checks on the target (conformance/properties)."""
    return list(ALL_PROPERTIES if level == "cluster" else CONTROLLER_PROPERTIES)
