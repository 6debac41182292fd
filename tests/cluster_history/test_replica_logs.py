"""P-LOG's black-box form: after the heal the in-sync replicas agree below the high watermark, judged
on the `replica_logs` entry the engine records from a target that reads every replica's log —
shown failing on histories and a plug-in built to break it, holding on the honest versions, and
*unknown* (never passed) when a history has no such entry: a target that does not answer the
observation, one that failed to, and records made before it existed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from isrcheck.adapters.plugins.example_cluster import RestampingCluster, ToyCluster
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.engine.cluster_history import run_history
from isrcheck.conformance.engine.rejudge import rejudge_record
from isrcheck.conformance.properties.black_box_history import HistoryConfig
from isrcheck.conformance.properties.catalogue import (
    BLACK_BOX,
    PROPERTIES,
    judge_views,
    unknown_properties,
    views_not_judged,
)
from isrcheck.conformance.properties.checker import VIEWS

REPO = Path(__file__).resolve().parents[2]
CONFIG = HistoryConfig()
A, B, C = [0, 1, None, "a"], [1, 1, None, "b"], [2, 2, None, "c"]


def history(logs: dict[str, list[list[Any]]] | None, hw: int = 3, isr: list[int] | None = None,
            leader: int = 101) -> list[dict[str, Any]]:
    """A run as the engine ends every run: heal, an observation, the read-back, then (when `logs` is
    given) the replicas' logs."""
    entries: list[dict[str, Any]] = [
        {"type": "op", "i": 0, "t": 0.0, "op": "create_topic", "args": {"topic": "t"}, "result": {}, "t_end": 0.1},
        {"type": "op", "i": 1, "t": 0.1, "op": "heal", "args": {}, "result": {"settled": True}, "t_end": 0.2},
        {"type": "observe", "i": 2, "t": 0.2, "partition": "t-0", "t_end": 0.3,
         "view": {"exists": True, "leader": leader, "isr": isr or [101, 102, 103], "replicas": [101, 102, 103],
                  "leader_epoch": 2, "hw": hw}},
        {"type": "op", "i": 3, "t": 0.3, "op": "consume", "args": {"topic": "t"}, "result": {"records": {"0": {}}},
         "t_end": 0.4},
    ]
    if logs is not None:
        entries.append({"type": "replica_logs", "i": 4, "t": 0.4, "partition": "t-0", "replicas": logs, "t_end": 0.5})
    return entries


def p_log(entries: list[dict[str, Any]]) -> list[Any]:
    return [v for v in judge_views(entries, CONFIG) if v.property == "P-LOG"]


def test_p_log_holds_when_the_in_sync_replicas_agree_below_the_high_watermark() -> None:
    entries = history({"101": [A, B, C], "102": [A, B, C], "103": [A, B, C]})
    assert p_log(entries) == [] and "P-LOG" not in views_not_judged(entries)


def test_p_log_fails_on_a_different_epoch_value_or_key_below_the_high_watermark() -> None:
    for changed in ([1, 0, None, "b"], [1, 1, None, "x"], [1, 1, "k", "b"]):
        [violation] = p_log(history({"101": [A, B, C], "102": [A, changed, C], "103": [A, B, C]}))
        assert violation.evidence["brokers"] == [101, 102] and violation.evidence["offset"] == 1
        assert violation.evidence["records"] == [B, changed] and violation.step == 4


def test_p_log_fails_on_a_member_missing_a_record_below_the_high_watermark() -> None:
    [gap] = p_log(history({"101": [A, B, C], "102": [A, C], "103": [A, B, C]}))
    assert gap.evidence["offset"] == 1 and gap.evidence["records"] == [B, None]
    [short] = p_log(history({"101": [A, B, C], "102": [A, B, C], "103": [A]}))
    assert short.evidence["brokers"] == [101, 103] and short.evidence["offset"] == 1


def test_p_log_leaves_records_past_the_high_watermark_and_replicas_out_of_the_isr_alone() -> None:
    """Past the HW a follower may still hold a suffix it will truncate; out of the ISR it may not
    have truncated yet (KIP-101): neither is a disagreement on the committed log."""
    assert p_log(history({"101": [A, B, C], "102": [A, B, [2, 1, None, "z"]], "103": [A, B]}, hw=2)) == []
    assert p_log(history({"101": [A, B, C], "102": [A, B, C], "103": [[0, 0, None, "old"]]}, isr=[101, 102])) == []
    assert len(p_log(history({"101": [A, B, C], "102": [A, B, C], "103": [[0, 0, None, "old"]]}))) == 1


def test_p_log_compares_from_the_later_log_start() -> None:
    """A log that starts later (retention; a replica rebuilt from the leader's log start) is judged
    on what both hold."""
    assert p_log(history({"101": [A, B, C], "102": [B, C], "103": [A, B, C]})) == []


def test_p_log_is_unknown_without_the_replicas_logs() -> None:
    """No entry (a target that does not read logs; records before it existed), an entry the target
    failed to read, one without a member of the ISR, or no high watermark after the heal: unknown,
    not holding."""
    no_hw = history({"101": [A]}, hw=3)
    no_hw[2]["view"]["hw"] = None
    failed = [*history(None), {"type": "replica_logs", "i": 4, "t": 0.4, "partition": "t-0",
                               "error": "OSError: gone", "t_end": 0.5}]
    partial = history({"101": [A, B, C], "102": [A, B, C]})  # no log of ISR member 103
    for entries in (history(None), failed, no_hw, partial):
        assert p_log(entries) == []
        assert "P-LOG" in views_not_judged(entries)
        assert "P-LOG" in unknown_properties("cluster", [VIEWS], views_not_judged(entries))


