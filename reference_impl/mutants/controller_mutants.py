"""Controller-side mutants: each a one-rule variation of the reference `Controller`, named after
the historical bug (bugs.md) or derived mutant (bugs.md appendix) it reintroduces."""

from __future__ import annotations

from ..alter_partition import validate_isr_ids
from ..controller import Controller
from ..errors import Error
from ..messages import (
    AlterPartitionItem,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    IsrMember,
)
from ..partition_change import Election
from ..state import BrokerRegistration, PartitionState


class IgnoresMemberBrokerEpochs(Controller):
    """B01 / KAFKA-14139: ISR admission ignores the member's broker epoch (KIP-903 missing)."""

    def member_ineligibility(self, member: IsrMember) -> str | None:
        return super().member_ineligibility(IsrMember(member.broker, -1))


class AcceptsFencedAndShuttingDown(Controller):
    """B02 / KAFKA-13916: the pre-3.3 controller checked only that members were registered."""

    def member_ineligibility(self, member: IsrMember) -> str | None:
        return None if member.broker in self.brokers else "not registered"


class ForgetsControlledShutdownOnFailOver(Controller):
    """B04 / KIP-841 part 1: in-controlled-shutdown is soft state, so a new active controller
    treats a shutting-down broker as active."""

    def fail_over(self) -> None:
        super().fail_over()
        self.brokers = {
            b: BrokerRegistration(r.broker, r.epoch, r.incarnation, r.fenced, False) for b, r in self.brokers.items()
        }


class StaleControllerErrors(Controller):
    """B21 / KAFKA-14154: epochs ahead of the controller's answered FENCED_LEADER_EPOCH (and a
    partition epoch mismatch INVALID_UPDATE_VERSION) instead of NOT_CONTROLLER."""

    def validate_alter_partition_item(
        self, version: int, broker_id: int, item: AlterPartitionItem, current: PartitionState | None
    ) -> Error:
        if current is not None and item.leader_epoch != current.leader_epoch:
            return Error.FENCED_LEADER_EPOCH
        if current is not None and broker_id == current.leader and item.partition_epoch != current.partition_epoch:
            return Error.INVALID_UPDATE_VERSION
        return super().validate_alter_partition_item(version, broker_id, item, current)


class NoPartitionEpochCheck(Controller):
    """D1: AlterPartition accepted without the partition-epoch compare-and-set."""

    def validate_alter_partition_item(
        self, version: int, broker_id: int, item: AlterPartitionItem, current: PartitionState | None
    ) -> Error:
        if current is not None:
            item = AlterPartitionItem(item.partition, item.leader_epoch, current.partition_epoch, item.new_isr,
                                      item.leader_recovery_state)
        return super().validate_alter_partition_item(version, broker_id, item, current)


class AcceptsIsrWithoutLeader(Controller):
    """D12: the controller lets the leader drop itself from the ISR (no 'leader ∈ ISR' check)."""

    def validate_alter_partition_item(
        self, version: int, broker_id: int, item: AlterPartitionItem, current: PartitionState | None
    ) -> Error:
        error = super().validate_alter_partition_item(version, broker_id, item, current)
        new_isr = tuple(m.broker for m in item.new_isr)
        if (
            error is Error.INVALID_REQUEST and current is not None and broker_id == current.leader
            and new_isr and validate_isr_ids(current.replicas, new_isr) and current.leader not in new_isr
        ):
            return Error.NONE
        return error


class AlwaysUnclean(Controller):
    """B14 (controller side): every automatic election may pick a replica outside the ISR, as with
    unclean.leader.election.enable=true (the pre-KIP-106 default)."""

    def derive_election(self, topic: str) -> Election:
        return Election.UNCLEAN


class CounterBrokerEpochs(Controller):
    """Negative control N1: broker epochs from a private counter instead of log offsets. Kafka
    leaves their values to the implementation (scenario-format.md, Values); nothing may flag it."""

    def register_broker(self, request: BrokerRegistrationRequest) -> BrokerRegistrationResponse:
        self.next_offset += 1000
        return super().register_broker(request)
