"""P-HWC: the consumer-visible high watermark (ListOffsets latest) of a partition never decreases
(KIP-207; leader.md §15). Judged on a black-box history's views.
"""

from __future__ import annotations

from typing import Any

from isrcheck.conformance.properties.black_box_history import HistoryConfig, exposure_points
from isrcheck.conformance.properties.checker import Property, Violation


def views(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """P-HWC: ListOffsets(latest) never goes backwards (KIP-207 made it monotonic across leader
    changes: a new leader answers OFFSET_NOT_AVAILABLE until its HW caught up)."""
    exposed = exposure_points(history, config)
    highest: dict[str, tuple[int, int]] = {}
    violations = []
    for e in history:
        if e["type"] == "op":
            for partition, points in exposed.items():
                if e["i"] in points:
                    highest.pop(partition, None)
        if e["type"] != "observe" or e["view"].get("hw") is None:
            continue
        partition, hw = e["partition"], int(e["view"]["hw"])
        best = highest.get(partition)
        if best is not None and hw < best[0]:
            violations.append(Violation("P-HWC", e["i"], f"{partition}: the high watermark a consumer sees went "
                                        f"back from {best[0]} (entry {best[1]}) to {hw}",
                                        {"before": best[0], "after": hw, "leader": e["view"].get("leader")}))
        if best is None or hw != best[0]:
            highest[partition] = (hw, e["i"])  # after a decline, report only a further one
    return violations


PROPERTY = Property("P-HWC", views=views)
