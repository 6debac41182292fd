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
  have only ``t``, the end);
* ``{"type": "replica_logs", "i", "t", "partition": "topic-p", "replicas": {"<node id>": [[offset,
  leader_epoch, key, value], ...]}, "t_end"}`` — every replica's log as the target read it after
  the heal (`isrcheck.adapters.base.REPLICA_LOGS`); ``"error"`` instead of ``"replicas"`` when the
  target raised. Histories without this entry (a target that does not read logs, records before
  it existed) leave P-LOG unknown.
"""

from __future__ import annotations

from typing import Any

from isrcheck.contract.history.steps import RunHistory

REPLICA_LOGS = "replica_logs"
"""The read of every replica's log after the heal (`isrcheck.adapters.base.REPLICA_LOGS`)."""


def black_box_entries(history: RunHistory) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for step in history:
        if step.op == REPLICA_LOGS:
            entries.append({"type": REPLICA_LOGS, "i": len(entries), "t": step.t,
                            "partition": f"{step.args['topic']}-{step.args.get('partition', 0)}",
                            **(step.target.result or {}), "t_end": step.t_end})
            continue
        entries.append({"type": "op", "i": len(entries), "t": step.t, "op": step.op, "args": dict(step.args),
                        "result": step.target.result, "t_end": step.t_end})
        for view in step.target.views or ():
            entries.append({"type": "observe", "i": len(entries), **view})
    return entries
