"""kio requests ↔ `isrcheck.reference_impl.messages`: the reference controller behind a Kafka listener.

A thin translation layer for `KafkaProtocolServer` (adapters/reference_server/handler.py): each
`handle_<api>` turns the kio request into the reference's value-typed request, calls the
controller inside one `ServedController.event()` (clock, lock, metadata log) and turns the
answer back into the kio response of the same version. The advertised versions follow the
release profile (controller.md §7: AlterPartition 0–2 on 3.3, 0–3 on 3.5–3.9, 2–3 on 4.x;
BrokerRegistration and BrokerHeartbeat ranges likewise).

Registration admission that the reference model leaves to the wire (§4.1 checks 2, 5, 6:
cluster id, log directories, feature ranges) is checked here, because a fake broker that
gets them wrong must see what a real controller would answer. Not modelled: automatic replica
placement (CreateTopics/CreatePartitions need explicit assignments, as §5 recommends), DeleteTopics
by topic id, reassignment cancellation, authorization, DescribeCluster broker endpoints.
"""

from __future__ import annotations

import dataclasses
import functools
import uuid
from collections.abc import Sequence
from typing import Any

from isrcheck.adapters.kafka_wire.metadata_versions import ELR_FEATURE, METADATA_VERSION_FEATURE, level_of
from isrcheck.adapters.reference_server.handler import BaseHandler, FeatureSet
from isrcheck.adapters.reference_server.served_controller import ServedController
from isrcheck.adapters.wire import VersionRange
from isrcheck.adapters.wire.apis import (
    ALTER_PARTITION,
    ALTER_PARTITION_REASSIGNMENTS,
    BROKER_HEARTBEAT,
    BROKER_REGISTRATION,
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    DESCRIBE_CLUSTER,
    ELECT_LEADERS,
    UNREGISTER_BROKER,
    lookup,
    nested_class,
)
from isrcheck.adapters.wire.codec import NO_THROTTLE
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.messages import (
    AlterPartitionItem,
    AlterPartitionRequest,
    AlterPartitionTopic,
    BrokerRegistrationRequest,
    HeartbeatRequest,
    IsrMember,
)
from isrcheck.reference_impl.partition_change import Election
from isrcheck.reference_impl.release import MetadataVersion
from kio.schema.errors import ErrorCode

LOG_DIRS_REQUIRED = MetadataVersion(3, 7, 2)
"""§4.1 check 5 / §9.2: from MV 3.7-IV2 a registration must carry log directories."""
NULL_UUID = uuid.UUID(int=0)


@functools.cache
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls))


def build(cls: type, **values: Any) -> Any:
    """Instantiate a kio entity, dropping the fields this version of it does not have."""
    names = _field_names(cls)
    return cls(**{k: v for k, v in values.items() if k in names})


def code(error: Error) -> ErrorCode:
    return ErrorCode(int(error))


