"""The reference KRaft controller (controller.md §1–§5): the oracle for controller-level checks.

Handlers compute metadata records as values (via `partition_change.build_partition_change`
and the rule functions of `alter_partition`) and `replay` applies them — the only place that
changes persisted state. Heartbeat soft state (§1.2) is updated by the heartbeat handler and
rebuilt by `fail_over` (§4.5). Deterministic, no I/O; time is `now_ms`, moved by the caller.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from enum import Enum

from .alter_partition import ineligibility, validate_item
from .errors import Error
from .messages import (
    AlterPartitionItem,
    AlterPartitionPartitionResult,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionTopicResult,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    ElectionResult,
    HeartbeatRequest,
    HeartbeatResponse,
    IsrMember,
)
from .partition_change import (
    ChangeRules,
    ChangeTargets,
    Election,
    build_partition_change,
)
from .release import (
    MV_3_3_IV3,
    NEWEST,
    ClusterConfig,
    ReleaseProfile,
    SameIncarnation,
    profile_named,
)
from .state import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    BrokerRegistration,
    BrokerRegistrationChangeRecord,
    HeartbeatState,
    LeaderRecoveryState,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    PartitionState,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnregisterBrokerRecord,
    merge,
)
from .timeline_order import PartitionTable

TOPIC_CONFIG_KEYS = ("unclean.leader.election.enable", "min.insync.replicas")
_TOPIC_ID_NAMESPACE = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")


_RECOVERY_STATES = (LeaderRecoveryState.RECOVERED, LeaderRecoveryState.RECOVERING)


class BrokerState(Enum):
    """`BrokerControlState` (§4.2)."""

    FENCED = "fenced"
    UNFENCED = "unfenced"
    CONTROLLED_SHUTDOWN = "controlled shutdown"
    SHUTDOWN_NOW = "shutdown now"


_HEARTBEAT_ANSWERS: dict[tuple[bool, bool, bool], HeartbeatResponse] = {}


def heartbeat_answer(is_caught_up: bool, is_fenced: bool, should_shut_down: bool) -> HeartbeatResponse:
    """The successful `HeartbeatResponse` with these flags. There are eight, and a response is a
    frozen value, so each is built once and handed out again (a cluster run answers a heartbeat
    every 250 ms per broker)."""
    key = (is_caught_up, is_fenced, should_shut_down)
    answer = _HEARTBEAT_ANSWERS.get(key)
    if answer is None:
        answer = _HEARTBEAT_ANSWERS[key] = HeartbeatResponse(
            Error.NONE, is_caught_up=is_caught_up, is_fenced=is_fenced, should_shut_down=should_shut_down,
        )
    return answer


class Controller:
    """One active KRaft controller. Public methods are the controller RPCs plus the clock."""

    def __init__(self, profile: ReleaseProfile | str = NEWEST, config: ClusterConfig | None = None) -> None:
        self.profile = profile_named(profile) if isinstance(profile, str) else profile
        self.config = ClusterConfig.for_profile(self.profile) if config is None else config
        self.now_ms = 0
        self.next_offset = 1
        self.log: list[tuple[int, MetadataRecord]] = []
        self.topic_ids: dict[str, str] = {}
        self.topic_names: dict[str, str] = {}
        self.topic_configs: dict[str, dict[str, str]] = {}
        self.partitions: dict[tuple[str, int], PartitionState] = {}
        self.brokers: dict[int, BrokerRegistration] = {}
        self.register_offsets: dict[int, int] = {}
        self.heartbeats: dict[int, HeartbeatState] = {}
        self.contacts: dict[tuple[int, int], int] = {}
        """Last contact per (broker, epoch) on 4.0+; per (broker, -1) on 3.x (§4.1, §4.3)."""
        self.partition_tables: dict[str, PartitionTable] = {}
        """Each topic's partition map as Kafka's controller hashes it (timeline_order): which
        partition CreatePartitions takes the replication factor from."""
        self.topic_rules: dict[str, tuple[ChangeRules, Election]] = {}
        """Derived from topic configs and partition 0 at replay; read on every partition change."""

    # ------------------------------------------------------------------ replay (the one writer)

    def append(self, records: Sequence[MetadataRecord]) -> int:
        """Append a batch, replaying each record; returns the batch's last offset (§4.2 step 9)."""
        for record in records:
            offset = self.next_offset
            self.next_offset += 1
            self.log.append((offset, record))
            self.replay(offset, record)
        return self.next_offset - 1

    def replay(self, offset: int, record: MetadataRecord) -> None:
        match record:
            case PartitionChangeRecord():
                key = (record.topic, record.partition)
                self.partitions[key] = merge(self.partitions[key], record)
                self.partition_tables[record.topic] = self.partition_tables[record.topic].put(record.partition)
                if record.partition == 0 and record.replicas is not None:
                    self.refresh_topic_rules(record.topic)
            case PartitionRecord():
                self.partitions[(record.topic, record.partition)] = record.state
                table = self.partition_tables.get(record.topic, PartitionTable())
                self.partition_tables[record.topic] = table.put(record.partition)
                if record.partition == 0:
                    self.refresh_topic_rules(record.topic)
            case TopicRecord():
                self.topic_ids[record.name] = record.topic_id
                self.topic_names[record.topic_id] = record.name
                self.topic_configs[record.name] = dict(record.configs)
            case RemoveTopicRecord():
                del self.topic_ids[record.name]
                del self.topic_names[record.topic_id]
                self.topic_configs.pop(record.name, None)
                self.topic_rules.pop(record.name, None)
                self.partition_tables.pop(record.name, None)
                for key in [k for k in self.partitions if k[0] == record.name]:
                    del self.partitions[key]
            case RegisterBrokerRecord():
                registration = record.registration
                self.brokers[registration.broker] = registration
                self.register_offsets[registration.broker] = offset
                self.heartbeats[registration.broker] = HeartbeatState(fenced=registration.fenced)
            case BrokerRegistrationChangeRecord():
                old = self.brokers[record.broker]
                self.brokers[record.broker] = BrokerRegistration(
                    old.broker,
                    old.epoch,
                    old.incarnation,
                    old.fenced if record.fenced is None else record.fenced,
                    old.in_controlled_shutdown
                    if record.in_controlled_shutdown is None
                    else record.in_controlled_shutdown,
                )
                self.reregister_soft_state(record.broker, self.brokers[record.broker].fenced)
            case UnregisterBrokerRecord():
                del self.brokers[record.broker]
                del self.register_offsets[record.broker]
                del self.heartbeats[record.broker]

    def reregister_soft_state(self, broker: int, fenced: bool) -> None:
        """`BrokerHeartbeatManager.register(brokerId, fenced)`, which replaying a registration change
        calls (`ClusterControlManager.replay(BrokerRegistrationChangeRecord)`; 3.7.1 and 3.9.0, where the
        heartbeat's `touch` precedes the replay — not 3.3.2/3.5.2, `profile.replay_forgets_offset`):
        the reported metadata offset survives only if the soft fenced state *changes*; when it is
        already `fenced` (always so after the heartbeat that wrote the record, which touched the
        soft state first) it becomes -1, so a just-unfenced broker counts as lagging for a
        controlled shutdown until its next heartbeat (§4.2 row 10; docs/known-divergences.md)."""
        soft = self.heartbeats.get(broker)
        if soft is None or not self.profile.replay_forgets_offset:
            return
        soft.metadata_offset = soft.metadata_offset if soft.fenced != fenced else -1
        soft.fenced = fenced
        if fenced:
            soft.controlled_shutdown_offset = -1

    # ------------------------------------------------------------------ reads

    def partition(self, topic: str, partition: int = 0) -> PartitionState | None:
        return self.partitions.get((topic, partition))

    def broker(self, broker: int) -> BrokerRegistration | None:
        return self.brokers.get(broker)

    def is_active(self, broker: int) -> bool:
        """`isActive` (§1.2); also the leader acceptor, since the model has no offline log dirs."""
        registration = self.brokers.get(broker)
        return registration is not None and registration.active

    # ------------------------------------------------------------------ rules shared by handlers

    def refresh_topic_rules(self, topic: str) -> None:
        """Re-derived whenever partition 0's replica set changes (§4.9 reads its current size)."""
        self.topic_rules[topic] = (self.derive_change_rules(topic), self.derive_election(topic))

    def change_rules(self, topic: str) -> ChangeRules:
        return self.topic_rules[topic][0]

    def election_for(self, topic: str) -> Election:
        return self.topic_rules[topic][1]

    def derive_change_rules(self, topic: str) -> ChangeRules:
        """§4.9: min ISR = min(effective min.insync.replicas, replication factor of partition 0)."""
        configured = int(self.topic_configs.get(topic, {}).get("min.insync.replicas", self.config.min_insync_replicas))
        replication_factor = len(self.partitions[(topic, 0)].replicas)
        return ChangeRules(
            self.profile, self.config.metadata_version, self.config.eligible_leader_replicas,
            min(configured, replication_factor),
        )

    def derive_election(self, topic: str) -> Election:
        """§4.8: UNCLEAN when the topic's unclean.leader.election.enable is honoured and true."""
        if not self.profile.unclean_config_honoured:
            return Election.ONLINE
        default = "true" if self.config.unclean_leader_election_enable else "false"
        value = self.topic_configs.get(topic, {}).get("unclean.leader.election.enable", default)
        return Election.UNCLEAN if value.lower() == "true" else Election.ONLINE

    def partitions_with_in_isr(self, broker: int) -> list[tuple[str, int]]:
        return [key for key, state in self.partitions.items() if broker in state.isr]

    def partitions_with_in_elr(self, broker: int) -> list[tuple[str, int]]:
        return [key for key, state in self.partitions.items() if broker in state.elr]

    def leadership_count(self, broker: int) -> int:
        return sum(1 for state in self.partitions.values() if state.leader == broker)

    def isr_updates(
        self,
        keys: Iterable[tuple[str, int]],
        broker_to_remove: int = NO_LEADER,
        broker_to_add: int = NO_LEADER,
        unclean_shutdown: int = NO_LEADER,
    ) -> list[MetadataRecord]:
        """`generateLeaderAndIsrUpdates` (§4.4) with the acceptor of §3.3."""

        def acceptable(r: int) -> bool:
            if r in (broker_to_remove, unclean_shutdown):
                return False
            return r == broker_to_add or self.is_active(r)

        records: list[MetadataRecord] = []
        for topic, index in keys:
            current = self.partitions[(topic, index)]
            removed = {broker_to_remove, unclean_shutdown}
            targets = ChangeTargets(
                isr=tuple(r for r in current.isr if r not in removed),
                election=self.election_for(topic),
                unclean_shutdown_replicas=() if unclean_shutdown == NO_LEADER else (unclean_shutdown,),
            )
            record = build_partition_change(topic, index, current, targets, acceptable, self.change_rules(topic))
            if record is not None:
                records.append(record)
        return records

    def fence_records(self, broker: int) -> list[MetadataRecord]:
        """`handleBrokerFenced` (§4.4): leave every ISR (last member stays), then FENCE."""
        records = self.isr_updates(self.partitions_with_in_isr(broker), broker_to_remove=broker)
        records.append(BrokerRegistrationChangeRecord(broker, self.brokers[broker].epoch, fenced=True))
        return records

    def unfence_records(self, broker: int) -> list[MetadataRecord]:
        """`handleBrokerUnfenced` (§4.4): UNFENCE, then elect leaders for leaderless partitions;
        never adds the broker to an ISR."""
        records: list[MetadataRecord] = [
            BrokerRegistrationChangeRecord(broker, self.brokers[broker].epoch, fenced=False)
        ]
        leaderless = [key for key, state in self.partitions.items() if state.leader == NO_LEADER]
        records.extend(self.isr_updates(leaderless, broker_to_add=broker))
        return records

    def controlled_shutdown_records(self, broker: int) -> list[MetadataRecord]:
        """`handleBrokerInControlledShutdown` (§4.4): persist the state (KIP-841; 3.x needs
        MV ≥ 3.3-IV3), then move leadership and leave ISRs like fencing."""
        records: list[MetadataRecord] = []
        persisted = not self.profile.is_3x or self.config.metadata_version >= MV_3_3_IV3
        if persisted and not self.brokers[broker].in_controlled_shutdown:
            records.append(
                BrokerRegistrationChangeRecord(broker, self.brokers[broker].epoch, in_controlled_shutdown=True)
            )
        records.extend(self.isr_updates(self.partitions_with_in_isr(broker), broker_to_remove=broker))
        return records

    # ------------------------------------------------------------------ AlterPartition (§2)

    def alter_partition(self, request: AlterPartitionRequest) -> AlterPartitionResponse:
        low, high = self.profile.alter_partition_versions
        if not low <= request.version <= high:
            return AlterPartitionResponse(Error.UNSUPPORTED_VERSION)
        if not request.topics:
            return AlterPartitionResponse(Error.NONE)
        registration = self.brokers.get(request.broker_id)
        if registration is None or registration.epoch != request.broker_epoch:
            return AlterPartitionResponse(Error.STALE_BROKER_EPOCH)
        for topic in request.topics:
            for item in topic.partitions:
                if item.leader_recovery_state not in (0, 1):
                    return AlterPartitionResponse(Error.UNKNOWN_SERVER_ERROR)
        records: list[MetadataRecord] = []
        topic_results = []
        for topic in request.topics:
            if request.version < 2:
                name = topic.topic_name if topic.topic_name in self.topic_ids else None
                unknown = Error.UNKNOWN_TOPIC_OR_PARTITION
            else:
                name = self.topic_names.get(topic.topic_id or "")
                unknown = Error.UNKNOWN_TOPIC_ID
            results = []
            for item in topic.partitions:
                if name is None:
                    results.append(AlterPartitionPartitionResult(item.partition, unknown))
                    continue
                result, record = self.alter_partition_item(request, name, item)
                results.append(result)
                if record is not None:
                    records.append(record)
            topic_results.append(AlterPartitionTopicResult(tuple(results), topic.topic_name, topic.topic_id))
        self.append(records)
        return AlterPartitionResponse(Error.NONE, tuple(topic_results))

    def alter_partition_item(
        self, request: AlterPartitionRequest, topic: str, item: AlterPartitionItem
    ) -> tuple[AlterPartitionPartitionResult, PartitionChangeRecord | None]:
        """Validate (§2.4/§2.5), build (§2.6) and answer (§2.7) one partition; every entry is
        judged against the state before the request (§2.8)."""
        if request.version < 3:
            item = AlterPartitionItem(
                item.partition, item.leader_epoch, item.partition_epoch,
                tuple(IsrMember(m.broker) for m in item.new_isr),
                0 if request.version == 0 else item.leader_recovery_state,
            )
        current = self.partitions.get((topic, item.partition))
        error = self.validate_alter_partition_item(request.version, request.broker_id, item, current)
        if error is not Error.NONE or current is None:
            return AlterPartitionPartitionResult(item.partition, error), None
        targets = ChangeTargets(
            isr=tuple(m.broker for m in item.new_isr),
            leader_recovery_state=_RECOVERY_STATES[item.leader_recovery_state],
            election=self.election_for(topic),
        )
        record = build_partition_change(
            topic, item.partition, current, targets, self.is_active, self.change_rules(topic)
        )
        if record is None:
            return self.partition_result(item.partition, current), None
        if record.leader not in (NO_LEADER_CHANGE, request.broker_id):
            error = Error.NEW_LEADER_ELECTED if request.version >= 2 else Error.FENCED_LEADER_EPOCH
            return AlterPartitionPartitionResult(item.partition, error), record
        return self.partition_result(item.partition, merge(current, record)), record

    def validate_alter_partition_item(
        self, version: int, broker_id: int, item: AlterPartitionItem, current: PartitionState | None
    ) -> Error:
        """§2.4 in order, with this controller's §2.5 eligibility rule."""
        return validate_item(version, broker_id, item, current, self.member_ineligibility)

    def member_ineligibility(self, member: IsrMember) -> str | None:
        """§2.5: why `member` may not join an ISR (KIP-841, and KIP-903 from 3.5), or None."""
        return ineligibility(member, self.brokers, self.profile.kip903_broker_epochs)

    @staticmethod
    def partition_result(index: int, state: PartitionState) -> AlterPartitionPartitionResult:
        return AlterPartitionPartitionResult(
            index, Error.NONE, state.leader, state.leader_epoch, state.isr, state.partition_epoch,
            int(state.leader_recovery_state),
        )

    # ------------------------------------------------------------------ broker lifecycle (§4)

    def session_valid(self, broker: int) -> bool:
        """Whether a live session blocks a new incarnation (§4.1 check 3)."""
        timeout = self.config.broker_session_timeout_ms
        if self.profile.session_per_epoch:
            last = self.contacts.get((broker, self.brokers[broker].epoch))
            return last is not None and self.now_ms <= last + timeout
        last = self.contacts.get((broker, -1))
        heartbeat = self.heartbeats.get(broker)
        unfenced = heartbeat is not None and not heartbeat.fenced
        return unfenced and last is not None and self.now_ms <= last + timeout

    def touch(self, broker: int, epoch: int) -> None:
        key = (broker, epoch if self.profile.session_per_epoch else -1)
        self.contacts[key] = self.now_ms

    def register_broker(self, request: BrokerRegistrationRequest) -> BrokerRegistrationResponse:
        """`ClusterControlManager.registerBroker` (§4.1, §4.7)."""
        broker = request.broker
        existing = self.brokers.get(broker)
        if existing is not None and existing.incarnation != request.incarnation and self.session_valid(broker):
            return BrokerRegistrationResponse(Error.DUPLICATE_BROKER_REGISTRATION)
        records: list[MetadataRecord] = []
        new_epoch = self.next_offset
        if existing is not None and existing.incarnation == request.incarnation:
            mode = self.profile.same_incarnation
            epoch = existing.epoch if mode is SameIncarnation.AMEND else new_epoch
            keep = mode is not SameIncarnation.NEW_EPOCH_RESET
            fenced = existing.fenced if keep else True
            in_controlled_shutdown = existing.in_controlled_shutdown if keep else False
        else:
            epoch, fenced, in_controlled_shutdown = new_epoch, True, False
            if self.profile.new_incarnation_shutdown_handler:
                # 4.x runs it whenever the incarnation differs from the registered one's, also when
                # none is registered (ClusterControlManager.registerBroker at 4.0.1 / 4.1.1: its
                # prevIncarnationId is then null): an unregistered broker left in an ELR leaves it
                records.extend(self.shutdown_handler_records(request, existing))
        registration = BrokerRegistration(broker, epoch, request.incarnation, fenced, in_controlled_shutdown)
        records.append(RegisterBrokerRecord(registration))
        self.append(records)
        self.touch(broker, epoch)
        return BrokerRegistrationResponse(Error.NONE, epoch)

    def shutdown_handler_records(
        self, request: BrokerRegistrationRequest, existing: BrokerRegistration | None
    ) -> list[MetadataRecord]:
        """4.0+ `handleBrokerShutdown` (§4.7): as if fenced, or the ELR unclean path. With no
        registration the stored epoch is -2 (`registerBroker`), so the shutdown is never clean."""
        broker = request.broker
        stored_epoch = -2 if existing is None else existing.epoch
        clean = request.version >= 3 and request.previous_broker_epoch == stored_epoch
        if self.config.eligible_leader_replicas and not clean:
            return self.isr_updates(self.partitions_with_in_isr(broker), unclean_shutdown=broker) + self.isr_updates(
                self.partitions_with_in_elr(broker), unclean_shutdown=broker
            )
        return self.isr_updates(self.partitions_with_in_isr(broker), broker_to_remove=broker)

    def next_broker_state(self, broker: int, current: BrokerState, request: HeartbeatRequest) -> BrokerState:
        """`calculateNextBrokerState` (§4.2 table), rows top to bottom."""
        if current is BrokerState.FENCED:
            if request.want_shut_down:
                return BrokerState.SHUTDOWN_NOW
            if not request.want_fence and request.current_metadata_offset >= self.register_offsets[broker]:
                return BrokerState.UNFENCED
            return BrokerState.FENCED
        if current is BrokerState.UNFENCED:
            if request.want_fence:
                return BrokerState.SHUTDOWN_NOW if request.want_shut_down else BrokerState.FENCED
            if request.want_shut_down:
                leads = self.leadership_count(broker) > 0
                return BrokerState.CONTROLLED_SHUTDOWN if leads else BrokerState.SHUTDOWN_NOW
            return BrokerState.UNFENCED
        if self.leadership_count(broker) > 0:
            return BrokerState.CONTROLLED_SHUTDOWN
        active_offsets = [
            h.metadata_offset
            for b, h in self.heartbeats.items()
            if b != broker and not h.fenced and not h.shutting_down
        ]
        lowest = min(active_offsets, default=None)
        if lowest is None or self.heartbeats[broker].controlled_shutdown_offset <= lowest:
            return BrokerState.SHUTDOWN_NOW
        return BrokerState.CONTROLLED_SHUTDOWN

    def heartbeat(self, request: HeartbeatRequest) -> HeartbeatResponse:
        """`processBrokerHeartbeat` (§4.2 steps 1–9)."""
        broker = request.broker
        if self.profile.session_per_epoch:
            self.touch(broker, request.broker_epoch)
        registration = self.brokers.get(broker)
        if registration is None or registration.epoch != request.broker_epoch:
            return HeartbeatResponse(Error.STALE_BROKER_EPOCH)
        soft = self.heartbeats[broker]
        if soft.shutting_down:
            current = BrokerState.CONTROLLED_SHUTDOWN
        else:
            current = BrokerState.FENCED if soft.fenced else BrokerState.UNFENCED
        after = self.next_broker_state(broker, current, request)
        records: list[MetadataRecord] = []
        if after is not current:
            if after in (BrokerState.FENCED, BrokerState.SHUTDOWN_NOW):
                records = self.fence_records(broker)
            elif after is BrokerState.UNFENCED:
                records = self.unfence_records(broker)
            else:
                records = self.controlled_shutdown_records(broker)
        soft = self.heartbeats[broker]
        soft.fenced = after in (BrokerState.FENCED, BrokerState.SHUTDOWN_NOW)
        soft.metadata_offset = request.current_metadata_offset  # touch, before the records replay
        last_offset = self.append(records)
        soft = self.heartbeats[broker]
        if after is not BrokerState.CONTROLLED_SHUTDOWN:
            soft.controlled_shutdown_offset = -1
        elif soft.controlled_shutdown_offset < 0:
            soft.controlled_shutdown_offset = last_offset
        if not self.profile.session_per_epoch:
            self.touch(broker, request.broker_epoch)
        return heartbeat_answer(
            request.current_metadata_offset >= self.register_offsets[broker], soft.fenced,
            after is BrokerState.SHUTDOWN_NOW,
        )

    def fence_stale_broker(self, broker: int) -> None:
        """Fence `broker` as its session expiry does (§4.3), and end its session."""
        registration = self.brokers.get(broker)
        for key in [k for k in self.contacts if k[0] == broker]:
            del self.contacts[key]
        if registration is None:
            return
        soft = self.heartbeats[broker]
        if self.profile.session_per_epoch or not soft.fenced:
            self.append(self.fence_records(broker))
            soft.fenced = True
            if not self.profile.fence_keeps_shutdown_state:
                soft.controlled_shutdown_offset = -1

    def expired_sessions(self) -> list[tuple[int, int]]:
        """Contacts past `broker.session.timeout.ms`, in the order the release checks them (§4.3):
        3.x least recently contacted first (unfenced brokers only); 4.x tracker order."""
        timeout = self.config.broker_session_timeout_ms
        expired = [(key, last) for key, last in self.contacts.items() if last + timeout < self.now_ms]
        if self.profile.session_per_epoch:
            return [key for key, _ in expired]
        live = [
            (key, last) for key, last in expired if key[0] in self.heartbeats and not self.heartbeats[key[0]].fenced
        ]
        return [key for key, _ in sorted(live, key=lambda item: item[1])]

    def advance_clock(self, milliseconds: int) -> list[int]:
        """Move time forward and fence expired sessions one per controller event (§4.3)."""
        self.now_ms += milliseconds
        fenced: list[int] = []
        while expired := self.expired_sessions():
            broker, epoch = expired[0]
            registration = self.brokers.get(broker)
            if self.profile.session_per_epoch and (registration is None or registration.epoch != epoch):
                del self.contacts[(broker, epoch)]
                continue
            self.fence_stale_broker(broker)
            fenced.append(broker)
        return fenced

    def unregister_broker(self, broker: int) -> Error:
        """UnregisterBroker (§4.4): leave ISRs like fencing, then forget the registration."""
        registration = self.brokers.get(broker)
        if registration is None:
            return Error.BROKER_ID_NOT_REGISTERED
        keys = self.partitions_with_in_isr(broker)
        if not self.profile.is_3x:
            keys += self.partitions_with_in_elr(broker)
        records = self.isr_updates(keys, broker_to_remove=broker)
        records.append(UnregisterBrokerRecord(broker, registration.epoch))
        self.append(records)
        for key in [k for k in self.contacts if k[0] == broker]:
            del self.contacts[key]
        return Error.NONE

    def fail_over(self) -> None:
        """A new active controller: persisted state survives, soft state is rebuilt (§4.5)."""
        self.heartbeats = {b: HeartbeatState(fenced=r.fenced) for b, r in self.brokers.items()}
        skip_fenced = self.profile.activation_skips_fenced
        self.contacts = {
            (b, r.epoch if self.profile.session_per_epoch else -1): self.now_ms
            for b, r in self.brokers.items()
            if not (skip_fenced and r.fenced)
        }

    # ------------------------------------------------------------------ topics (§5)

    def validate_assignment(
        self, assignment: Sequence[Sequence[int]], replication_factor: int | None = None
    ) -> Error:
        """`validateManualPartitionAssignment` (§5)."""
        for replicas in assignment:
            if not replicas or len(set(replicas)) != len(replicas):
                return Error.INVALID_REPLICA_ASSIGNMENT
            if any(r not in self.brokers for r in replicas):
                return Error.INVALID_REPLICA_ASSIGNMENT
            if replication_factor is not None and len(replicas) != replication_factor:
                return Error.INVALID_REPLICA_ASSIGNMENT
        return Error.NONE

    def new_partition_records(
        self, topic: str, first_index: int, assignment: Sequence[Sequence[int]]
    ) -> list[MetadataRecord] | Error:
        """§5: ISR = active replicas in assignment order, leader its first; none active → error."""
        records: list[MetadataRecord] = []
        for offset, replicas in enumerate(assignment):
            isr = tuple(r for r in replicas if self.is_active(r))
            if not isr:
                return Error.INVALID_REPLICA_ASSIGNMENT
            state = PartitionState(replicas=tuple(replicas), isr=isr, leader=isr[0])
            records.append(PartitionRecord(topic, first_index + offset, state))
        return records

    def create_topic(
        self, topic: str, assignment: Sequence[Sequence[int]], configs: dict[str, str] | None = None
    ) -> Error:
        if topic in self.topic_ids:
            return Error.TOPIC_ALREADY_EXISTS
        configs = dict(configs or {})
        if any(key not in TOPIC_CONFIG_KEYS for key in configs):
            return Error.INVALID_CONFIG
        if not assignment:
            return Error.INVALID_REPLICA_ASSIGNMENT
        error = self.validate_assignment(assignment)
        if error is Error.NONE and len({len(r) for r in assignment}) != 1:
            error = Error.INVALID_REPLICA_ASSIGNMENT
        if error is not Error.NONE:
            return error
        partition_records = self.new_partition_records(topic, 0, assignment)
        if isinstance(partition_records, Error):
            return partition_records
        topic_id = str(uuid.uuid5(_TOPIC_ID_NAMESPACE, f"{topic}/{self.next_offset}"))
        self.append([TopicRecord(topic, topic_id, tuple(sorted(configs.items()))), *partition_records])
        return Error.NONE

    def delete_topics(self, topics: Sequence[str]) -> dict[str, Error]:
        """DeleteTopics by name (Kafka 3.9 `ControllerApis.deleteTopics`, then
        `ReplicationControlManager.deleteTopics`): a name given twice is INVALID_REQUEST, an unknown
        one UNKNOWN_TOPIC_OR_PARTITION; every other topic gets one RemoveTopicRecord, all of them
        in one atomic batch. Replaying it forgets the topic's partitions, so they no longer count
        for anything that walks the partitions (a leaderless one is no longer elected on every
        later unfencing, `handleBrokerUnfenced`)."""
        results: dict[str, Error] = {}
        records: list[MetadataRecord] = []
        for name in topics:
            if name in results:
                results[name] = Error.INVALID_REQUEST
            elif name not in self.topic_ids:
                results[name] = Error.UNKNOWN_TOPIC_OR_PARTITION
            else:
                results[name] = Error.NONE
        for name, error in results.items():
            if error is Error.NONE:
                records.append(RemoveTopicRecord(name, self.topic_ids[name]))
        self.append(records)
        return results

    def replication_factor_of(self, topic: str) -> int:
        """The factor new partitions must have: the replicas of the first partition in Kafka's
        iteration order (reference_impl/timeline_order.py; ReplicationControlManager.createPartitions,
        3.3.2-4.1.1: `topicInfo.parts.values().iterator().next()`), not necessarily partition 0."""
        return len(self.partitions[(topic, self.partition_tables[topic].first())].replicas)

    def create_partitions(self, topic: str, count: int, assignment: Sequence[Sequence[int]]) -> Error:
        if topic not in self.topic_ids:
            return Error.UNKNOWN_TOPIC_OR_PARTITION
        existing = sum(1 for (t, _) in self.partitions if t == topic)
        if count <= existing:
            return Error.INVALID_PARTITIONS
        if len(assignment) != count - existing:
            return Error.INVALID_REPLICA_ASSIGNMENT
        error = self.validate_assignment(assignment, self.replication_factor_of(topic))
        if error is not Error.NONE:
            return error
        records = self.new_partition_records(topic, existing, assignment)
        if isinstance(records, Error):
            return records
        self.append(records)
        return Error.NONE

    # ------------------------------------------------------------------ elections and reassignment

    def elect_leaders(self, election: Election, partitions: Sequence[tuple[str, int]]) -> list[ElectionResult]:
        """ElectLeaders (§4.8): PREFERRED or UNCLEAN, per partition in request order."""
        results: list[ElectionResult] = []
        records: list[MetadataRecord] = []
        for topic, index in partitions:
            current = self.partitions.get((topic, index))
            if current is None:
                results.append(ElectionResult(topic, index, Error.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            if election is Election.PREFERRED and current.leader == current.replicas[0]:
                results.append(ElectionResult(topic, index, Error.ELECTION_NOT_NEEDED))
                continue
            if election is Election.UNCLEAN and current.leader != NO_LEADER:
                results.append(ElectionResult(topic, index, Error.ELECTION_NOT_NEEDED))
                continue
            record = build_partition_change(
                topic, index, current, ChangeTargets(election=election), self.is_active, self.change_rules(topic)
            )
            if record is None:
                missing = (
                    Error.PREFERRED_LEADER_NOT_AVAILABLE
                    if election is Election.PREFERRED
                    else Error.ELIGIBLE_LEADERS_NOT_AVAILABLE
                )
                results.append(ElectionResult(topic, index, missing))
                continue
            records.append(record)
            results.append(ElectionResult(topic, index, Error.NONE))
        self.append(records)
        return results

    def reassign(self, topic: str, index: int, target: Sequence[int]) -> Error:
        """AlterPartitionReassignments, start (§3.4): replicas = target + removing; the builder
        completes at once when the ISR already allows it.

        Kafka 3.3.2-3.9.0 `ReplicationControlManager.changePartitionReassignment` calls
        `setTargetRemoving` / `setTargetAdding` only when the new list is non-empty, and
        `PartitionChangeBuilder` starts from the partition's current lists: a reassignment that
        replaces one in progress and has nothing to add (or remove) keeps the *old* adding (or
        removing) replicas — e.g. [1]→[3,2] then →[3] leaves adding [2,3] (docs/known-divergences.md)."""
        current = self.partitions.get((topic, index))
        if current is None:
            return Error.UNKNOWN_TOPIC_OR_PARTITION
        error = self.validate_assignment([target])
        if error is not Error.NONE:
            return error
        target_tuple = tuple(target)
        removing = tuple(sorted(set(current.replicas) - set(target_tuple)))
        adding = tuple(sorted(set(target_tuple) - set(current.replicas)))
        targets = ChangeTargets(
            replicas=target_tuple + removing, removing=removing or current.removing, adding=adding or current.adding,
            election=self.election_for(topic),
        )
        record = build_partition_change(topic, index, current, targets, self.is_active, self.change_rules(topic))
        if record is not None:
            self.append([record])
        return Error.NONE

    def partition_keys(self) -> list[tuple[str, int]]:
        return sorted(self.partitions)
