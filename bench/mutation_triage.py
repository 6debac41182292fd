"""Why each mutant that survived bench/mutation.py survived, judged by reading it against the
protocol (docs/protocol/) and the engine's operation vocabulary (docs/generation.md).

Keys are `module:operator:occurrence` as bench/mutation.py prints them (stable while the module's
source is unchanged); `LINE_RULES` classify by the mutated line itself, for a change that is
equivalent wherever it occurs. Kinds:
- `equivalent`: no execution of the model can tell the mutant from the original;
- `unreachable`: a behaviour change the operation vocabulary cannot reach (no operation or
  configuration produces the input it needs);
- `gap`: reachable, and neither generation nor the properties caught it within the budget;
- `as-kafka`: the mutant does what Kafka does where the reference is stricter than Kafka (cited):
  no correct property may kill it, so, like an equivalent one, it is not counted among the
  mutants to kill; it stays in the table as a note on the reference.

Run alone, it lists the entries: `python3 bench/mutation_triage.py`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

KINDS = ("equivalent", "unreachable", "gap", "as-kafka")
NOT_TO_KILL = ("equivalent", "as-kafka")
"""The kinds left out of the mutants a score counts (no correct campaign may kill them)."""


@dataclass(frozen=True)
class Triage:
    kind: str
    reason: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"triage kind {self.kind!r} is not one of {KINDS}")


LINE_RULES: dict[str, Triage] = {
    "if TYPE_CHECKING:": Triage("equivalent", "the guard of imports used only in annotations, which "
                                "`from __future__ import annotations` never evaluates: importing them at run "
                                "time changes nothing (no import cycle results)"),
}
"""The original line (stripped) → its triage, for every mutation of that line."""

TIMING = ("timing only: the same state is reached later, which no property bounds (the engine judges "
          "safety after every step and liveness after the heal)")
SLOW_FOLLOWER = ("reachable: the `slow_follower` schedule makes a follower that keeps fetching below its leader's "
                 "log end, and P-SHRINK bounds its stay in the ISR (tests/engine/test_slow_follower.py)")
DRAWN_SETTINGS = ("reachable: controller campaigns with drawn settings (`4:4.0:drawn`: ELR opted in on 4.0, "
                  "metadata.version below 3.6-IV0) run this branch")
LAST_KNOWN_ONLY_WHEN_LEADERLESS = (
    "equivalent in every state the controller reaches: on 4.0 lastKnownElr is set only by the record that empties "
    "the ISR, which also takes the leader away (the leader is always an ISR member), and cleared by the record that "
    "elects the next leader, so it is non-empty only while the partition has no leader and an empty ISR. ")
MEASURED_EQUAL = (
    "Measured (bench/mutant_decisions.py, 4.0, seed 21 with ELR on and seed 22 with drawn settings, 60 s each): "
    "in 37,030 partition changes the mutant's `build_partition_change` returned the original's record every "
    "time, where the killed `not record_isr` → `record_isr` mutant's differed in 17,434")
SMALL_INT = ("equivalent: `is` on ints CPython caches (-5..256) equals `==`; broker ids, epochs and -1 stay "
             "in that range in every run")
SINGLE_LAST_KNOWN = ("equivalent: guarded by `len(current.last_known_elr) == 1`, so index 0 and -1 are the "
                     "same element")

TRIAGE: dict[str, Triage] = {
    "alter_partition:core/ReplaceComparisonOperator_Gt_Lt:2": Triage(
        "gap", "generation: needs a partition left RECOVERING by an unclean election and then its leader's "
        "AlterPartition stating RECOVERING with more than one member (§2.4 row 9), which the default mix "
        "composes rarely. A rule composing them killed it by the differential in 0.5 s but cost the properties "
        "alone D1 (none of 400 runs on seeds 1-5, against 90-168 without it), so it is not in the generator. "
        "Drawing unclean.leader.election.enable (3.9+) into the drawn-settings campaign did not reach it either "
        "(bench/mutant_decisions.py --function validate_item, 4.0: 0 of 5,314 calls decided differently in 40 s), "
        "so that draw was not kept"),
    "partition_change:core/ReplaceComparisonOperator_NotEq_Lt:7": Triage(
        "equivalent", LAST_KNOWN_ONLY_WHEN_LEADERLESS + "The mutant differs only when a record empties an ISR while "
        "lastKnownElr already names a replica other than the leader, i.e. never. " + MEASURED_EQUAL),
    "partition_change:core/ReplaceUnaryOperator_Delete_Not:13": Triage("gap", DRAWN_SETTINGS),
    "partition_change:core/ReplaceComparisonOperator_NotEq_GtE:9": Triage(
        "equivalent", LAST_KNOWN_ONLY_WHEN_LEADERLESS + "The mutant differs only when lastKnownElr is non-empty while "
        "the partition has a leader, i.e. never. " + MEASURED_EQUAL),
    "partition_change:core/ReplaceComparisonOperator_Is_Eq:0": Triage(
        "equivalent", "an enum member is equal only to itself: `is` and `==` agree"),
    "partition_change:core/ReplaceComparisonOperator_IsNot_Is:2": Triage("gap", DRAWN_SETTINGS),
    "partition_change:core/NumberReplacer:3": Triage("equivalent", SINGLE_LAST_KNOWN),
    "partition_change:core/NumberReplacer:15": Triage("equivalent", SINGLE_LAST_KNOWN),
    "leader_rules:core/ReplaceComparisonOperator_Eq_GtE:0": Triage(
        "equivalent", "a follower's tracked fetch offset never exceeds the leader's log end offset: a Fetch past "
        "it is answered OFFSET_OUT_OF_RANGE without tracking (§4), and a leader's log only grows while it leads "
        "(a re-elected leader keeps its followers' offsets only across a continuous leadership), so `>=` and `==` "
        "agree"),
    "leader_rules:core/ReplaceComparisonOperator_GtE_Lt:1": Triage("gap", SLOW_FOLLOWER),
    "leader_rules:core/ReplaceComparisonOperator_GtE_IsNot:0": Triage("gap", SLOW_FOLLOWER),
    "leader_rules:core/ReplaceComparisonOperator_NotEq_IsNot:0": Triage("equivalent", SMALL_INT),
    "leader_rules:core/ReplaceComparisonOperator_Lt_NotEq:3": Triage(
        "gap", "a diverging answer whose end offset lies past the follower's fetch offset truncates nothing "
        "(`truncation_offset` takes the smaller end) and the follower fetches again; " + TIMING),
    "leader_rules:core/ReplaceUnaryOperator_Delete_USub:2": Triage(
        "gap", "a member whose broker epoch the leader does not know is proposed with epoch 1 instead of -1; "
        "the controller refuses the proposal (KIP-903) and the leader reverts and proposes again later. No "
        "property bounds refusals of a proposal Kafka would accept; " + TIMING),
    "leader_rules:core/NumberReplacer:3": Triage(
        "equivalent", "the gate moves from 3.7.0 to 3.6.0, and no release profile lies between (3.5, then 3.7)"),
    "follower:core/ReplaceComparisonOperator_Eq_Is:0": Triage("equivalent", SMALL_INT),
    "follower:core/ReplaceComparisonOperator_NotEq_IsNot:0": Triage("equivalent", SMALL_INT),
    "follower:core/ReplaceAndWithOr:0": Triage(
        "gap", "a shutting-down follower keeps fetching partitions whose ISR no longer holds it (§13); no "
        "property observes what it fetches, and the extra fetches can neither bring it back into the ISR "
        "(KIP-841) nor hold the HW back (KAFKA-15021)"),
    "follower:core/ReplaceOrWithAnd:1": Triage(
        "equivalent", "`should_fetch` is asked only of a follower (never the leader), and a fetch towards no "
        "leader (-1) reaches no broker: the `leader == broker_id` test the mutant drops never decides"),
    "alter_partition_manager:core/ReplaceComparisonOperator_Eq_LtE:1": Triage(
        "as-kafka", "an older retry timer also calls `maybe_propagate`, which sends queued items when nothing is in "
        "flight. So does Kafka: 3.9.0-rc3 `DefaultAlterPartitionManager.sendRequest` schedules each retry with "
        "`scheduler.scheduleOnce(\"send-alter-partition\", () => maybePropagateIsrChanges(), 50)` and never cancels "
        "an older one (leader.md §12: a send may come before the back-off ends). The reference's generation guard is "
        "stricter than Kafka (timing only); the mutant is Kafka's behaviour"),
    "alter_partition_manager:core/ReplaceComparisonOperator_GtE_LtE:0": Triage(
        "equivalent", "versions run 0-3, so only below v3 does it differ: member epochs are kept where they were "
        "dropped, and below v3 (3.3) the controller ignores member epochs (no KIP-903)"),
    "alter_partition_manager:core/ReplaceComparisonOperator_Is_Lt:2": Triage(
        "gap", "a successful answer is handled as an error NONE, which the §9 table retries: the resent "
        "proposal is refused as stale and the leader waits for the metadata that carries its own change; "
        + TIMING),
    "alter_partition_manager:core/ReplaceComparisonOperator_Is_LtE:2": Triage(
        "equivalent", "differs from `is NONE` only for a negative error code, and no partition-level answer has "
        "one (UNKNOWN_SERVER_ERROR is top-level only)"),
    "alter_partition_manager:core/ReplaceComparisonOperator_IsNot_Gt:0": Triage(
        "equivalent", "differs only for UNKNOWN_SERVER_ERROR (-1), which the controller answers only to a "
        "leader recovery state no broker sends"),
    "alter_partition_manager:core/AddNot:17": Triage(
        "equivalent", "`inflight_requests` only feeds the ground truth's report, which P-1IF reads for more than "
        "one request; inverted it is never more than one, and no protocol decision reads it"),
    "alter_partition_manager:core/ReplaceTrueWithFalse:5": Triage(
        "gap", "a top-level NOT_CONTROLLER is retried after the back-off instead of resent at once to the "
        "rediscovered controller; the model has one controller address, so the same request reaches the same "
        "controller; " + TIMING),
}


def triage_of(key: str, line_before: str) -> Triage | None:
    """The triage of the mutant `key` whose changed line was `line_before`; None if untriaged."""
    return TRIAGE.get(key) or LINE_RULES.get(line_before)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args()
    for line, triage in LINE_RULES.items():
        print(f"line {line!r}: {triage.kind}: {triage.reason}")
    for key, triage in sorted(TRIAGE.items()):
        print(f"{key}: {triage.kind}: {triage.reason}")


if __name__ == "__main__":
    main()
