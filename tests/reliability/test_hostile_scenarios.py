"""No scenario file takes isrcheck down (issue 15): each hostile file of `hostile.scenario_corpus`
is refused with one line naming the limit it broke — exit 2, no traceback, promptly (a FIFO
does not hang it, /dev/zero is not read). The limits themselves are shown to bite on files just
past them and to let through files just within them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile import GOOD_STEPS, Hostile, billion_laughs, scenario_corpus
from isrcheck.conformance.scenario.bounded_yaml import MAX_ALIASES, MAX_BYTES, MAX_DEPTH, MAX_INT_DIGITS
from isrcheck.conformance.scenario.load import ScenarioFormatError, load_file

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Hostile]:
    return scenario_corpus(tmp_path_factory.mktemp("hostile-scenarios"))


def test_every_hostile_file_is_refused_with_the_reason(corpus: list[Hostile]) -> None:
    outcomes = {}
    for item in corpus:
        started = time.monotonic()
        try:
            load_file(item.path)
            outcomes[item.kind] = "accepted"
        except ScenarioFormatError as error:
            message = str(error)
            outcomes[item.kind] = "ok" if item.expect in message and "\n" not in message else message
        assert time.monotonic() - started < 10, item.kind
    assert {kind: outcome for kind, outcome in outcomes.items() if outcome != "ok"} == {}


CLI_KINDS = ("FIFO", "/dev/zero", "10,000-deep sequences", "5,000-digit integer", "billion laughs (9 x 9 aliases)",
             "binary", "duplicate argument")


def test_the_command_line_refuses_them_in_one_line_with_exit_2(corpus: list[Hostile]) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for item in (item for item in corpus if item.kind in CLI_KINDS):
        done = subprocess.run([sys.executable, "-m", "isrcheck", "scenario", str(item.path)], capture_output=True,
                              text=True, timeout=60, env=env, check=False)
        assert done.returncode == 2, (item.kind, done.stderr[-500:])
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, (item.kind, done.stderr[-500:])
        assert item.expect in done.stderr, (item.kind, done.stderr)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return path


def nested(depth: int) -> str:
    # `steps:` is one level; a list of `depth - 1` nested lists inside it
    return "name: x\nsteps: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"


def test_nesting_at_the_limit_reaches_the_format_check_past_it_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScenarioFormatError, match="must be a mapping with one operation key"):
        load_file(write(tmp_path, nested(MAX_DEPTH)))
    with pytest.raises(ScenarioFormatError, match=f"nested deeper than {MAX_DEPTH} levels"):
        load_file(write(tmp_path, nested(MAX_DEPTH + 1)))


def test_aliases_up_to_the_limit_are_fine(tmp_path: Path) -> None:
    brokers = "name: x\nb: &b 1\nbrokers: [" + ", ".join(["*b"] * MAX_ALIASES) + "]\n" + GOOD_STEPS
    with pytest.raises(ScenarioFormatError, match="unknown key"):  # 'b' is no scenario key: parsed, then checked
        load_file(write(tmp_path, brokers))
    with pytest.raises(ScenarioFormatError, match=f"more than {MAX_ALIASES} aliases"):
        load_file(write(tmp_path, brokers.replace("[*b,", "[*b, *b,")))


def test_alias_expansion_is_counted_not_the_aliases(tmp_path: Path) -> None:
    assert "more than 100,000 nodes" in refusal(write(tmp_path, billion_laughs(5, 12)))  # 60 aliases, 12^5 nodes
    assert "unknown key" in refusal(write(tmp_path, billion_laughs(2, 12)))  # 24 aliases, 144 nodes


def refusal(path: Path) -> str:
    with pytest.raises(ScenarioFormatError) as caught:
        load_file(path)
    return str(caught.value)


def test_integers_within_64_bits_pass_beyond_them_do_not(tmp_path: Path) -> None:
    ok = write(tmp_path, f"name: x\nbrokers: [{(1 << 63) - 1}]\n" + GOOD_STEPS)
    assert load_file(ok)[0].brokers == ((1 << 63) - 1,)
    assert "64 bits" in refusal(write(tmp_path, f"name: x\nbrokers: [{1 << 63}]\n" + GOOD_STEPS))
    assert "digits" in refusal(write(tmp_path, "name: x\nbrokers: [" + "1" * (MAX_INT_DIGITS + 1) + "]\n"
                                     + GOOD_STEPS))


def test_size_limit_is_exact(tmp_path: Path) -> None:
    head = "name: x\n" + GOOD_STEPS
    path = write(tmp_path, head + "#" * (MAX_BYTES - len(head) - 1) + "\n")
    assert path.stat().st_size == MAX_BYTES
    assert load_file(path)[0].name == "x"
    path.write_text(head + "#" * (MAX_BYTES - len(head)) + "\n")
    assert "larger than the limit" in refusal(path)


def test_tabs_and_newlines_in_strings_are_not_control_characters(tmp_path: Path) -> None:
    path = write(tmp_path, 'name: "a\\tb\\nc"\n' + GOOD_STEPS)
    assert load_file(path)[0].name == "a\tb\nc"


def test_the_repository_scenarios_all_load() -> None:
    from isrcheck.conformance.scenario.load import load_all

    assert len(load_all([str(REPO / "conformance" / "scenarios")])) > 20
