"""P-FENCE: a broker down for longer than the session timeout + settle time is fenced
(controller.md §4.3; the one timing property). Judged on a black-box history's views.
"""

from __future__ import annotations

from typing import Any

from isrcheck.conformance.properties.black_box_history import HistoryConfig, down_periods
from isrcheck.conformance.properties.checker import Property, Violation


def views(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """P-FENCE (liveness of fencing; controller.md §4.3): a broker down for longer than the session
    timeout + settle time — measured to when the Metadata was answered — is fenced: the Metadata
    answer no longer lists it, or it is at least out of every ISR with other members. Only views
    that carry a broker list are judged (without one, P-ELIG's clock rule covers it). This is the
    one timing property: a controller starved on a loaded machine fences late and shows here, not
    as P-ELIG; the evidence gives the delay."""
    bound_s = (config.session_timeout_ms + config.settle_ms) / 1000
    violations = []
    for e, down_since, _listed in down_periods(history, config):
        view, t = e["view"], e["t"]
        isr = view.get("isr", [])
        if "brokers" not in view or len(isr) < 2:
            continue
        for broker in isr:
            since = down_since.get(broker)
            if since is not None and broker in view["brokers"] and t - since > bound_s:
                violations.append(Violation(
                    "P-FENCE", e["i"], f"{e['partition']}: broker {broker}, down for {t - since:.1f} s (session "
                    f"timeout {config.session_timeout_ms} ms), is still unfenced and in the ISR {isr}",
                    {"broker": broker, "isr": isr, "down_s": round(t - since, 3), "fenced": False}))
    return violations


PROPERTY = Property("P-FENCE", views=views)
