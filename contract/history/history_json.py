"""A controller-level run history as a record carries it (docs/records.md, `history`) and back,
so that `isrcheck check` judges the same steps offline that the run judged live.

Observations keep their order (partitions as the run observed them, brokers as registered): the
properties report violations partition by partition, and the same order gives the same findings.
"""

from __future__ import annotations

from typing import Any

from isrcheck.contract.history.controller_view import EMPTY, ControllerObservation
from isrcheck.contract.history.ground_truth_json import ground_truth_from_json, ground_truth_json
from isrcheck.contract.history.steps import HistoryStep, RunHistory, SideRecord

CONTROLLER_LEVEL = "controller"
CLUSTER_LEVEL = "cluster"


def observation_json(observation: ControllerObservation | None) -> dict[str, Any] | None:
    if observation is None:
        return None
    return {"partitions": [[topic, partition, state] for (topic, partition), state in observation.partitions.items()],
            "brokers": [[broker, state] for broker, state in observation.brokers.items()]}


def observation_from_json(data: dict[str, Any] | None) -> ControllerObservation | None:
    if data is None:
        return None
    return ControllerObservation({(str(t), int(p)): dict(state) for t, p, state in data["partitions"]},
                                 {int(b): dict(state) for b, state in data["brokers"]})


def controller_history_json(history: RunHistory, reference_scans: dict[int, ControllerObservation],
                            differential: bool, observable: frozenset[str] | None) -> dict[str, Any]:
    """`reference_scans`: the reference's partitions read before a create_partitions (step → view),
    which a known-divergence rule reads."""
    steps = []
    for step in history:
        entry: dict[str, Any] = {
            "index": step.index, "op": step.op, "args": step.args,
            "target": {"args": step.target.args, "result": step.target.result,
                       "observation": observation_json(step.target.observation)},
        }
        if step.reference is not None:
            entry["reference"] = {"result": step.reference.result,
                                  "observation": observation_json(step.reference.observation)}
        if step.index in reference_scans:
            entry["reference_before"] = observation_json(reference_scans[step.index])
        steps.append(entry)
    return {"level": CONTROLLER_LEVEL, "differential": differential,
            "observable_fields": None if observable is None else sorted(observable), "steps": steps}


def controller_history_from_json(data: dict[str, Any]) -> tuple[RunHistory, dict[int, ControllerObservation]]:
    history = RunHistory(CONTROLLER_LEVEL)
    scans: dict[int, ControllerObservation] = {}
    for entry in data["steps"]:
        target, reference = entry["target"], entry.get("reference")
        history.append(HistoryStep(
            int(entry["index"]), str(entry["op"]), dict(entry["args"]),
            SideRecord(target["result"], target["args"], observation_from_json(target.get("observation"))),
            None if reference is None else SideRecord(reference["result"], None,
                                                      observation_from_json(reference.get("observation"))),
        ))
        if entry.get("reference_before") is not None:
            scans[int(entry["index"])] = observation_from_json(entry["reference_before"]) or EMPTY
    return history, scans


def cluster_history_json(history: RunHistory, failure: dict[str, Any] | None) -> dict[str, Any]:
    """A simulated (or ground-truth-showing) cluster's history: per step the target's result and
    its ground truth after it (null where it shows none), and the failure that ended the run, if
    the target failed (a timeout, a crash, a livelock) instead of breaking a property."""
    steps = [{"index": step.index, "op": step.op, "args": step.args,
              "target": {"result": step.target.result,
                         "ground_truth": None if step.target.ground_truth is None
                         else ground_truth_json(step.target.ground_truth)}} for step in history]
    return {"level": CLUSTER_LEVEL, "steps": steps, "failure": failure}


def cluster_history_from_json(data: dict[str, Any]) -> RunHistory:
    history = RunHistory(CLUSTER_LEVEL)
    for entry in data["steps"]:
        truth = entry["target"].get("ground_truth")
        history.append(HistoryStep(int(entry["index"]), str(entry["op"]), dict(entry["args"]), SideRecord(
            entry["target"].get("result"), ground_truth=None if truth is None else ground_truth_from_json(truth))))
    return history
