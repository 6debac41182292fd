"""A black-box cluster run's history as a record carries it (docs/records.md, `history.entries`):
a list of plain JSON entries in time order, which the black-box forms of the properties read
(`conformance/properties/black_box_history.py`), live when the run ends and offline in
`isrcheck check`. It is written from the run's step history (`steps.RunHistory`): each step is
one operation entry, followed by one observation entry per partition it viewed afterwards.

Entries:
* ``{"type": "op", "i", "t", "op", "args", "result", "t_end"}`` (``result`` has ``"exception"``
  when the target raised);
* ``{"type": "observe", "i", "t", "partition": "topic-p", "view": {exists, leader, isr, replicas,
  leader_epoch, hw, brokers?, metadata_after_s?}, "t_end"}`` — ``t`` is when the Metadata in the
  view was answered, ``t_end`` when the observation returned (records before that distinction
  have only ``t``, the end).
"""

from __future__ import annotations

from typing import Any

from isrcheck.contract.history.steps import RunHistory


def black_box_entries(history: RunHistory) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for step in history:
        entries.append({"type": "op", "i": len(entries), "t": step.t, "op": step.op, "args": dict(step.args),
                        "result": step.target.result, "t_end": step.t_end})
        for view in step.target.views or ():
            entries.append({"type": "observe", "i": len(entries), **view})
    return entries
