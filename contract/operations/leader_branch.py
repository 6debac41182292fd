"""The partition leader's decision branches (leader.md §4–§13): the points of protocol-state
coverage that say which of the leader's rules a run made the reference *take*, not only which
states it passed through.

An error code shows the controller's validation branch; nothing on the wire shows that a leader
declined to add a follower because it had not reached the epoch start offset (KAFKA-7128), let a
fenced caught-up replica stop holding the HW (KAFKA-15021) or ignored a response for a proposal
newer metadata replaced. The reference names the branch when it takes it (`Partition.reached`);
the cluster's observation carries the set; `STATES["leader_branch"]` lists them for the report.

The names are the contract: each says what happened, and its docstring cites the rule. Branches
Kafka has but a correct cluster never takes are not listed — they are named in
docs/coverage.md with the reason.
"""

from __future__ import annotations

from enum import StrEnum


class LeaderBranch(StrEnum):
    # §4: the leader serving a follower's Fetch
    FETCH_FENCED_EPOCH = "fetch_fenced_epoch"
    """§4, KIP-320: an older CurrentLeaderEpoch is answered FENCED_LEADER_EPOCH."""
    FETCH_UNKNOWN_EPOCH = "fetch_unknown_epoch"
    """§4, KIP-320: a newer CurrentLeaderEpoch (the follower saw metadata first) is UNKNOWN_LEADER_EPOCH."""
    FETCH_NOT_A_REPLICA = "fetch_not_a_replica"
    """§4, KAFKA-13837: a fetcher outside the leader's replica map is told to retry."""
    FETCH_DIVERGING = "fetch_diverging"
    """§4, §13, KAFKA-13141: a diverging epoch is answered and the follower's state is not updated."""
    FETCH_STALE_BROKER_EPOCH = "fetch_stale_broker_epoch"
    """§4 step 1, KIP-903: a fetch from an older incarnation of the replica is refused, state untouched."""
    # §5: expansion
    EXPAND_PROPOSED = "expand_proposed"
    """§5: a caught-up eligible follower is proposed; the state becomes PendingExpandIsr."""
    EXPAND_WAITS_FOR_PENDING = "expand_waits_for_pending"
    """§5 condition 1: a follower that could join waits while another ISR change is in flight."""
    EXPAND_WAITS_BELOW_EPOCH_START = "expand_waits_below_epoch_start"
    """§5 condition 3, KAFKA-7128: a follower at or above the HW but below the leader's epoch start
    offset is not added (records between the new leader's HW and LEO may be committed)."""
    EXPAND_REFUSED_INELIGIBLE = "expand_refused_ineligible"
    """§5 condition 4, KIP-841/KIP-903: an in-sync follower that is fenced, shutting down or
    fetching with another broker epoch than its registration's is not proposed."""
    # §6: shrink
    SHRINK_PROPOSED = "shrink_proposed"
    """§6: ISR members past replica.lag.time.max.ms are proposed out; state PendingShrinkIsr."""
    # §7: the high watermark
    HW_GATED_UNDER_MIN_ISR = "hw_gated_under_min_isr"
    """§7.1, KAFKA-15583 (3.7+): the committed ISR is below min ISR and the HW does not move."""
    HW_ADVANCED = "hw_advanced"
    """§7: the HW moved forward."""
    HW_HELD_BY_CAUGHT_UP_REPLICA = "hw_held_by_caught_up_replica"
    """§7 step 3, KAFKA-4485: a caught-up eligible replica outside the maximal ISR holds the HW at its LEO."""
    HW_NOT_HELD_BY_INELIGIBLE_REPLICA = "hw_not_held_by_ineligible_replica"
    """§7 step 3, KAFKA-15021: a caught-up replica outside the ISR that is fenced or shutting
    down does not hold the HW back."""
    # §8: acks=all
    PRODUCE_NOT_ENOUGH_REPLICAS = "produce_not_enough_replicas"
    """§8: acks=all with the committed ISR below min ISR is refused before the append."""
    PRODUCE_ACKNOWLEDGED = "produce_acknowledged"
    """§8: an acks=all request completes once the HW reaches it with enough maximal-ISR members."""
    PRODUCE_NOT_ENOUGH_AFTER_APPEND = "produce_not_enough_after_append"
    """§8: the HW reached the record but the maximal ISR shrank below min ISR meanwhile."""
    PRODUCE_TIMED_OUT = "produce_timed_out"
    """§8: an acks=all request the HW did not reach within request.timeout.ms."""
    # §9: AlterPartition answers
    ANSWER_FOR_REPLACED_STATE_IGNORED = "answer_for_replaced_state_ignored"
    """§9 step 1: the proposal was replaced (newer metadata, another proposal); the answer is dropped."""
    SUCCESS_COMMITTED = "success_committed"
    """§9 step 2: the ISR the controller returned is committed with its partition epoch."""
    SUCCESS_IGNORED_OTHER_EPOCH = "success_ignored_other_epoch"
    """§9 step 2: a success carrying another leader epoch (a shrink bumps it below MV 3.6-IV0) or
    an older partition epoch is ignored and the leader stays pending until metadata arrives."""
    ERROR_REVERTED = "error_reverted"
    """§9 step 3: INELIGIBLE_REPLICA / OPERATION_NOT_ATTEMPTED revert to the last committed state."""
    ERROR_WAITS_FOR_METADATA = "error_waits_for_metadata"
    """§9 step 3: a "give up" error (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION …) leaves the
    state pending until new metadata replaces it."""
    # §10: metadata
    METADATA_OLDER_DROPPED = "metadata_older_dropped"
    """§10: metadata with an older partition epoch than the local one (an answer got there first) is dropped."""
    METADATA_REPLACED_PENDING = "metadata_replaced_pending"
    """§10: newer metadata overwrites a pending ISR change; its in-flight item is not cancelled."""
    # §12: the AlterPartitionManager
    SUBMIT_REFUSED = "submit_refused"
    """§12: a proposal for a partition that still has an item queued or in flight is refused
    (OPERATION_NOT_ATTEMPTED at once)."""
    REQUEST_REROUTED = "request_rerouted"
    """§12: NOT_CONTROLLER (top level or per partition) or a lost connection: the same request is
    resent to the rediscovered controller, no callback invoked."""
    # §13: the follower
    FOLLOWER_FENCED = "follower_fenced"
    """§13: FENCED_LEADER_EPOCH on fetch stops fetching the partition until new metadata."""
    FOLLOWER_TRUNCATED_DIVERGING = "follower_truncated_diverging"
    """§13, KAFKA-10554: a diverging epoch makes the follower truncate before its next fetch."""


LEADER_BRANCHES: tuple[str, ...] = tuple(branch.value for branch in LeaderBranch)
