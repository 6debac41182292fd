"""What the ground-truth forms of the properties about change remember between observations
(the previous observation, the prefix of each partition ever exposed below a leader's HW, and
which broker first acted as leader of each epoch), and how they name what they report."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from isrcheck.contract.history.ground_truth import ClusterObservation, Record, TopicPartition


@dataclass(frozen=True)
class History:
    """What the properties about change remember between observations."""

    previous: ClusterObservation | None = None
    exposed: Mapping[TopicPartition, tuple[Record, ...]] = field(default_factory=dict)
    """The longest prefix of each partition an established leader has exposed below its HW."""
    epoch_actors: Mapping[tuple[str, int, int], int] = field(default_factory=dict)
    """(topic, partition, leader epoch) → the first broker seen acting as leader of it."""

    def advance(self, observation: ClusterObservation) -> History:
        """The history after `observation`. Its maps are copied only when this step adds to them
        (it is taken after every step, and most steps add nothing): the History before is never
        changed, so a previous one still reads as it did."""
        exposed: dict[TopicPartition, tuple[Record, ...]] | None = None
        for tp in observation.partitions:
            leader = observation.established_leader(tp)
            if leader is not None and leader.hw > len((self.exposed if exposed is None else exposed).get(tp, ())) and (
                tp not in observation.unclean
            ):
                if exposed is None:
                    exposed = dict(self.exposed)
                exposed[tp] = leader.log[:leader.hw]
        actors: dict[tuple[str, int, int], int] | None = None
        for view in observation.replicas.values():
            if view.role == "leader" and observation.alive(view.broker):
                key = (view.topic, view.partition, view.leader_epoch)
                if key not in (self.epoch_actors if actors is None else actors):
                    if actors is None:
                        actors = dict(self.epoch_actors)
                    actors[key] = view.broker
        return History(observation, self.exposed if exposed is None else exposed,
                       self.epoch_actors if actors is None else actors)


def tp_name(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def log_json(log: tuple[Record, ...], start: int = 0, end: int | None = None) -> list[list[int]]:
    return [list(record) for record in log[start:end]]
