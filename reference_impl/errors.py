"""Kafka error codes used by the ISR protocol, with Kafka's names and numbers.

Scenarios and adapters compare errors by name (`Error.INELIGIBLE_REPLICA.name`), the wire by code.
"""

from __future__ import annotations

from enum import IntEnum


class Error(IntEnum):
    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    REQUEST_TIMED_OUT = 7
    CLUSTER_AUTHORIZATION_FAILED = 31
    UNSUPPORTED_VERSION = 35
    INVALID_PARTITIONS = 37
    INVALID_REPLICATION_FACTOR = 38
    INVALID_REPLICA_ASSIGNMENT = 39
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    OPERATION_NOT_ATTEMPTED = 55
    INVALID_CONFIG = 40
    TOPIC_ALREADY_EXISTS = 36
    NO_REASSIGNMENT_IN_PROGRESS = 85
    FENCED_LEADER_EPOCH = 74
    STALE_BROKER_EPOCH = 77
    PREFERRED_LEADER_NOT_AVAILABLE = 80
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
    ELECTION_NOT_NEEDED = 84
    INVALID_UPDATE_VERSION = 95
    UNKNOWN_TOPIC_ID = 100
    DUPLICATE_BROKER_REGISTRATION = 101
    BROKER_ID_NOT_REGISTERED = 102
    INCONSISTENT_CLUSTER_ID = 104
    INELIGIBLE_REPLICA = 107
    NEW_LEADER_ELECTED = 108
    INVALID_REGISTRATION = 119


def error_named(name: str) -> Error:
    """The error called `name` (Kafka's spelling); KeyError names the unknown one."""
    return Error[name]
