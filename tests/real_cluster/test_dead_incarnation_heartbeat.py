"""A dead broker incarnation's held heartbeat on real 4.1.1 brokers (SimulatedCluster 4.1 seed 1
run 54's mechanism; docs/real-kafka.md). Replicas [2, 1], min.insync.replicas 2: records are
acknowledged with ISR [2, 1]; broker 1's controller link is held (`TcpProxy` hold), so 1 is fenced
and moves to the ELR; 1 is killed and restarted with an empty log directory (its new
incarnation's registration cannot get through the held link); 2 — the leader, the last ISR member
— is killed and fenced: the partition is leaderless. When the hold ends, the proxy forwards the
first incarnation's held heartbeat; it carries no incarnation id and the epoch of the
registration the controller still holds, so the controller unfences that registration
(`BrokerHeartbeatManager.calculateNextBrokerState`) and elects 1 from the ELR, whose running
process has an empty log. Seen on 4.1.1 (68 s): the new incarnation's AssignReplicasToDirs names a
directory the old registration does not have, so the controller takes 1 off the lead again
("offline-dir-assignment"), leaving 1 the last known leader; the new incarnation registers once
the old session expires (an unclean shutdown), 102 comes back killed (another), and 1 — empty —
is elected as the last known leader ("using an unclean election", RECOVERING): the three
acknowledged records are gone. Exposure rule 3 exempts that (`black_box_history.exposure_points`:
102, the other holder, was killed). `kafka-cluster`'s `restart` waits for the broker to start,
which a held controller link never lets happen, so the restart here does not wait."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from isrcheck.adapters.real_kafka.kafka_cluster import KafkaClusterTarget

REPO = Path(__file__).resolve().parents[2]
HOME = REPO.parent / "shared" / "kafka" / "4.1"


@pytest.mark.slow
def test_a_dead_incarnations_held_heartbeat_unfences_its_old_registration_and_it_is_elected() -> None:
    if not (HOME / "bin" / "kafka-server-start.sh").exists():
        pytest.skip("no ../shared/kafka/4.1 next to the checkout")
    target = KafkaClusterTarget({"kafka-home": str(HOME), "reuse": "0"})
    target.open("4.1", {})
    try:
        def do(op: str, **args: Any) -> Any:
            return target.execute(op, args)

        def view() -> dict[str, Any]:
            return dict(target.observe("partition", {"topic": "dh", "partition": 0}))

        do("create_topic", topic="dh", replicas=[2, 1], configs={"min.insync.replicas": "2"})
        acked = do("produce", topic="dh", records=3, acks="all")
        assert acked["status"] == "acked"
        do("net", broker=1, link="controller", mode="hold")
        assert do("wait_isr", topic="dh", isr=[2], timeout_ms=30000)["reached"]
        cluster = target.cluster
        assert cluster is not None
        cluster.kill("broker-1")
        cluster.restart("broker-1", wipe=True, wait=False)
        time.sleep(5)
        do("crash", broker=2)
        deadline = time.monotonic() + 30
        while view().get("leader") != -1 and time.monotonic() < deadline:
            time.sleep(1)
        leaderless = view()
        do("net", broker=1, link="controller", mode="pass")
        time.sleep(3)
        after_release = view()
        do("heal", timeout_ms=60000)
        final = view()
        records = do("consume", topic="dh")["records"]
        log = (cluster.nodes["controller-1"].log_dir / "controller.log").read_text(errors="replace")
        print("leaderless:", leaderless, "\nafter the release:", after_release, "\nafter the heal:", final, records)
        print("\n".join(line[:300] for line in log.splitlines() if "101" in line and "Duplicate" not in line))
        assert leaderless["leader"] == -1 and leaderless["isr"] == []
        first = re.search(r"No previous registration found for broker 101\..* New broker epoch is (\d+)\.", log)
        assert first is not None
        unfenced = log.rindex(f"The request from broker 101 to unfence has been granted because it has caught up "
                              f"with the offset of its register broker record {first.group(1)}.")
        elected = log.index("partition 0 to 101 using ELR", unfenced)
        refused = log.index("Another broker is registered with that broker id", elected)
        assert unfenced < elected < refused < log.index("Registering a new incarnation of broker 101", refused)
        # the new, empty incarnation ends up leading: the last known leader once 102 (killed) left the ELR
        assert final["leader"] == 101 and final["hw"] == 0 and records == {"0": {}}
    except BaseException:
        target.keep_logs = True  # the cluster's logs are kept (and where is printed)
        raise
    finally:
        target.close()