class ReferenceControllerHandler(BaseHandler):
    """Answers the controller APIs of controller.md §9.1 from a `ServedController`."""

    def __init__(self, served: ServedController, *, cluster_id: str, node_id: int,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        profile = served.controller.profile
        super().__init__({
            ALTER_PARTITION: profile.alter_partition_versions,
            BROKER_REGISTRATION: profile.broker_registration_versions,
            BROKER_HEARTBEAT: profile.broker_heartbeat_versions,
        })
        self.served = served
        self.cluster_id = cluster_id
        self.node_id = node_id
        self.endpoint = (host, port)

    # ------------------------------------------------------------------ features (§9.2)

    def finalized_levels(self) -> dict[str, int]:
        config = self.served.controller.config
        levels = {METADATA_VERSION_FEATURE: level_of(config.metadata_version)}
        if config.eligible_leader_replicas:
            levels[ELR_FEATURE] = 1
        return levels

    def features(self) -> FeatureSet | None:
        """Finalized features in ApiVersions: served by controllers from 3.7 on (§7)."""
        profile = self.served.controller.profile
        if profile.name in ("3.3", "3.5"):
            return None
        finalized = {name: VersionRange(level, level) for name, level in self.finalized_levels().items()}
        supported = {METADATA_VERSION_FEATURE: VersionRange(1, level_of(profile.default_metadata_version))}
        if not profile.is_3x:
            supported[ELR_FEATURE] = VersionRange(0, 1)
        return FeatureSet(supported=supported, finalized=finalized, finalized_epoch=0)

    def admission_error(self, request: Any, api_version: int) -> Error:
        """§4.1 checks 2, 5 and 6, in that order."""
        controller = self.served.controller
        if self.cluster_id and request.cluster_id != self.cluster_id:
            return Error.INCONSISTENT_CLUSTER_ID
        if controller.config.metadata_version >= LOG_DIRS_REQUIRED:
            dirs = list(getattr(request, "log_dirs", ()))
            if not dirs or len(set(dirs)) != len(dirs) or any(d is None or d.int < 100 for d in dirs):
                return Error.INVALID_REGISTRATION
        declared = {f.name: (int(f.min_supported_version), int(f.max_supported_version)) for f in request.features}
        finalized = self.finalized_levels()
        if METADATA_VERSION_FEATURE not in declared:
            if not controller.profile.is_3x:
                return Error.INVALID_REGISTRATION
            declared[METADATA_VERSION_FEATURE] = (1, 1)
        amend_unfinalized = controller.profile.name not in ("3.3", "3.5", "3.7", "3.8")
        for name, (low, high) in declared.items():
            level = finalized.get(name, 0 if amend_unfinalized else None)
            if level is not None and not low <= level <= high:
                return Error.UNSUPPORTED_VERSION
        if amend_unfinalized and any(finalized[n] and n not in declared for n in finalized):
            return Error.UNSUPPORTED_VERSION
        return Error.NONE

    # ------------------------------------------------------------------ broker lifecycle (§4)

    def handle_broker_registration(self, request: Any, api_version: int) -> Any:
        response_cls = lookup(BROKER_REGISTRATION, api_version).response
        with self.served.event() as controller:
            error = self.admission_error(request, api_version)
            epoch = -1
            if error is Error.NONE:
                answer = controller.register_broker(BrokerRegistrationRequest(
                    int(request.broker_id), str(request.incarnation_id),
                    int(getattr(request, "previous_broker_epoch", -1)), api_version,
                ))
                error, epoch = answer.error, answer.broker_epoch
        return build(response_cls, throttle_time=NO_THROTTLE, error_code=code(error), broker_epoch=epoch)

    def handle_broker_heartbeat(self, request: Any, api_version: int) -> Any:
        with self.served.event() as controller:
            answer = controller.heartbeat(HeartbeatRequest(
                int(request.broker_id), int(request.broker_epoch), int(request.current_metadata_offset),
                want_fence=bool(request.want_fence), want_shut_down=bool(request.want_shut_down),
            ))
        return build(
            lookup(BROKER_HEARTBEAT, api_version).response, throttle_time=NO_THROTTLE,
            error_code=code(answer.error), is_caught_up=answer.is_caught_up, is_fenced=answer.is_fenced,
            should_shut_down=answer.should_shut_down,
        )

    def handle_unregister_broker(self, request: Any, api_version: int) -> Any:
        with self.served.event() as controller:
            error = controller.unregister_broker(int(request.broker_id))
        return build(lookup(UNREGISTER_BROKER, api_version).response, throttle_time=NO_THROTTLE,
                     error_code=code(error), error_message=None)

    # ------------------------------------------------------------------ topics (§5)

    def handle_create_topics(self, request: Any, api_version: int) -> Any:
        response_cls = lookup(CREATE_TOPICS, api_version).response
        result_cls = nested_class(response_cls, "CreatableTopicResult")
        results = []
        with self.served.event() as controller:
            for topic in request.topics:
                error, message = self.create_one_topic(topic, bool(request.validate_only))
                topic_id = controller.topic_ids.get(topic.name)
                results.append(build(
                    result_cls, name=topic.name, error_code=code(error), error_message=message,
                    topic_id=uuid.UUID(topic_id) if topic_id and error is Error.NONE else NULL_UUID,
                    num_partitions=len(topic.assignments) if error is Error.NONE else -1,
                    replication_factor=len(topic.assignments[0].broker_ids) if error is Error.NONE else -1,
                    configs=None,
                ))
        return build(response_cls, throttle_time=NO_THROTTLE, topics=tuple(results))

    def create_one_topic(self, topic: Any, validate_only: bool) -> tuple[Error, str | None]:
        controller = self.served.controller
        if not topic.assignments:
            return Error.INVALID_REQUEST, "serve-controller needs explicit replica assignments (§5)"
        if topic.num_partitions != -1 or topic.replication_factor != -1:
            return Error.INVALID_REQUEST, "numPartitions and replicationFactor must be -1 with assignments"
        ordered = sorted(topic.assignments, key=lambda a: a.partition_index)
        if [a.partition_index for a in ordered] != list(range(len(ordered))):
            return Error.INVALID_REPLICA_ASSIGNMENT, "partition indexes must be 0..n-1"
        if validate_only:
            return Error.NONE, None
        configs = {c.name: c.value for c in topic.configs if c.value is not None}
        error = controller.create_topic(topic.name, [list(a.broker_ids) for a in ordered], configs)
        return error, None

    def handle_delete_topics(self, request: Any, api_version: int) -> Any:
        """DeleteTopics by name (Kafka 3.9 `ControllerApis.deleteTopics`): v1–v5 name topics in
        `topic_names`, v6 in `topics` (a name with the zero id). By id alone is not served: the
        adapters delete by name."""
        response_cls = lookup(DELETE_TOPICS, api_version).response
        result_cls = nested_class(response_cls, "DeletableTopicResult")
        if api_version >= 6:  # kio reads the zero id as None
            by_name = [t.name is not None and t.topic_id in (None, NULL_UUID) for t in request.topics]
            names = [t.name for t, named in zip(request.topics, by_name, strict=True) if named]
            refused = [t for t, named in zip(request.topics, by_name, strict=True) if not named]
        else:
            names, refused = list(request.topic_names), []
        with self.served.event() as controller:
            ids = {name: controller.topic_ids.get(name) for name in names}
            errors = controller.delete_topics(names)
        results = [
            build(result_cls, name=name, error_code=code(error), error_message=None,
                  topic_id=uuid.UUID(ids[name]) if error is Error.NONE and ids[name] else NULL_UUID)
            for name, error in errors.items()
        ]
        results += [
            build(result_cls, name=t.name, topic_id=t.topic_id, error_code=code(Error.INVALID_REQUEST),
                  error_message="serve-controller deletes topics by name only")
            for t in refused
        ]
        return build(response_cls, throttle_time=NO_THROTTLE, responses=tuple(results))

    def handle_create_partitions(self, request: Any, api_version: int) -> Any:
        response_cls = lookup(CREATE_PARTITIONS, api_version).response
        result_cls = nested_class(response_cls, "CreatePartitionsTopicResult")
        results = []
        with self.served.event() as controller:
            for topic in request.topics:
                if topic.assignments is None:
                    error = Error.INVALID_REQUEST
                else:
                    assignment = [list(a.broker_ids) for a in topic.assignments]
                    error = controller.create_partitions(topic.name, int(topic.count), assignment)
                results.append(build(result_cls, name=topic.name, error_code=code(error), error_message=None))
        return build(response_cls, throttle_time=NO_THROTTLE, results=tuple(results))

    # ------------------------------------------------------------------ AlterPartition (§2)

    def handle_alter_partition(self, request: Any, api_version: int) -> Any:
        topics = []
        for topic in request.topics:
            items = []
            for p in topic.partitions:
                if api_version >= 3:
                    members = tuple(IsrMember(int(m.broker_id), int(m.broker_epoch)) for m in p.new_isr_with_epochs)
                else:
                    members = tuple(IsrMember(int(b)) for b in p.new_isr)
                items.append(AlterPartitionItem(
                    int(p.partition_index), int(p.leader_epoch), int(p.partition_epoch), members,
                    int(getattr(p, "leader_recovery_state", 0)),
                ))
            if api_version < 2:
                topics.append(AlterPartitionTopic(tuple(items), topic_name=topic.topic_name))
            else:
                topic_id = "" if topic.topic_id is None or topic.topic_id == NULL_UUID else str(topic.topic_id)
                topics.append(AlterPartitionTopic(tuple(items), topic_id=topic_id))
        with self.served.event() as controller:
            answer = controller.alter_partition(AlterPartitionRequest(
                api_version, int(request.broker_id), int(request.broker_epoch), tuple(topics)))
        response_cls = lookup(ALTER_PARTITION, api_version).response
        topic_cls = nested_class(response_cls, "TopicData")
        partition_cls = nested_class(response_cls, "PartitionData")
        topic_results = []
        for requested, result in zip(request.topics, answer.topics, strict=False):
            partitions = tuple(
                build(partition_cls, partition_index=r.partition, error_code=code(r.error), leader_id=r.leader,
                      leader_epoch=r.leader_epoch, isr=tuple(r.isr), leader_recovery_state=r.leader_recovery_state,
                      partition_epoch=r.partition_epoch)
                for r in result.partitions
            )
            name_or_id = ({"topic_name": requested.topic_name} if api_version < 2
                          else {"topic_id": requested.topic_id})
            topic_results.append(build(topic_cls, partitions=partitions, **name_or_id))
        return build(response_cls, throttle_time=NO_THROTTLE, error_code=code(answer.error),
                     topics=tuple(topic_results))

    # ------------------------------------------------------------------ elections, reassignment (§3.4, §4.8)

    def handle_elect_leaders(self, request: Any, api_version: int) -> Any:
        response_cls = lookup(ELECT_LEADERS, api_version).response
        election_type = int(getattr(request, "election_type", 0))
        if election_type not in (0, 1):
            return build(response_cls, throttle_time=NO_THROTTLE, error_code=code(Error.INVALID_REQUEST),
                         replica_election_results=())
        election = Election.PREFERRED if election_type == 0 else Election.UNCLEAN
        with self.served.event() as controller:
            everything = request.topic_partitions is None
            if everything:
                wanted = controller.partition_keys()
            else:
                wanted = [(tp.topic, int(p)) for tp in request.topic_partitions for p in tp.partitions]
            results = controller.elect_leaders(election, wanted)
        if everything:
            results = [r for r in results if r.error is not Error.ELECTION_NOT_NEEDED]
        return build(response_cls, throttle_time=NO_THROTTLE, error_code=code(Error.NONE),
                     replica_election_results=self.election_results(response_cls, results))

    @staticmethod
    def election_results(response_cls: type, results: Sequence[Any]) -> tuple[Any, ...]:
        topic_cls = nested_class(response_cls, "ReplicaElectionResult")
        partition_cls = nested_class(response_cls, "PartitionResult")
        grouped: dict[str, list[Any]] = {}
        for r in results:
            grouped.setdefault(r.topic, []).append(
                partition_cls(partition_id=r.partition, error_code=code(r.error), error_message=None))
        return tuple(topic_cls(topic=t, partition_result=tuple(ps)) for t, ps in grouped.items())

    def handle_alter_partition_reassignments(self, request: Any, api_version: int) -> Any:
        response_cls = lookup(ALTER_PARTITION_REASSIGNMENTS, api_version).response
        topic_cls = nested_class(response_cls, "ReassignableTopicResponse")
        partition_cls = nested_class(response_cls, "ReassignablePartitionResponse")
        responses = []
        with self.served.event() as controller:
            for topic in request.topics:
                partitions = []
                for p in topic.partitions:
                    if p.replicas is None:  # cancellation is not modelled by the reference
                        state = controller.partition(topic.name, int(p.partition_index))
                        busy = state is not None and (state.adding or state.removing)
                        error = Error.INVALID_REQUEST if busy else Error.NO_REASSIGNMENT_IN_PROGRESS
                    else:
                        error = controller.reassign(topic.name, int(p.partition_index), list(p.replicas))
                    partitions.append(partition_cls(partition_index=p.partition_index, error_code=code(error),
                                                    error_message=None))
                responses.append(topic_cls(name=topic.name, partitions=tuple(partitions)))
        return build(response_cls, throttle_time=NO_THROTTLE, error_code=code(Error.NONE), error_message=None,
                     responses=tuple(responses), allow_replication_factor_change=True)

    def handle_describe_cluster(self, request: Any, api_version: int) -> Any:
        """The cluster id (what a fake broker needs, §9.2) and this controller as its endpoint."""
        response_cls = lookup(DESCRIBE_CLUSTER, api_version).response
        broker_cls = nested_class(response_cls, "DescribeClusterBroker")
        host, port = self.endpoint
        brokers = (build(broker_cls, broker_id=self.node_id, host=host, port=port, rack=None, is_fenced=False),)
        return build(response_cls, throttle_time=NO_THROTTLE, error_code=code(Error.NONE), error_message=None,
                     endpoint_type=getattr(request, "endpoint_type", 1), cluster_id=self.cluster_id,
                     controller_id=self.node_id, brokers=brokers, cluster_authorized_operations=-2147483648)
