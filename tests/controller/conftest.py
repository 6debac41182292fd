"""Fixture helpers for the reference KRaft controller tests (controller.md §1–§7).

Everything a test needs comes through the `make` fixture, which builds a `Harness`: a
`Controller` for one release profile plus small helpers (register and unfence brokers, create a
topic, send an AlterPartition by topic name, heartbeat, read partition state and the log).

Release parametrization: a test that takes a `release` argument and has no explicit
`parametrize` for it runs once per release profile. `@pytest.mark.releases("3.9", "4.0")` or
`@pytest.mark.releases(min="3.8")` / `(max="3.7")` narrows the set.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pytest
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.messages import (
    AlterPartitionItem,
    AlterPartitionPartitionResult,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionTopic,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    IsrMember,
)
from isrcheck.reference_impl.release import ClusterConfig, profile_named
from isrcheck.reference_impl.state import MetadataRecord, PartitionChangeRecord, PartitionState

RELEASES = ("3.3", "3.5", "3.7", "3.8", "3.9", "4.0", "4.1")
BIG_OFFSET = 2**62
"""§9.2: a metadata offset every register record offset is below ("huge offset" trick)."""


def _key(release: str) -> tuple[int, int]:
    major, minor = release.split(".")
    return int(major), int(minor)


def releases(*names: str, min: str | None = None, max: str | None = None) -> list[str]:
    chosen = list(names) if names else list(RELEASES)
    if min is not None:
        chosen = [r for r in chosen if _key(r) >= _key(min)]
    if max is not None:
        chosen = [r for r in chosen if _key(r) <= _key(max)]
    return chosen


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "releases(*names, min=None, max=None): release profiles a `release` test runs on"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "release" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        if "release" in ([n.strip() for n in names.split(",")] if isinstance(names, str) else names):
            return
    mark = metafunc.definition.get_closest_marker("releases")
    chosen = releases(*mark.args, **mark.kwargs) if mark else list(RELEASES)
    metafunc.parametrize("release", chosen)


class Harness:
    """A controller plus the helpers the brief asks for."""

    def __init__(self, controller: Controller) -> None:
        self.c = controller
        self.incarnations: dict[int, int] = {}

    @property
    def release(self) -> str:
        return self.c.profile.name

    def serves(self, version: int) -> bool:
        """§2.1/§7: AlterPartition versions accepted — 3.3: 0–2; 3.5–3.9: 0–3; 4.0+: 2–3."""
        low, high = {"3.3": (0, 2), "4.0": (2, 3), "4.1": (2, 3)}.get(self.release, (0, 3))
        return low <= version <= high

    # ------------------------------------------------------------------ brokers

    def register(
        self, broker: int, incarnation: str | None = None, *, previous_broker_epoch: int = -1, version: int = 4
    ) -> BrokerRegistrationResponse:
        """BrokerRegistration; without `incarnation` the broker's current one (first: "b<id>-0")."""
        if incarnation is None:
            incarnation = f"b{broker}-{self.incarnations.get(broker, 0)}"
        return self.c.register_broker(
            BrokerRegistrationRequest(broker, incarnation, previous_broker_epoch, version)
        )

    def restart(self, broker: int, **kwargs: int) -> BrokerRegistrationResponse:
        """Register with a fresh incarnation id (a new process, §9.2)."""
        self.incarnations[broker] = self.incarnations.get(broker, 0) + 1
        return self.register(broker, **kwargs)

    def epoch(self, broker: int) -> int:
        registration = self.c.broker(broker)
        assert registration is not None, f"broker {broker} is not registered"
        return registration.epoch

    def heartbeat(
        self,
        broker: int,
        offset: int = BIG_OFFSET,
        *,
        fence: bool = False,
        shutdown: bool = False,
        epoch: int | None = None,
    ) -> HeartbeatResponse:
        return self.c.heartbeat(
            HeartbeatRequest(broker, self.epoch(broker) if epoch is None else epoch, offset, fence, shutdown)
        )

    def unfence(self, broker: int) -> HeartbeatResponse:
        """§4.5/§9.2: a caught-up heartbeat with WantFence=false, WantShutDown=false."""
        response = self.heartbeat(broker)
        assert response.error is Error.NONE and not response.is_fenced
        return response

    def start(self, *brokers: int) -> None:
        """Register and unfence each broker."""
        for broker in brokers:
            assert self.register(broker).error is Error.NONE
            self.unfence(broker)

    # ------------------------------------------------------------------ topics and partitions

    def create(
        self, topic: str, assignment: Sequence[Sequence[int]], configs: dict[str, str] | None = None
    ) -> str:
        """Create a topic (manual assignment, §5) and return its id."""
        assert self.c.create_topic(topic, assignment, configs) is Error.NONE
        return self.c.topic_ids[topic]

    def state(self, topic: str = "foo", partition: int = 0) -> PartitionState:
        current = self.c.partition(topic, partition)
        assert current is not None
        return current

    def epochs(self, topic: str = "foo", partition: int = 0) -> tuple[int, int]:
        """(leaderEpoch, partitionEpoch)."""
        current = self.state(topic, partition)
        return current.leader_epoch, current.partition_epoch

    # ------------------------------------------------------------------ AlterPartition

    def item(
        self,
        topic: str,
        isr: Iterable[int | IsrMember],
        *,
        partition: int = 0,
        leader_epoch: int | None = None,
        partition_epoch: int | None = None,
        lrs: int = 0,
    ) -> AlterPartitionItem:
        """One partition entry; epochs default to the controller's current ones."""
        current = self.c.partition(topic, partition)
        le = leader_epoch if leader_epoch is not None else (current.leader_epoch if current else 0)
        pe = partition_epoch if partition_epoch is not None else (current.partition_epoch if current else 0)
        members = tuple(m if isinstance(m, IsrMember) else IsrMember(m) for m in isr)
        return AlterPartitionItem(partition, le, pe, members, lrs)

    def topic_entry(
        self, topic: str, items: Sequence[AlterPartitionItem], version: int
    ) -> AlterPartitionTopic:
        """v0/v1 carry the name, v2+ the id (§2.3); an unknown name gives an unknown id."""
        if version < 2:
            return AlterPartitionTopic(tuple(items), topic_name=topic)
        return AlterPartitionTopic(tuple(items), topic_id=self.c.topic_ids.get(topic, f"no-such-id:{topic}"))

    def alter_request(
        self,
        broker: int,
        topics: Sequence[AlterPartitionTopic],
        *,
        version: int = 2,
        broker_epoch: int | None = None,
    ) -> AlterPartitionResponse:
        epoch = broker_epoch if broker_epoch is not None else self.epoch(broker)
        return self.c.alter_partition(AlterPartitionRequest(version, broker, epoch, tuple(topics)))

    def alter(
        self,
        broker: int,
        isr: Iterable[int | IsrMember],
        *,
        topic: str = "foo",
        version: int = 2,
        broker_epoch: int | None = None,
        **item_fields: int,
    ) -> AlterPartitionPartitionResult:
        """AlterPartition for one partition of `topic` (by name) from `broker`; its single result."""
        item = self.item(topic, isr, **item_fields)
        response = self.alter_request(
            broker, [self.topic_entry(topic, [item], version)], version=version, broker_epoch=broker_epoch
        )
        assert response.error is Error.NONE, response
        ((result,),) = [t.partitions for t in response.topics]
        return result

    # ------------------------------------------------------------------ the log

    def mark(self) -> int:
        return len(self.c.log)

    def records_since(self, mark: int) -> list[MetadataRecord]:
        return [record for _, record in self.c.log[mark:]]

    def partition_records_since(self, mark: int) -> list[PartitionChangeRecord]:
        return [r for r in self.records_since(mark) if isinstance(r, PartitionChangeRecord)]


def new_controller(release: str = "4.1", *, elr: bool | None = False, **config: object) -> Controller:
    """A controller for `release`; ELR off unless asked (None = the release's default, §7)."""
    profile = profile_named(release)
    return Controller(profile, ClusterConfig.for_profile(profile, eligible_leader_replicas=elr, **config))


@pytest.fixture
def make():
    """`make(release, elr=False, **ClusterConfig fields) -> Harness`."""

    def factory(release: str = "4.1", *, elr: bool | None = False, **config: object) -> Harness:
        return Harness(new_controller(release, elr=elr, **config))

    return factory


def shrink_bumps_leader_epoch(release: str, metadata_version: str | None = None) -> bool:
    """§2.6 / §7: 3.3 and 3.5 bump on every shrink; 3.7+ only when MV < 3.6-IV0 (the release
    defaults of 3.7+ are all ≥ 3.6-IV0). Written from the spec, not from release.py."""
    if release in ("3.3", "3.5"):
        return True
    if metadata_version is None:
        return False
    major, rest = metadata_version.split(".", 1)
    minor, iv = rest.split("-IV")
    return (int(major), int(minor), int(iv)) < (3, 6, 0)


@pytest.fixture
def shrink_bump():
    return shrink_bumps_leader_epoch
