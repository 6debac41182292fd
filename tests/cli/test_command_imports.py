"""A sub-command imports its own module, not every command's: building the parser of all nine
imported kio's protocol schemas (for `serve-controller`) and the report's modules before any
command started, about a quarter of a second that a campaign's parent spent while its workers
waited. Help and usage errors still list every command."""

from __future__ import annotations

import subprocess
import sys

import pytest

from isrcheck import cli


def imported_after(argv: list[str]) -> set[str]:
    """The `isrcheck.commands` and kio modules loaded by a fresh interpreter that ran `argv`."""
    probe = ("import sys\nfrom isrcheck import cli\ncode = cli.main(sys.argv[1:])\n"
             "print(' '.join(m for m in sys.modules if m.startswith(('isrcheck.commands.', 'kio'))))\n"
             "sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(done.stdout.strip().splitlines()[-1].split())


def test_a_campaign_imports_neither_other_commands_nor_kio() -> None:
    loaded = imported_after(["run", "--level", "controller", "--examples", "2", "--steps", "5", "--seed", "1"])
    assert "isrcheck.commands.run" in loaded
    assert not loaded & {"isrcheck.commands.serve_controller", "isrcheck.commands.pipeline",
                         "isrcheck.commands.scenario", "isrcheck.commands.replay"}
    assert not any(m == "kio" or m.startswith("kio.") for m in loaded)


@pytest.mark.parametrize("command", [cli.command_name(m) for m in cli.COMMAND_MODULES])
def test_each_command_is_parsed_by_its_own_module(command: str) -> None:
    parser = cli.build_parser([command, "--help"])
    choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(choices) == [command]


def test_help_and_an_unknown_command_list_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["no-such-command"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    for module in cli.COMMAND_MODULES:
        assert f"'{cli.command_name(module)}'" in err
