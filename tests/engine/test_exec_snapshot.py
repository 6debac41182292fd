"""exec/1's optional `snapshot` capability (docs/exec-protocol.md): a plug-in that declares it
answers each operation with the state after it, and the step's observations cost no further
request; one that declares it and answers otherwise is a crash outcome; plug-ins without it are
observed as before."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from isrcheck.adapters.base import TargetFailure
from isrcheck.adapters.plugins.exec_target import ExecTarget
from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign

PLUGIN = f"{sys.executable} -m isrcheck.adapters.plugins.stdio_reference"


def a_step_with_observations(target: ExecTarget | ReferenceTarget) -> list[dict[str, object]]:
    """Register three brokers and a topic, then observe as the engine does after a step."""
    target.open("3.9", {})
    for broker in (1, 2, 3):
        target.execute("register_broker", {"broker": broker, "incarnation": f"b{broker}"})
        target.execute("unfence_broker", {"broker": broker})
    target.execute("create_topic", {"topic": "t0", "assignment": [[1, 2, 3], [2, 3, 1]]})
    return [target.observe("partition", {"topic": "t0", "partition": p}) for p in (0, 1, 5)] + [
        target.observe("partition", {"topic": "nope", "partition": 0})] + [
        target.observe("broker", {"broker": b}) for b in (1, 2, 3, 4)]


def requests_of(target: ExecTarget, action: object) -> int:
    before = target.next_id
    assert callable(action)
    action()
    return target.next_id - before


def test_with_the_capability_a_step_and_its_observations_are_one_request() -> None:
    plain, capable = ExecTarget(PLUGIN), ExecTarget(PLUGIN + " --snapshot")
    try:
        assert not plain.snapshots and capable.snapshots
        observed = a_step_with_observations(capable)
        assert observed == a_step_with_observations(plain) == a_step_with_observations(ReferenceTarget())

        def step() -> None:
            capable.execute("heartbeat", {"broker": 2, "broker_epoch": capable.observe("broker", {"broker": 2})[
                "broker_epoch"], "want_fence": False, "want_shut_down": True, "caught_up": True})
            assert capable.observe("broker", {"broker": 2})["in_controlled_shutdown"] is True
            capable.observe("partition", {"topic": "t0", "partition": 0})

        assert requests_of(capable, step) == 1
        assert requests_of(plain, lambda: [plain.observe("broker", {"broker": b}) for b in (1, 2)]) == 2
        capable.open("3.9", {})  # a fresh system: nothing of the last snapshot is left
        assert requests_of(capable, lambda: capable.observe("broker", {"broker": 1})) == 1
        assert capable.observe("broker", {"broker": 1})["registered"] is False
    finally:
        plain.shutdown()
        capable.shutdown()


def test_a_campaign_against_the_capable_plugin_agrees_with_the_reference() -> None:
    result = run_campaign(CampaignConfig(adapter=f"exec:{PLUGIN} --snapshot", release="3.9", examples=10, steps=25,
                                         seed=4, stop_at_first=False))
    assert result.runs >= 10 and result.steps > 100
    assert not result.signatures, result.examples


def test_a_plugin_declaring_the_capability_without_honouring_it_is_a_crash(tmp_path: Path) -> None:
    script = tmp_path / "liar.py"
    script.write_text(
        "import sys, json\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    res = {'protocol': 'isrcheck.exec/1', 'name': 'liar', 'capabilities': ['snapshot']} "
        "if req['method'] == 'describe' else ({'error': 'NONE', 'broker_epoch': 1} "
        "if req['method'] == 'execute' else None)\n"
        "    print(json.dumps({'id': req['id'], 'result': res}), flush=True)\n"
    )
    liar = ExecTarget(f"{sys.executable} {script}")
    try:
        liar.open("3.9", {})
        with pytest.raises(TargetFailure, match="snapshot") as failure:
            liar.execute("register_broker", {"broker": 1, "incarnation": "a"})
        assert failure.value.kind == "crash"
        with pytest.raises(TargetFailure, match="a snapshot must be"):
            liar.observe("broker", {"broker": 1})
    finally:
        liar.shutdown()
