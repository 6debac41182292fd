"""A counterexample drawn as an inline SVG sequence diagram.

A shrunk interleaving is read as messages between actors — brokers, the controller, the admin
client, the clock, the network — so it is drawn the way distributed-systems bugs are explained
(Jepsen and Maelstrom timelines, Lamport diagrams): one lifeline per actor, one arrow per step in
order, the step where reference and target part ways highlighted, and differing results shown
side by side. Every string from a record is escaped; the SVG is inline, so nothing is fetched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from html import escape
from typing import Any

from isrcheck.contract.operations.implementation_defined import IMPLEMENTATION_DEFINED, differences

LANE = 150  # px between lifelines at most
MIN_LANE = 100  # px between lifelines at least: narrower, the arrows' labels would be unreadable
FIT_WIDTH = 1100  # px a diagram aims at: the report's content box at 1400 px, with its margins
SIDE = 150  # px right of the last lane for a self-loop's text
ROW = 46  # px per step
TOP = 56  # px above the first step: actor boxes
LEFT = 44  # px for step numbers
MAX_STEPS = 300  # longer counterexamples are cut (shrunk ones are far shorter)
TIMEOUT_CODES = frozenset({"REQUEST_TIMED_OUT"})

_ACTOR_RANK = {"admin": 0, "controller": 1, "network": 4, "clock": 5}
_BROKER = re.compile(r"broker\s*(\d+)$")


def actor_order(steps: Sequence[dict[str, Any]]) -> list[str]:
    """Admin, controller, brokers by id, other actors as met, then network and clock."""
    seen: dict[str, int] = {}
    for step in steps:
        for actor in (_actor(step, "src"), _actor(step, "dst")):
            seen.setdefault(actor, len(seen))

    def key(actor: str) -> tuple[int, int, int]:
        if actor in _ACTOR_RANK:
            return (_ACTOR_RANK[actor], 0, 0)
        match = _BROKER.match(actor)
        if match:
            return (2, int(match.group(1)), 0)
        return (3, 0, seen[actor])

    return sorted(seen, key=key)


def _actor(step: dict[str, Any], role: str) -> str:
    value = step.get(role)
    return value if isinstance(value, str) and value else "?"


def compact(value: Any, limit: int = 60) -> str:
    """JSON on one line, cut to `limit` characters."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def short_result(result: Any, limit: int = 34) -> str:
    """What a person wants from a result at a glance: its error, else the whole thing, cut."""
    if result is None:
        return "—"
    if isinstance(result, dict) and "error" in result:
        rest = {k: v for k, v in result.items() if k != "error"}
        head = str(result["error"])
        return compact(head + (" " + compact(rest, limit) if rest else ""), limit)
    return compact(result, limit)


def differs(step: dict[str, Any]) -> bool:
    """Reference and target answered differently in a field the protocol fixes (a divergence).
    Fields it leaves to the implementation (`IMPLEMENTATION_DEFINED`) never count."""
    return bool(differences(step.get("reference"), step.get("target")).divergent)


def allowed_only(step: dict[str, Any]) -> tuple[str, ...]:
    """The implementation-defined fields in which the two answers differ, when those are all
    they differ in (drawn grey, with the reason, never as a divergence)."""
    found = differences(step.get("reference"), step.get("target"))
    return () if found.divergent else found.allowed


def expected_timeout(step: dict[str, Any]) -> bool:
    """Both sides answered with a timeout: the step ended before an answer came (a cluster-level
    registration before the scheduler delivered it), which both implementations agree on."""
    reference = step.get("reference")
    return (isinstance(reference, dict) and reference.get("error") in TIMEOUT_CODES
            and not differs(step))


def lane_width(actors: int) -> int:
    """Lanes share `FIT_WIDTH`, between `MIN_LANE` and `LANE` each: a cluster diagram with nine
    actors fits the page instead of pushing its network and clock lanes off-screen."""
    room = (FIT_WIDTH - LEFT - SIDE) // max(actors, 1)
    return max(MIN_LANE, min(LANE, room))


