"""Why each mutant that survived bench/mutation.py survived, judged by reading it against the
protocol (docs/protocol/) and the engine's operation vocabulary (docs/generation.md).

Keys are `module:operator:occurrence` as bench/mutation.py prints them (stable while the module's
source is unchanged); `LINE_RULES` classify by the mutated line itself, for a change that is
equivalent wherever it occurs. Kinds:
- `equivalent`: no execution of the model can tell the mutant from the original;
- `unreachable`: a behaviour change the operation vocabulary cannot reach (no operation or
  configuration produces the input it needs);
- `gap`: reachable, and neither generation nor the properties caught it within the budget.

Run alone, it lists the entries: `python3 bench/mutation_triage.py`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

KINDS = ("equivalent", "unreachable", "gap")


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

TRIAGE: dict[str, Triage] = {
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
