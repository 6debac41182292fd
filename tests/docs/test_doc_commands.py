"""Every command the README and the guides show is run, as a reader would run it.

The commands are the lines of every ```bash block of README.md and docs/*.md (continuation lines
joined, trailing `# comments` dropped) and the `run:` steps of their ```yaml blocks; a command line
in any other fenced block fails the test (a ```text synopsis with [placeholders] excepted). Each has an
entry in `COMMANDS` saying how it is tested:

* `as_shown` — run exactly as documented (cheap enough), with the exit code it must give;
* `cheaper` — a cheaper variant is run instead (fewer examples, a bundled file for a placeholder,
  `--help` for a command that needs a host or port that only the reader has), with the reason;
* `needs` — needs a Kafka distribution (`kafka-home`), a Docker engine (`docker`), a Kafka source
  checkout and build (`kafka-source`), or minutes (`slow`: the main job, Spark): its sub-command's
  `--help` runs by default; the command itself (or a bounded variant) runs in a test marked `slow`
  where a distribution exists (kafka-home, slow) and skips with the reason where it does not;
  a command that needs a Kafka source build is shown, and only its sub-command checked.

A documented command without an entry fails `test_every_documented_command_has_an_entry`, and so
does an entry no document shows any more. Commands of one document run in the order shown, in
one temporary directory (with the repository's folders linked in), so that one command's output
(`build/`, `runs/`) is the next one's input.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED_KAFKA = ROOT.parent / "shared" / "kafka"
DOCUMENTS = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")))
BLOCK = re.compile(r"^```(bash|yaml)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
COMMENT = re.compile(r"\s+#\s.*$|^#.*$")
YAML_RUN = re.compile(r"^\s*(?:-\s+)?run:\s+(\S.*)$")


@dataclass(frozen=True)
class Treatment:
    how: str
    """as_shown, cheaper, needs"""
    expect: int | None = 0
    """The exit code; None for a campaign against real Kafka code, where what it finds is for the
    qualification runs to triage: it must exit 0 or 1 having tested runs ("N runs (N tested)")."""
    variant: str | None = None
    """The command run instead of the documented one (None: as documented)."""
    needs: str | None = None
    """kafka-home, docker or kafka-source (how == needs)."""
    why: str = ""


def as_shown(expect: int = 0) -> Treatment:
    return Treatment("as_shown", expect)


def cheaper(variant: str, why: str, expect: int = 0) -> Treatment:
    return Treatment("cheaper", expect, variant, why=why)


def needs(what: str, variant: str | None = None, expect: int | None = 0, why: str = "") -> Treatment:
    return Treatment("needs", expect, variant, what, why)


JVM_CLASSPATH = ('isrcheck run --kafka 3.9 --examples 500 --records runs/ --adapter '
                 '"kafka-jvm,classpath=$KAFKA_SRC/metadata/build/libs/kafka-metadata-3.9.1-SNAPSHOT.jar:$KAFKA_HOME/libs/*"')
CI_CAMPAIGN = ('isrcheck run --adapter "exec:java -cp build ToyController" --no-differential --budget 600 '
               '--records out/records --junit out/junit.xml')
STDIO_REFERENCE = "exec:python3 -m isrcheck.adapters.plugins.stdio_reference"

COMMANDS: dict[str, Treatment] = {
    # README.md
    "python3 -m pip install -e '.[dev]' && isrcheck pipeline --out isrcheck-out": needs(
        "slow", "isrcheck pipeline --out isrcheck-out",
        why="the install is the environment this test runs in; the main job takes minutes"),
    "python3 -m pytest -n auto": cheaper(
        "python3 -m pytest --collect-only -q tests/docs/test_property_glossary.py",
        "it is this test suite: collecting it shows it starts"),
    f'isrcheck run --adapter "{STDIO_REFERENCE} --mutant B02" --examples 100 --seed 1': as_shown(expect=1),
    "isrcheck run --adapter isrcheck.adapters.plugins.example_cluster:LossyCluster --level cluster --examples 50 "
    "--seed 1": as_shown(expect=1),
    "isrcheck run --adapter isrcheck.adapters.plugins.example_cluster:RestampingCluster --level cluster --examples 50 "
    "--seed 1": as_shown(expect=1),
    "isrcheck qualify --adapter kafka-docker --kafka 3.9.0 --budget 1800 --out DIR --junit DIR/junit.xml": needs(
        "docker", "isrcheck qualify --adapter kafka-docker --kafka 3.9.0 --budget 300 --out out --junit out/junit.xml",
        why="five minutes instead of thirty; tests/containers runs the workflow's own step"),
    JVM_CLASSPATH: needs("kafka-source", why="a Kafka build of your own ($KAFKA_SRC): ./gradlew jar"),
    "isrcheck replay runs/<campaign>-w0.jsonl --run <run_id>": cheaper(
        "isrcheck replay --help", "the run id is the one a campaign printed"),
    # docs/plugins.md
    "javac -d build docs/plugins/java/ToyController.java": as_shown(),
    'isrcheck run --adapter "exec:java -cp build ToyController" --no-differential --examples 100 --seed 1': cheaper(
        'isrcheck run --adapter "exec:java -cp build ToyController" --no-differential --examples 30 --seed 1',
        "fewer runs (tests/docs/test_java_plugin.py asserts what they find)"),
    'isrcheck run --adapter "exec:java -cp build ToyController --bug" --no-differential --examples 100 --seed 1':
        as_shown(expect=1),
    "isrcheck run --adapter isrcheck.adapters.plugins.example_cluster:ToyCluster --level cluster --examples 50 "
    "--seed 1": as_shown(),
    "isrcheck run --adapter isrcheck.adapters.plugins.simulated_cluster:DeposedControllerCluster --level cluster "
    "--kafka 3.9 --seed 1001 --examples 40": as_shown(expect=1),
    "python -m pip install -e ./isrcheck": cheaper(
        "python3 -m pip show isrcheck", "the CI job's install: the test runs where isrcheck is installed"),
    CI_CAMPAIGN: cheaper(CI_CAMPAIGN.replace("--budget 600", "--examples 10 --seed 1") + " && test -s out/junit.xml",
                         "a fixed number of runs instead of ten minutes"),
    # docs/running.md
    "isrcheck scenario conformance/scenarios --kafka 3.9": as_shown(),
    "isrcheck scenario my-case.yaml --json": cheaper(
        "isrcheck scenario conformance/scenarios/broker_lifecycle.yaml --json", "my-case.yaml is the reader's file"),
    "isrcheck run --level all --examples 1000 --records runs/": cheaper(
        "isrcheck run --level all --examples 10 --seed 1 --records runs/", "fewer runs"),
    "isrcheck run --mutant B02 --examples 500": cheaper(
        "isrcheck run --mutant B02 --examples 500 --seed 1", "a fixed seed (it stops at its first finding)", 1),
    'isrcheck run --adapter "exec:./my-controller --stdio"': cheaper(
        f'isrcheck run --adapter "{STDIO_REFERENCE}" --examples 20 --seed 1', "./my-controller is the reader's"),
    "isrcheck serve-controller --kafka 3.9 --session-timeout-ms 1000 --metadata-log wire-log/ &": cheaper(
        "isrcheck serve-controller --help", "a server left running; the wire tests run it (tests/wire)"),
    "isrcheck run --adapter kafka-wire,metadata-log=wire-log/ --bootstrap 127.0.0.1:PORT --kafka 3.9": cheaper(
        "isrcheck run --help", "PORT is the one serve-controller printed; the wire tests run it (tests/wire)"),
    "isrcheck run --spark --master spark://HOST:7077 --examples 100000 --records /shared/runs/": cheaper(
        "isrcheck run --help", "needs a Spark cluster; tests/spark_campaign runs --spark on local[2]"),
    "isrcheck summarize runs/ --out summary/ && isrcheck report summary/ -o report.html": needs(
        "slow", why="starts Spark (half a minute); the records come from the campaign above"),
    # docs/cluster-scenarios.md
    "isrcheck scenario tests/mutants/scenarios/b08_maximal_isr.yaml --adapter reference+B08a": as_shown(expect=1),
    "isrcheck scenario conformance/scenarios/cluster --adapter reference+N2": as_shown(),
    # docs/exec-protocol.md
    'isrcheck run --adapter "exec:./my-controller --isrcheck-stdio" --kafka 4.1 --examples 500': cheaper(
        f'isrcheck run --adapter "{STDIO_REFERENCE}" --kafka 4.1 --examples 20 --seed 1',
        "./my-controller is the reader's; the reference behind the same protocol"),
    'isrcheck scenario conformance/scenarios --adapter "exec:./my-controller --isrcheck-stdio"': cheaper(
        f'isrcheck scenario conformance/scenarios --adapter "{STDIO_REFERENCE}"', "./my-controller is the reader's"),
    # docs/qualify.md
    "isrcheck qualify --adapter kafka-local,kafka-home=DIR --kafka 3.9 --budget 1800 --out out --junit out/junit.xml":
        needs("kafka-home", "isrcheck qualify --adapter kafka-local,kafka-home=$SHARED_KAFKA/3.9 --kafka 3.9 "
              "--budget 240 --out out --junit out/junit.xml", why="four minutes instead of thirty"),
    "isrcheck qualify --adapter kafka-docker --kafka 3.9.0 --budget 1800 --out out --junit out/junit.xml": needs(
        "docker", "isrcheck qualify --adapter kafka-docker --kafka 3.9.0 --budget 240 --out out --junit out/junit.xml",
        why="four minutes instead of thirty"),
    # docs/known-divergences.md
    "python3 bench/volume.py --releases 3.3,3.5,3.7,3.9 --adapters kafka-jvm --minutes 30 "
    "--seeds 1000011,2000011,3000011 --out V/jvm": needs(
        "kafka-home", "python3 bench/volume.py --releases 3.9 --adapters kafka-jvm --minutes 0.5 --seeds 1000011 "
        "--out V/jvm | grep -q '| 3.9 | kafka-jvm | 1 (1000011) |'", why="half a minute of one release"),
    "python3 bench/volume.py --releases 3.3,3.5,3.7,3.9 --adapters kafka-cluster --minutes 30 --out V/cluster": needs(
        "kafka-home", "python3 bench/volume.py --releases 3.9 --adapters kafka-cluster --minutes 3 --out V/cluster "
        "| grep -q '| 3.9 | kafka-cluster | 1 ('", why="three minutes of one release"),
    "isrcheck qualify --adapter kafka-local,kafka-home=../shared/kafka/3.9 --kafka 3.9 --budget 1800 "
    "--out V/qualify-local-3.9": cheaper(
        "isrcheck qualify --help", "docs/qualify.md's kafka-local qualify is the same command with another --out; "
        "it runs where a distribution is"),
    "isrcheck qualify --adapter kafka-docker --kafka 3.9.0 --budget 1800 --out V/qualify-docker-3.9.0": cheaper(
        "isrcheck qualify --help", "docs/qualify.md's kafka-docker qualify is the same command with another --out; "
        "it runs where Docker is"),
    "python3 bench/volume.py --table V/jvm V/cluster V/qualify-local-3.9 V/qualify-docker-3.9.0 "
    "--write docs/results/volume.md": cheaper(
        "isrcheck run --kafka 3.9 --examples 5 --seed 1 --collect --records V/ref/3.9-reference && "
        "python3 bench/volume.py --table V/ref --write V/volume.md && grep -q '^- commit: ' V/volume.md && "
        "grep -q '| 3.9 | reference | 1 (1) | 5 |' V/volume.md",
        "a reference campaign's records stand for real Kafka's, and the file is not written into docs/"),
    # docs/real-kafka.md
    "export KAFKA_HOME=/opt/kafka_2.13-3.9.0": needs(
        "kafka-home", "export KAFKA_HOME=$SHARED_KAFKA/3.9 && isrcheck scenario "
        "conformance/scenarios/broker_lifecycle.yaml --adapter kafka-local --kafka 3.9",
        why="the distribution here is ../shared/kafka/3.9; kafka-local finds it through $KAFKA_HOME"),
    "isrcheck scenario conformance/scenarios --adapter kafka-local --kafka 3.9": needs(
        "kafka-home", "isrcheck scenario conformance/scenarios/alter_partition_validation.yaml "
        "--adapter kafka-local,kafka-home=$SHARED_KAFKA/3.9 --kafka 3.9", why="one scenario file of the suite"),
    "isrcheck run --adapter kafka-local --kafka 3.9 --examples 50 --steps 30 --records records/": needs(
        "kafka-home", "isrcheck run --adapter kafka-local,kafka-home=$SHARED_KAFKA/3.9 --kafka 3.9 --examples 5 "
        "--steps 20 --seed 1 --records records/", expect=None),
    "isrcheck scenario conformance/scenarios --adapter kafka-docker --kafka 3.9.0": needs(
        "docker", "isrcheck scenario conformance/scenarios/alter_partition_validation.yaml --adapter kafka-docker "
        "--kafka 3.9.0", why="one scenario file of the suite (tests/containers runs the whole suite)"),
    "isrcheck scenario conformance/scenarios --adapter kafka-wire,bootstrap=ctl.example:9093,kafka-home=/opt/kafka "
    "--kafka 3.9": cheaper("isrcheck scenario --help", "ctl.example is the reader's running controller"),
    "isrcheck run --adapter kafka-cluster --kafka 3.9 --level cluster --examples 5 --steps 12 --records records/":
        needs("kafka-home", "isrcheck run --adapter kafka-cluster --kafka 3.9 --level cluster --examples 1 --steps 4 "
        "--seed 1 --records records/", expect=None),
    "isrcheck check records/*.jsonl": cheaper(
        "isrcheck run --adapter isrcheck.adapters.plugins.example_cluster:ToyCluster --level cluster --examples 3 "
        "--seed 1 --records records/ && isrcheck check records/*.jsonl | grep -q '3 runs judged'",
        "a black-box plug-in's records stand for a real cluster's (tests/real_cluster re-checks real ones)"),
    "isrcheck replay records/<file>.jsonl --run <run_id>": cheaper(
        "isrcheck replay --help", "the file and run id are the ones a campaign printed"),
    "isrcheck run --adapter kafka-cluster,kafka-home=/opt/kafka_2.13-3.5.2 --kafka 3.5 --level cluster --budget 1800":
        needs("kafka-home", "isrcheck run --adapter kafka-cluster,kafka-home=$SHARED_KAFKA/3.5 --kafka 3.5 "
              "--level cluster --examples 1 --steps 4 --seed 1", expect=None),
    "isrcheck run --adapter kafka-cluster,containers=1 --kafka 3.9.0 --level cluster": needs(
        "docker", "isrcheck run --adapter kafka-cluster,containers=1 --kafka 3.9.0 --level cluster --examples 1 "
        "--steps 4 --seed 1", expect=None),
    "isrcheck run --adapter kafka-cluster,base-port=23300 --kafka 3.3 --level cluster --steps 3 --seed 903 "
    "--budget 1800 --stop-at-first --shrink-budget 1 --records DIR": needs(
        "kafka-home", "isrcheck run --adapter kafka-cluster --kafka 3.3 --level cluster --steps 3 --seed 903 "
        "--examples 2 --stop-at-first --shrink-budget 1 --records DIR", expect=None,
        why="two of the nine runs (tests/real_cluster's slow test reaches the finding)"),
    "sh docs/upstream/build-patched-partition.sh ../shared/kafka/3.9 docs/upstream/equal-epoch-keep-pending-isr.patch "
    "/tmp/partition.jar /path/to/apache-kafka.git": needs("kafka-source"),
    "isrcheck run --adapter kafka-cluster,classpath=/tmp/partition.jar --kafka 3.9 --level cluster --budget 1800":
        needs("kafka-source", why="the jar the line above builds from Kafka's source"),
    "python3 bench/equal_epoch_evidence.py --kafka 3.9 --classpath /tmp/partition.jar --out /tmp/patched": needs(
        "kafka-source", why="the jar the lines above build from Kafka's source"),
    # docs/wire.md
    "isrcheck scenario conformance/scenarios --adapter kafka-wire --kafka 3.9": cheaper(
        "isrcheck scenario conformance/scenarios/broker_lifecycle.yaml --adapter kafka-wire --kafka 3.9",
        "one scenario file of the suite (tests/wire runs more)"),
    "isrcheck scenario FILE --adapter kafka-wire,metadata-log=DIR --bootstrap 127.0.0.1:9093 --kafka 3.9": cheaper(
        "isrcheck scenario --help", "FILE, DIR and the address are the reader's server's (tests/wire runs it)"),
    "isrcheck run --adapter kafka-wire,mutant=B01 --kafka 3.9 --examples 200": cheaper(
        "isrcheck run --adapter kafka-wire,mutant=B01 --kafka 3.9 --examples 200 --seed 1",
        "a fixed seed (it stops at its first finding)", 1),
    # docs/cluster-scenarios.md (2)
    "isrcheck scenario conformance/scenarios/cluster --adapter reference --kafka 3.5": as_shown(),
    # docs/kafka-jvm.md
    "isrcheck scenario conformance/scenarios --adapter kafka-jvm --kafka 3.9": needs(
        "kafka-home", "isrcheck scenario conformance/scenarios/alter_partition_validation.yaml --adapter kafka-jvm "
        "--kafka 3.9", why="one scenario file of the suite"),
    "isrcheck run --adapter kafka-jvm --kafka 3.3 --examples 200": needs(
        "kafka-home", "isrcheck run --adapter kafka-jvm --kafka 3.3 --examples 20 --seed 1", expect=None),
    "isrcheck run --adapter kafka-jvm,kafka-home=/opt/kafka_2.13-3.7.1 --kafka 3.7": needs(
        "kafka-home",
        "isrcheck run --adapter kafka-jvm,kafka-home=$SHARED_KAFKA/3.7 --kafka 3.7 --examples 20 --seed 1",
        expect=None),
    'isrcheck run --adapter "kafka-jvm,classpath=patched.jar:/opt/kafka/libs/*" --kafka 3.9': needs(
        "kafka-home", 'isrcheck run --adapter "kafka-jvm,classpath=$SHARED_KAFKA/3.9/libs/*" --kafka 3.9 --examples 20 '
        "--seed 1", why="the release's own jars stand for a patched jar ahead of them", expect=None),
    "KAFKA_GIT=/work/.mirror/apache+kafka/repo": needs("kafka-source"),
    "docs/kafka-jvm-demo/build-patched-class.sh ../shared/kafka/3.9 docs/kafka-jvm-demo/drop-kip841-eligibility.patch "
    "/tmp/patched.jar $KAFKA_GIT": needs("kafka-source"),
    'isrcheck run --adapter "kafka-jvm,classpath=/tmp/patched.jar:../shared/kafka/3.9/libs/*" --kafka 3.9 '
    "--examples 200 --seed 2 --records /tmp/runs": needs("kafka-source"),
}


def commands_in(text: str) -> list[str]:
    commands: list[str] = []
    for kind, body in BLOCK.findall(text):
        if kind == "yaml":
            commands += [m.group(1).strip() for m in map(YAML_RUN.match, body.splitlines()) if m]
            continue
        joined = re.sub(r"\\\n\s*", "", body)
        for line in joined.splitlines():
            line = COMMENT.sub("", line).strip()
            line = re.sub(r"\s{2,}", " ", line)
            if line:
                commands.append(line)
    return commands


def documented() -> list[tuple[str, str]]:
    return [(doc, command) for doc in DOCUMENTS
            for command in commands_in((ROOT / doc).read_text(encoding="utf-8"))]


def test_the_extraction_reads_blocks_continuations_comments_and_yaml_steps() -> None:
    text = ("x\n```bash\nisrcheck a --b 1   # why\nisrcheck c \\\n    --d 2\n```\n```\nnot bash\n```\n"
            "```yaml\nsteps:\n  - run: javac -d build X.java\n  - uses: actions/checkout@v4\n```\n")
    assert commands_in(text) == ["isrcheck a --b 1", "isrcheck c --d 2", "javac -d build X.java"]


ANY_BLOCK = re.compile(r"^```([A-Za-z]*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
COMMAND_LINE = re.compile(
    r"^\s*(?:\$\s+)?(?:[A-Z_]+=\S+\s+)*(isrcheck|python3?|java|javac|docker|sh|bash|export|pip)\s")


def commands_outside_bash_blocks(text: str) -> list[str]:
    """Command lines in a fenced block that is neither ```bash nor ```yaml (so the test above would
    not run them); a ```text block may show a synopsis, whose placeholders are in [brackets]."""
    found = []
    for kind, body in ANY_BLOCK.findall(text):
        if kind in ("bash", "yaml"):
            continue
        found += [line.strip() for line in body.splitlines()
                  if COMMAND_LINE.match(line) and not (kind == "text" and "[" in line)]
    return found


def test_a_command_outside_a_bash_block_is_caught() -> None:
    text = ("```\nisrcheck run --examples 5\n```\n```text\nisrcheck serve-controller [--port 0]\n"
            "campaign 1b: reference\n```\n```console\n$ python3 bench/x.py\n```\n")
    assert commands_outside_bash_blocks(text) == ["isrcheck run --examples 5", "$ python3 bench/x.py"]


