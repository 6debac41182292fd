"""Divergences: where the target's answer or observable state differs from the reference's.

Fields the protocol leaves to the implementation (broker epochs: scenario-format.md, Values) are
never compared; the list is `isrcheck.contract.operations.implementation_defined`, which the report reads
too. Everything else in a result or an observation is compared.
"""

from __future__ import annotations

from typing import Any

from isrcheck.contract.history.controller_view import ControllerObservation
from isrcheck.contract.operations.findings import DIVERGENCE, Finding, error_codes
from isrcheck.contract.operations.implementation_defined import IMPLEMENTATION_DEFINED, same_value

UNCOMPARED = frozenset(IMPLEMENTATION_DEFINED)


def compare_results(step: int, op: str, reference: dict[str, Any], target: dict[str, Any]) -> Finding | None:
    """The first result field that differs, in the reference's field order."""
    for field in [*reference, *(k for k in target if k not in reference)]:
        if field in UNCOMPARED:
            continue
        if not same_value(field, reference.get(field), target.get(field)):
            codes = tuple(dict.fromkeys(error_codes(reference) + error_codes(target)))
            if field.endswith("error"):
                codes = tuple(str(v) for v in (reference.get(field), target.get(field)) if v is not None)
            return Finding(
                DIVERGENCE, op, step,
                f"{op}: {field} is {target.get(field)!r} on the target, {reference.get(field)!r} on the reference",
                field=field, codes=codes,
                evidence={"reference": reference, "target": target},
            )
    return None


def compare_observations(
    step: int, op: str, reference: ControllerObservation, target: ControllerObservation,
    observable: frozenset[str] | None = None,
) -> Finding | None:
    """The first partition or broker field that differs, among those the target can observe
    (`Target.observable_fields`; None = every field)."""
    for key, ref_state in reference.partitions.items():
        tgt_state = target.partitions.get(key, {})
        for field, value in ref_state.items():
            if observable is not None and field not in observable:
                continue
            if not same_value(field, value, tgt_state.get(field)):
                topic, partition = key
                return Finding(
                    DIVERGENCE, op, step,
                    f"after {op}: partition {topic}-{partition} {field} is {tgt_state.get(field)!r} on the target, "
                    f"{value!r} on the reference",
                    field=f"partition.{field}",
                    evidence={"partition": f"{topic}-{partition}", "reference": ref_state, "target": tgt_state},
                )
    for broker, ref_state in reference.brokers.items():
        tgt_state = target.brokers.get(broker, {})
        for field, value in ref_state.items():
            if field in UNCOMPARED or (observable is not None and field not in observable):
                continue
            if not same_value(field, value, tgt_state.get(field)):
                return Finding(
                    DIVERGENCE, op, step,
                    f"after {op}: broker {broker} {field} is {tgt_state.get(field)!r} on the target, "
                    f"{value!r} on the reference",
                    field=f"broker.{field}",
                    evidence={"broker": broker, "reference": ref_state, "target": tgt_state},
                )
    return None
