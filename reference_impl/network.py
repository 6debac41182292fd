"""The deterministic network: every RPC is a `Message` that sits here until the scheduler
delivers, drops or duplicates it. Nothing is delivered by itself; `hold` rules keep matching
messages out of the "deliverable" set (a partition between nodes, a delayed response).
Order of `inflight` is send order, so "oldest deliverable" is FIFO and a seeded choice among
`deliverable()` reorders reproducibly.
"""

from __future__ import annotations

from dataclasses import dataclass

from .rpc import Message, Node


@dataclass(frozen=True, slots=True)
class Selector:
    """Which messages an operation means: any field left None matches everything."""

    kind: str | None = None
    src: Node | None = None
    dst: Node | None = None

    def matches(self, message: Message) -> bool:
        return (
            (self.kind is None or self.kind == message.kind)
            and (self.src is None or self.src == message.src)
            and (self.dst is None or self.dst == message.dst)
        )

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "from": self.src, "to": self.dst}


class Network:
    def __init__(self) -> None:
        self.inflight: dict[int, Message] = {}
        self.holds: list[Selector] = []
        self.next_id = 1
        self._held: dict[tuple[str, Node, Node], bool] = {}
        """Whether the current hold rules keep back a message of this (kind, src, dst); a hold
        rule reads nothing else, and a run has few such triples, so this is asked once per triple
        between changes of the rules instead of once per message per scheduler event."""

    def send(
        self, kind: str, src: Node, dst: Node, payload: object, correlation: int = 0, src_serial: int = 0,
        dst_serial: int = 0,
    ) -> Message:
        message = Message(self.next_id, kind, src, dst, payload, correlation, src_serial, dst_serial)
        self.next_id += 1
        self.inflight[message.id] = message
        return message

    def duplicate(self, message: Message) -> Message:
        """A second copy (new id, same content and correlation), queued behind everything."""
        copy = Message(self.next_id, message.kind, message.src, message.dst, message.payload, message.correlation,
                       message.src_serial, message.dst_serial)
        self.next_id += 1
        self.inflight[copy.id] = copy
        return copy

    def take(self, message_id: int) -> Message:
        return self.inflight.pop(message_id)

    def is_held(self, message: Message) -> bool:
        key = (message.kind, message.src, message.dst)
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = any(rule.matches(message) for rule in self.holds)
        return held

    def oldest_deliverable(self) -> Message | None:
        if not self.holds:
            return next(iter(self.inflight.values()), None)
        held = self._held
        for message in self.inflight.values():
            verdict = held.get(message[1:4])  # (kind, src, dst): one slice of the NamedTuple
            if verdict is None:
                verdict = self.is_held(message)
            if not verdict:
                return message
        return None

    def deliverable(self) -> list[Message]:
        if not self.holds:
            return list(self.inflight.values())
        return [m for m in self.inflight.values() if not self.is_held(m)]

    def matching(self, selector: Selector) -> list[Message]:
        return [m for m in self.inflight.values() if selector.matches(m)]

    def hold(self, selector: Selector) -> None:
        if selector not in self.holds:
            self.holds.append(selector)
            self._held.clear()

    def release(self, selector: Selector | None = None) -> int:
        """Lift the hold rules equal to `selector` (all rules if None); returns how many."""
        before = len(self.holds)
        self.holds = [] if selector is None else [rule for rule in self.holds if rule != selector]
        self._held.clear()
        return before - len(self.holds)
