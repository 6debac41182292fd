"""AlterPartition validation rules (controller.md §2.4, §2.5) as plain functions.

The controller calls these in order; mutants replace one of them. They read state and return
an error or a reason, never change anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .errors import Error
from .messages import AlterPartitionItem, IsrMember
from .state import BrokerRegistration, LeaderRecoveryState, PartitionState


def ineligibility(
    member: IsrMember, brokers: Mapping[int, BrokerRegistration], check_broker_epochs: bool
) -> str | None:
    """Why `member` may not be in an ISR, or None (§2.5, KIP-841 and KIP-903), first reason wins."""
    registration = brokers.get(member.broker)
    if registration is None:
        return "not registered"
    if registration.in_controlled_shutdown:
        return "shutting down"
    if registration.fenced:
        return "fenced"
    if check_broker_epochs and member.broker_epoch != -1 and member.broker_epoch != registration.epoch:
        return "broker epoch mismatch"
    return None


def validate_isr_ids(replicas: tuple[int, ...], isr: tuple[int, ...]) -> bool:
    """`Replicas.validateIsr` (§2.4 row 7): no negative, duplicate or non-replica id; empty passes."""
    return len(set(isr)) == len(isr) and all(r >= 0 and r in replicas for r in isr)


def validate_item(
    version: int,
    broker_id: int,
    item: AlterPartitionItem,
    current: PartitionState | None,
    ineligible: Callable[[IsrMember], str | None],
) -> Error:
    """Per-partition validation in exactly the order of §2.4; Error.NONE when valid.
    `ineligible` is the §2.5 rule bound to the controller's registrations."""
    if current is None:
        return Error.UNKNOWN_TOPIC_OR_PARTITION
    if item.leader_epoch > current.leader_epoch:
        return Error.NOT_CONTROLLER
    if item.partition_epoch > current.partition_epoch:
        return Error.NOT_CONTROLLER
    if item.leader_epoch < current.leader_epoch:
        return Error.FENCED_LEADER_EPOCH
    if broker_id != current.leader:
        return Error.INVALID_REQUEST
    if item.partition_epoch < current.partition_epoch:
        return Error.INVALID_UPDATE_VERSION
    new_isr = tuple(m.broker for m in item.new_isr)
    if not validate_isr_ids(current.replicas, new_isr):
        return Error.INVALID_REQUEST
    if current.leader not in new_isr:
        return Error.INVALID_REQUEST
    recovering = item.leader_recovery_state == LeaderRecoveryState.RECOVERING
    if recovering and len(new_isr) > 1:
        return Error.INVALID_REQUEST
    if recovering and current.leader_recovery_state == LeaderRecoveryState.RECOVERED:
        return Error.INVALID_REQUEST
    for member in item.new_isr:
        if ineligible(member) is not None:
            return Error.INELIGIBLE_REPLICA if version >= 2 else Error.OPERATION_NOT_ATTEMPTED
    return Error.NONE