def test_every_command_shown_is_in_a_bash_block() -> None:
    """Else it is shown to readers and never run: write it as ```bash (and give it an entry)."""
    outside = {doc: found for doc in DOCUMENTS
               if (found := commands_outside_bash_blocks((ROOT / doc).read_text(encoding="utf-8")))}
    assert not outside, outside


def test_every_documented_command_has_an_entry() -> None:
    shown = {command for _, command in documented()}
    missing = sorted(shown - set(COMMANDS))
    assert not missing, ("documented commands with no entry in COMMANDS (say how they are tested):\n"
                         + "\n".join(missing))
    stale = sorted(set(COMMANDS) - shown)
    assert not stale, "entries no document shows any more:\n" + "\n".join(stale)


def workdir(tmp_path: Path) -> Path:
    """A directory where a reader's relative paths resolve (the repository's folders linked in)
    and what the commands write stays out of the checkout."""
    for name in ("conformance", "docs", "tests", "adapters", "bench"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def shell(command: str, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
           "SHARED_KAFKA": str(SHARED_KAFKA), "ISRCHECK_KAFKA_PORTS": os.environ.get("ISRCHECK_KAFKA_PORTS", "")}
    if not env["ISRCHECK_KAFKA_PORTS"]:
        del env["ISRCHECK_KAFKA_PORTS"]
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def sub_command_help(command: str) -> str | None:
    """`isrcheck SUB --help` for a command that starts with isrcheck (None otherwise)."""
    match = re.match(r"(?:\S+=\S+\s+)*isrcheck\s+([a-z-]+)", command)
    return f"isrcheck {match.group(1)} --help" if match else None


def documents_with_runnable_commands() -> list[str]:
    return sorted({doc for doc, command in documented() if COMMANDS.get(command, as_shown()).how in
                   ("as_shown", "cheaper")})


@pytest.mark.parametrize("doc", documents_with_runnable_commands())
def test_the_commands_of_a_document_run_in_order(doc: str, tmp_path: Path) -> None:
    if doc == "docs/plugins.md" and shutil.which("javac") is None:
        pytest.skip("docs/plugins.md builds its example with javac: no JDK on PATH")
    cwd = workdir(tmp_path)
    ran = 0
    for _, command in [(d, c) for d, c in documented() if d == doc]:
        treatment = COMMANDS[command]
        if treatment.how not in ("as_shown", "cheaper"):
            continue
        done = shell(treatment.variant or command, cwd)
        assert done.returncode == treatment.expect, (
            f"{doc}: `{treatment.variant or command}` exited {done.returncode}, expected {treatment.expect}\n"
            f"{done.stdout[-1500:]}\n{done.stderr[-1500:]}")
        ran += 1
    assert ran > 0


@pytest.mark.parametrize("command", sorted(c for c, t in COMMANDS.items()
                                           if t.how == "needs" and sub_command_help(t.variant or c)))
def test_a_command_that_needs_more_than_this_machine_at_least_parses(command: str, tmp_path: Path) -> None:
    helper = sub_command_help(COMMANDS[command].variant or command)
    assert helper is not None
    done = shell(helper, tmp_path)
    assert done.returncode == 0 and "usage" in done.stdout.lower(), done.stderr[-1500:]


def kafka_home_present() -> bool:
    return all((SHARED_KAFKA / release / "libs").is_dir() for release in ("3.3", "3.7", "3.9"))


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(c for c, t in COMMANDS.items() if t.how == "needs"
                                           and t.needs in ("kafka-home", "slow", "docker")))
def test_a_command_that_needs_a_kafka_distribution_or_minutes(command: str, tmp_path: Path) -> None:
    treatment = COMMANDS[command]
    if treatment.needs == "kafka-home" and not kafka_home_present():
        pytest.skip(f"needs Kafka distributions under {SHARED_KAFKA} (3.3, 3.7, 3.9)")
    if treatment.needs == "docker":
        from tests.docker_images import IMAGES, require

        require(IMAGES["3.9"])
    cwd = workdir(tmp_path)
    if "summarize runs/" in command:  # its input: the campaign records docs/running.md writes first
        assert shell("isrcheck run --examples 20 --seed 1 --records runs/", cwd).returncode == 0
    done = shell(treatment.variant or command, cwd, timeout=900)
    output = f"{done.stdout[-1500:]}\n{done.stderr[-1500:]}"
    if treatment.expect is None:
        tested = re.search(r"(\d+) runs \((\d+) tested\)", done.stdout)
        assert done.returncode in (0, 1) and tested and int(tested.group(2)) > 0, output
    else:
        assert done.returncode == treatment.expect, output
