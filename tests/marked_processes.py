"""Which processes carry a test's mark: tests that must prove isrcheck leaves nothing running start
it with a unique value in one environment variable, which every descendant inherits (reparented
or not), and then ask /proc which marked processes are still alive."""

from __future__ import annotations

from pathlib import Path


def marked_processes(variable: str, mark: str) -> dict[int, list[str]]:
    """Live processes (not zombies) whose environment holds `variable=mark`: pid → argv."""
    found = {}
    needle = f"{variable}={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except (OSError, IndexError):
            continue
        if state != "Z":
            found[int(entry.name)] = argv
    return found