def test_a_record_from_before_the_observation_re_judges_as_before_with_p_log_unknown() -> None:
    """docs/evidence holds histories recorded before the replica-log observation existed: they are
    judged by the other black-box forms exactly as before, and P-LOG is unknown."""
    checked = 0
    for path in sorted((REPO / "docs" / "evidence").glob("*.history.json")):
        data = json.loads(path.read_text())
        entries = data["entries"]
        assert not any(e["type"] == "replica_logs" for e in entries)
        record = {"history": {"config": data.get("config") or {}, "entries": entries}}
        rejudged = rejudge_record(record)
        assert rejudged is not None and "P-LOG" in rejudged.unknown
        config = HistoryConfig.from_json(data.get("config") or {})
        others = sorted((v.step, v.property, v.message) for name in BLACK_BOX if name != "P-LOG"
                        for v in PROPERTIES[name].views(entries, config))  # type: ignore[misc]
        assert sorted((f.step, f.property, f.message) for f in rejudged.findings) == others
        checked += 1
    assert checked >= 5


def steps_with_a_leader_change() -> list[tuple[str, dict[str, Any]]]:
    return [("create_topic", {"topic": "t"}), ("produce", {"topic": "t", "records": 2, "acks": "all"}),
            ("crash", {"broker": 1}), ("produce", {"topic": "t", "records": 1, "acks": "all"}),
            ("restart", {"broker": 1, "lose": "none"})]


def test_a_plug_in_whose_followers_restamp_records_is_found_by_p_log_alone() -> None:
    """`RestampingCluster`: a follower catching up stamps copied records with the current epoch. A
    consumer reads the leader and sees every record: only P-LOG fails, on the replica-log entry."""
    entries, violations = run_history(RestampingCluster(), "3.9", steps_with_a_leader_change(), CONFIG)
    assert {v.property for v in violations} == {"P-LOG"}
    [logs] = [e for e in entries if e["type"] == "replica_logs"]
    assert {v.step for v in violations} == {logs["i"]}
    assert {tuple(v.evidence["brokers"]) for v in violations} == {(102, 101), (102, 103)}
    assert all(v.evidence["records"][0][1] == 0 and v.evidence["records"][1][1] == 1 for v in violations)
    sound, found = run_history(ToyCluster(), "3.9", steps_with_a_leader_change(), CONFIG)
    assert found == [] and "P-LOG" not in views_not_judged(sound)


def test_a_plug_in_that_does_not_answer_the_observation_leaves_p_log_unknown() -> None:
    class Silent(RestampingCluster):
        observes_replica_logs = False

    class Failing(RestampingCluster):
        def observe(self, what: str, args: Any) -> dict[str, Any]:
            if what == "replica_logs":
                raise OSError("no log directory")
            return super().observe(what, args)

    silent, found = run_history(Silent(), "3.9", steps_with_a_leader_change(), CONFIG)
    assert found == [] and not any(e["type"] == "replica_logs" for e in silent)
    assert "P-LOG" in views_not_judged(silent)
    failing, found = run_history(Failing(), "3.9", steps_with_a_leader_change(), CONFIG)
    [entry] = [e for e in failing if e["type"] == "replica_logs"]
    assert found == [] and entry["error"] == "OSError: no log directory" and "P-LOG" in views_not_judged(failing)


def test_a_campaign_on_the_restamping_plug_in_finds_p_log_and_records_the_logs(tmp_path: Path) -> None:
    result = run_campaign(CampaignConfig(adapter="isrcheck.adapters.plugins.example_cluster:RestampingCluster",
                                         level="cluster", examples=50, steps=10, seed=1, records_dir=tmp_path))
    assert result.found and {s.split(":")[2] for s in result.signatures} == {"P-LOG"}
    assert {s.split(":")[1] for s in result.signatures} == {"replica_logs"}
    records = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert len(records) == result.runs >= 1
    for record in records:
        assert "P-LOG" in record["properties"] and "P-LOG" not in record["unknown"]
        [logs] = [e for e in record["history"]["entries"] if e["type"] == "replica_logs"]
        assert set(logs["replicas"]) == {"101", "102", "103"}


def test_the_entry_is_recorded_as_json_will_read_it_back() -> None:
    """A plug-in answering with int node ids and tuples is judged live exactly as its record will
    be re-judged (JSON keys are strings, arrays lists): the divergence is found either way."""
    class IntKeys(RestampingCluster):
        def observe(self, what: str, args: Any) -> dict[str, Any]:
            answer = super().observe(what, args)
            if what == "replica_logs":
                return {"replicas": {int(k): [tuple(r) for r in v] for k, v in answer["replicas"].items()}}
            return answer

    entries, violations = run_history(IntKeys(), "3.9", steps_with_a_leader_change(), CONFIG)
    assert {v.property for v in violations} == {"P-LOG"}
    assert [v.to_finding("replica_logs") for v in judge_views(json.loads(json.dumps(entries)), CONFIG)] == violations
