"""AlterPartition validations per second on the reference controller (issue target: ≥ 50,000/s,
one core, 3-replica partition).

Three request shapes, each a full `Controller.alter_partition` call (top-level checks, §2.4
validation, §2.5 eligibility, the change builder, the response): a no-op re-send of the current
ISR, a rejected stale request (FENCED_LEADER_EPOCH), and an accepted shrink/expand pair.
"""

from __future__ import annotations

import argparse
import time

from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.messages import (
    AlterPartitionItem,
    AlterPartitionRequest,
    AlterPartitionTopic,
    BrokerRegistrationRequest,
    HeartbeatRequest,
    IsrMember,
)


def setup() -> Controller:
    controller = Controller("4.1")
    for broker in (1, 2, 3):
        epoch = controller.register_broker(BrokerRegistrationRequest(broker, f"b{broker}")).broker_epoch
        controller.heartbeat(HeartbeatRequest(broker, epoch, 2**62))
    controller.create_topic("bench", [[1, 2, 3]])
    return controller


def request(
    controller: Controller, isr: tuple[int, ...], leader_epoch: int | None = None, epochs_ahead: int = 0
) -> AlterPartitionRequest:
    state = controller.partitions[("bench", 0)]
    epoch = state.leader_epoch if leader_epoch is None else leader_epoch
    item = AlterPartitionItem(0, epoch, state.partition_epoch + epochs_ahead,
                              tuple(IsrMember(b, controller.brokers[b].epoch) for b in isr))
    topic = AlterPartitionTopic((item,), topic_id=controller.topic_ids["bench"])
    return AlterPartitionRequest(3, 1, controller.brokers[1].epoch, (topic,))


def measure(label: str, seconds: float, call: object) -> float:
    assert callable(call)
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(1000):
            call()
        count += 1000
    rate = count / (time.perf_counter() - start)
    print(f"{label:<45} {rate:>12,.0f} /s")
    return rate


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    controller = setup()
    noop = request(controller, (1, 2, 3))
    stale = request(controller, (1, 2, 3), leader_epoch=-5)
    rates = [
        measure("no-op AlterPartition (validated, no record)", 2.0, lambda: controller.alter_partition(noop)),
        measure("rejected AlterPartition (FENCED_LEADER_EPOCH)", 2.0, lambda: controller.alter_partition(stale)),
    ]

    # 4.1 bumps only the partition epoch on shrink and expand (§2.6), so the requests can be built
    # ahead and the loop times the controller alone.
    count = 200_000
    accepted = [request(controller, (1, 2) if i % 2 == 0 else (1, 2, 3), epochs_ahead=i) for i in range(count)]
    start = time.perf_counter()
    for prepared in accepted:
        controller.alter_partition(prepared)
    rate = count / (time.perf_counter() - start)
    assert controller.partitions[("bench", 0)].isr == (1, 2, 3), "every prepared request must be accepted"
    print(f"{'accepted AlterPartition (record written)':<45} {rate:>12,.0f} /s")
    rates.append(rate)
    print(f"minimum over shapes: {min(rates):,.0f} validations/s (target 50,000/s)")


if __name__ == "__main__":
    main()