def sequence_svg(counterexample: dict[str, Any], label: str, uid: str, compared: bool = True) -> str:
    """The diagram for one counterexample; `label` names it for screen readers, `uid` (not from
    the record) keeps its arrow-head ids apart from the other diagrams on the page. `compared`
    False (a cluster-level run, or --no-differential) draws differing results as the two sides'
    own answers, not as divergences: the run judged the target by its properties alone."""
    steps = [s for s in counterexample.get("steps") or [] if isinstance(s, dict)][:MAX_STEPS]
    diverging = counterexample.get("diverging_step")
    actors = actor_order(steps)
    lane = lane_width(len(actors))
    x_of = {actor: LEFT + lane // 2 + i * lane for i, actor in enumerate(actors)}
    width = LEFT + lane * max(len(actors), 1) + SIDE
    height = TOP + ROW * len(steps) + 24
    parts = [
        # the width is a maximum: CSS scales the drawing down to its box (viewBox keeps proportions)
        f'<svg class="sequence" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'style="max-width:100%;height:auto" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(label)}">',
        "<defs>",
        *(f'<marker id="{uid}-{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
          f'markerHeight="7" orient="auto"><path class="head-{name}" d="M0,0 L10,5 L0,10 z"/></marker>'
          for name in ("plain", "hot")),
        "</defs>",
    ]
    for index, step in enumerate(steps):
        if step.get("index") == diverging:
            y = TOP + index * ROW
            parts.append(f'<rect class="diverging-row" x="0" y="{y}" width="{width}" height="{ROW}"/>')
    for actor, x in x_of.items():
        parts.append(f'<line class="lifeline" x1="{x}" y1="34" x2="{x}" y2="{height - 8}"/>')
        box = lane - 12
        parts.append(f'<rect class="actor" x="{x - box // 2}" y="6" width="{box}" height="26" rx="5"/>'
                     f'<text class="actor-name" x="{x}" y="24">{escape(compact(actor, box // 7))}</text>')
    for index, step in enumerate(steps):
        parts.append(_step_svg(step, TOP + index * ROW, x_of, step.get("index") == diverging, uid, compared))
    parts.append("</svg>")
    return "".join(parts)


def _step_svg(step: dict[str, Any], top: int, x_of: dict[str, int], diverging: bool, uid: str,
              compared: bool = True) -> str:
    src, dst = x_of[_actor(step, "src")], x_of[_actor(step, "dst")]
    y = top + ROW // 2 + 4
    number = step.get("index", "")
    allowed = allowed_only(step)
    timeout = expected_timeout(step)
    divergent = compared and differs(step)
    uncompared = not compared and differs(step)
    classes = ("step" + (" diverging" if diverging else "") + (" differs" if divergent else "")
               + (" allowed" if allowed else "") + (" expected" if timeout else "")
               + (" uncompared" if uncompared else ""))
    op = str(step.get("op", "?"))
    args = step.get("args")
    call = op + (" " + compact(args, 200) if args not in (None, {}, []) else "")
    why = ""
    if divergent:
        result = f"ref {short_result(step.get('reference'), 24)} ≠ target {short_result(step.get('target'), 24)}"
    elif uncompared:
        result = f"target {short_result(step.get('target'), 24)} · ref {short_result(step.get('reference'), 24)}"
        why = "\nnot compared: at this level each side answers on its own timing; only properties judge the target"
    elif allowed:
        result = f"→ {short_result(_without(step.get('reference'), allowed))} · {', '.join(allowed)} may differ"
        why = "\nallowed difference: " + "; ".join(IMPLEMENTATION_DEFINED[name] for name in allowed)
    elif timeout:
        result = "→ no answer within the step (REQUEST_TIMED_OUT on both sides)"
        why = "\nexpected: the step ended before the answer was delivered; both implementations agree"
    else:
        result = "→ " + short_result(step.get("reference"))
    tooltip = f"{number}. {call}\nreference: {compact(step.get('reference'), 400)}\n" \
              f"target: {compact(step.get('target'), 400)}{why}"
    marker = f'marker-end="url(#{uid}-{"hot" if diverging or divergent else "plain"})"'
    out = [f'<g class="{classes}" data-step="{escape(str(number))}"><title>{escape(tooltip)}</title>',
           f'<text class="step-number" x="{LEFT - 8}" y="{y + 4}">{escape(str(number))}</text>']
    if src == dst:
        path = f"M{src},{y - 8} h34 v16 h-34"
        out.append(f'<path class="arrow" d="{path}" {marker}/>')
        out.append(f'<text class="call side" x="{src + 42}" y="{y - 3}">{escape(compact(call, 34))}</text>')
        out.append(f'<text class="result side" x="{src + 42}" y="{y + 12}">{escape(compact(result, 40))}</text>')
    else:
        middle = (src + dst) // 2
        room = max(abs(dst - src) // 6, 22)
        out.append(f'<line class="arrow" x1="{src}" y1="{y}" x2="{dst + (-4 if dst > src else 4)}" y2="{y}" '
                   f"{marker}/>")
        out.append(f'<text class="call" x="{middle}" y="{y - 6}">{escape(compact(call, room + 12))}</text>')
        out.append(f'<text class="result" x="{middle}" y="{y + 14}">{escape(compact(result, room + 16))}</text>')
    out.append("</g>")
    return "".join(out)


def _without(result: Any, fields: tuple[str, ...]) -> Any:
    return {k: v for k, v in result.items() if k not in fields} if isinstance(result, dict) else result


def differing_steps(counterexample: dict[str, Any], compared: bool = True) -> list[dict[str, Any]]:
    """Steps whose reference and target results differ at all (divergences, and differences the
    protocol allows, which the table shows in grey), for the table under the diagram; none when
    the run did not compare results (the table would list timing, not divergences)."""
    if not compared:
        return []
    return [s for s in counterexample.get("steps") or []
            if isinstance(s, dict) and (differs(s) or allowed_only(s))]
