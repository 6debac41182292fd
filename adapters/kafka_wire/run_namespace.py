"""A fresh system per run on one long-lived controller: every run gets its own broker ids and
topic names, mapped to and from the engine's small ones.

The engine and the scenarios use broker ids 0–9 and topics such as `t0`; a KRaft controller
keeps every registration and topic forever (there is no reset RPC). Run `r` of a session
therefore uses broker ids ``base + r·STRIDE + b`` and topic names ``<prefix>r<r>-<topic>``, so
nothing of an earlier run (or of another session on the same controller) is ever addressed
again. Negative ids (e.g. -1 "no leader", or a deliberately invalid ISR member) are kept as
they are; ids from other runs never appear in this run's state.

The one thing a namespace cannot isolate is the controlled-shutdown completion rule, which
reads the metadata offsets of *every* active broker (controller.md §4.2, §4.6): runs of
several sessions at the same time on one controller can delay each other's shutdowns.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

STRIDE = 100
"""Local broker ids 0 … STRIDE-1 are mapped; ANCHOR is reserved for the adapter's own broker."""
ANCHOR = STRIDE - 1
MAX_BROKER_ID = 2**31 - 1
RUNS_PER_SESSION = 100_000
SESSION_BLOCK = STRIDE * RUNS_PER_SESSION


class NamespaceError(ValueError):
    """A local id this namespace cannot map."""


@dataclass(frozen=True)
class RunNamespace:
    first_id: int
    """Global id of local broker 0."""
    topic_prefix: str

    @classmethod
    def for_run(cls, session_base: int, session_tag: str, run: int) -> RunNamespace:
        """Run `run` of a session; broker blocks wrap after RUNS_PER_SESSION runs (topic names,
        which carry the run number, never repeat)."""
        return cls(session_base + (run % RUNS_PER_SESSION) * STRIDE, f"{session_tag}r{run}-")

    def broker(self, local: int) -> int:
        if local < 0:
            return local
        if local >= STRIDE:
            raise NamespaceError(f"broker id {local} is outside the mappable range 0..{STRIDE - 1}")
        return self.first_id + local

    def local_broker(self, global_id: int) -> int:
        if global_id < 0:
            return global_id
        local = global_id - self.first_id
        return local if 0 <= local < STRIDE else global_id

    def brokers(self, ids: list[int] | tuple[int, ...]) -> list[int]:
        return [self.broker(int(b)) for b in ids]

    def local_brokers(self, ids: list[int] | tuple[int, ...]) -> list[int]:
        return [self.local_broker(int(b)) for b in ids]

    def owns(self, global_id: int) -> bool:
        return self.first_id <= global_id < self.first_id + STRIDE

    def topic(self, local: str) -> str:
        return self.topic_prefix + local

    def local_topic(self, name: str) -> str:
        return name[len(self.topic_prefix):] if name.startswith(self.topic_prefix) else name


def new_session() -> tuple[int, str]:
    """A random (base id, topic tag) for one adapter session: sessions sharing a controller
    almost surely use disjoint blocks; the adapter still skips blocks it sees in use."""
    blocks = MAX_BROKER_ID // SESSION_BLOCK - 1
    return (1 + secrets.randbelow(blocks)) * SESSION_BLOCK, "i" + secrets.token_hex(3)
