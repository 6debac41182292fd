"""Reliability figures (issue 15, docs/reliability.md): what isrcheck survives, measured from outside.

    python bench/reliability.py [--frames 20000] [--skip-kills] [--spark] [--out FILE]

Three tables, in Markdown:

1. **frames** — `isrcheck serve-controller` (a child process, with short idle and frame timeouts
   so the bench need not wait ten minutes) is sent malformed frames and valid ApiVersions
   requests over many connections, and held idle, half-prefix and partial-frame connections;
   then: is it alive and answering, which held connections it closed, RSS and open fds before
   and after.
2. **kills** — `isrcheck run` killed each way (the parent by SIGKILL, SIGTERM, SIGINT; one worker;
   an `exec:` plug-in that ignores end of input, with the parent killed; the campaign killed
   while shrinking a finding): marked processes alive 8 s later, entries left in its TMPDIR,
   records on disk at the kill and 3 s later (any growth means something still ran), truncated
   lines, and whether the finding survived.
3. **hostile inputs** — every file of tests/reliability/hostile.py: scenario files through
   `isrcheck scenario` (exit code, seconds, the error line), record files through the plain
   summary (and the Spark summary with --spark: do they agree).
"""

from __future__ import annotations

import argparse
import os
import random
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "reliability"))

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}


# ------------------------------------------------------------------------------------------ frames

def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def api_versions_frame(correlation: int) -> bytes:
    """ApiVersions v0 request: key 18, version 0, correlation id, client id 'bench'."""
    body = struct.pack(">hhih", 18, 0, correlation, 5) + b"bench"
    return struct.pack(">i", len(body)) + body


def malformed_frame(rng: random.Random) -> bytes:
    kind = rng.randrange(5)
    if kind == 0:
        return struct.pack(">i", -rng.randrange(1, 1 << 30))  # negative size
    if kind == 1:
        return struct.pack(">i", (200 << 20))  # above the frame limit
    if kind == 2:
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        return struct.pack(">i", len(body)) + body  # garbage header
    if kind == 3:
        body = struct.pack(">hhih", 9999, 0, 1, -1)
        return struct.pack(">i", len(body)) + body  # unknown API key
    body = struct.pack(">hhih", 18, 0, 1, 5) + b"bench" + b"trailing"
    return struct.pack(">i", len(body) + 4) + body  # size larger than what follows, then EOF


def exchange(port: int, data: bytes, expect_answer: bool) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        if not expect_answer:
            sock.shutdown(socket.SHUT_WR)
        try:
            return bool(sock.recv(4))
        except OSError:
            return False


def frames_probe(count: int) -> list[tuple[str, str]]:
    server = subprocess.Popen(
        [sys.executable, "-m", "isrcheck", "serve-controller", "--port", "0", "--idle-timeout", "3",
         "--frame-timeout", "3", "--max-connections", "64"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=ENV)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().strip().rsplit(":", 1)[1])
        rss0, fds0 = rss_kb(server.pid), fds(server.pid)
        rng = random.Random(15)
        started = time.monotonic()
        answered = 0
        for i in range(count):
            exchange(port, malformed_frame(rng), expect_answer=False)
            answered += exchange(port, api_versions_frame(i), expect_answer=True)
        flood_s = time.monotonic() - started
        held: dict[str, list[socket.socket]] = {"idle": [], "half prefix": [], "partial frame (1 MiB of 50 MiB)": []}
        for _ in range(20):
            held["idle"].append(socket.create_connection(("127.0.0.1", port)))
            half = socket.create_connection(("127.0.0.1", port))
            half.sendall(b"\x00\x00")
            held["half prefix"].append(half)
        for _ in range(5):
            partial = socket.create_connection(("127.0.0.1", port))
            partial.sendall(struct.pack(">i", 50 << 20) + b"\x00" * (1 << 20))
            held["partial frame (1 MiB of 50 MiB)"].append(partial)
        over_cap = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]
        time.sleep(0.5)
        refused = sum(closed(sock, 0.2) for sock in over_cap)
        rss_held = rss_kb(server.pid)
        time.sleep(4.5)
        closed_by_server = {kind: sum(closed(sock, 0.5) for sock in socks) for kind, socks in held.items()}
        alive = server.poll() is None and exchange(port, api_versions_frame(1), expect_answer=True)
        for sock in [s for socks in held.values() for s in socks] + over_cap:
            sock.close()
        time.sleep(0.5)
        rss1, fds1 = rss_kb(server.pid), fds(server.pid)
    finally:
        server.terminate()
        server.wait(10)
    rows = [
        ("malformed frames, one connection each", f"{count:,} sent, server alive and answering: {alive}"),
        ("valid ApiVersions requests, one connection each", f"{answered:,} of {count:,} answered "
                                                             f"({2 * count / flood_s:,.0f} connections/s)"),
        ("connections beyond the cap of 64 (while 45 were held)", f"{refused} of {len(over_cap)} closed at once"),
    ]
    rows += [(f"{len(held[kind])} held {kind} connections", f"{n} closed by the server within 3 s + 2 s")
             for kind, n in closed_by_server.items()]
    rows += [("RSS before → holding 5 × 1 MiB partial frames → after", f"{rss0 / 1024:.0f} → {rss_held / 1024:.0f} → "
                                                                      f"{rss1 / 1024:.0f} MB"),
             ("open fds before → after", f"{fds0} → {fds1}")]
    return rows


def closed(sock: socket.socket, within_s: float) -> bool:
    ready, _, _ = select.select([sock], [], [], within_s)
    if not ready:
        return False
    try:
        return sock.recv(1) == b""
    except OSError:
        return True


# ------------------------------------------------------------------------------------------- kills

def kills_probe() -> list[tuple[str, ...]]:
    from lifecycle import Marked, records, wait_for

    stubborn = f"exec:{sys.executable} {REPO / 'tests' / 'reliability' / 'stubborn_plugin.py'}"
    rows = []

    def probe(name: str, args: list[str], kill: Callable[[Marked], None], ready: Callable[[Path], bool]) -> None:
        with tempfile.TemporaryDirectory(prefix="isrcheck-bench-") as tmp:
            tmp_path = Path(tmp)
            out = tmp_path / "records"
            run = Marked.start([*args, "--records", str(out)], tmp_path)
            try:
                if not wait_for(lambda: ready(out), 120, 0.02):
                    rows.append((name, "did not start", "", "", "", "", ""))
                    return
                before = len(run.alive())
                at_kill = len(records(out))
                killed = time.monotonic()
                kill(run)
                wait_for(lambda: not run.alive(), 8, 0.01)
                stopped_s = time.monotonic() - killed
                orphans = len(run.alive())
                at_stop = len(records(out))
                time.sleep(3)
                after = len(records(out))
                lines = sum(len(p.read_bytes().splitlines()) for p in out.rglob("*.jsonl"))
                findings = sum(r.get("outcome") == "finding" for r in records(out))
                rows.append((name, str(before), f"{stopped_s:.2f}" if not orphans else "not within 8 s", str(orphans),
                             str(len(run.leftovers())), f"{at_kill} → {at_stop} → {after}",
                             f"{lines - after}" + (f"; findings on disk: {findings}" if "shrink" in name else "")))
            finally:
                run.cleanup()

    def count_at_least(n: int) -> Callable[[Path], bool]:
        return lambda out: out.exists() and len(records(out)) >= n

    def finding(out: Path) -> bool:
        return out.exists() and any(r.get("outcome") == "finding" for r in records(out))

    base = ["run", "--budget", "120", "--steps", "20", "--seed", "5"]
    for signum in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
        probe(f"parent of 2 workers, {signum.name}", [*base, "--workers", "2"],
              lambda run, s=signum: run.process.send_signal(s), count_at_least(20))
    probe("one of 2 workers, SIGKILL (then the parent, SIGTERM)", [*base, "--workers", "2"],
          lambda run: (os.kill(run.workers()[0], signal.SIGKILL), time.sleep(2),
                       run.process.send_signal(signal.SIGTERM)), count_at_least(20))
    probe("parent with a plug-in that ignores end of input, SIGKILL", [*base, "--adapter", stubborn],
          lambda run: run.process.kill(), count_at_least(5))
    probe("parent of 2 workers with such plug-ins, SIGKILL", [*base, "--adapter", stubborn, "--workers", "2"],
          lambda run: run.process.kill(), count_at_least(5))
    probe("parent while shrinking a finding, SIGKILL",
          ["run", "--mutant", "B01", "--examples", "400", "--steps", "40", "--seed", "1"],
          lambda run: run.process.kill(), finding)
    return rows


# ------------------------------------------------------------------------------------------ inputs

def inputs_probe(spark: bool) -> list[tuple[str, ...]]:
    from hostile import record_corpus, scenario_corpus
    from isrcheck.reports.plain_summary import summarize_files
    from isrcheck.reports.records_io import RecordReader, find_record_files

    rows = []
    with tempfile.TemporaryDirectory(prefix="isrcheck-bench-") as tmp:
        for item in scenario_corpus(Path(tmp) / "scenarios"):
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "isrcheck", "scenario", str(item.path)], capture_output=True,
                                  text=True, timeout=120, env=ENV, check=False)
            line = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
            line = line.split(": ", 3)[-1] if ": " in line else line
            crashed = "Traceback" in done.stderr
            rows.append(("scenario", item.kind, f"exit {done.returncode}" + (" TRACEBACK" if crashed else ""),
                         f"{time.monotonic() - started:.1f}", line[:90].replace("|", "\\|")))
        directory = Path(tmp) / "records"
        corpus = record_corpus(directory)
        for item in corpus:
            reader = RecordReader([item.path])
            started = time.monotonic()
            for _ in reader:
                pass
            reasons = ", ".join(f"{reason} ×{n}" for reason, n in reader.reasons.items())
            rows.append(("record file", item.kind, f"{reader.records} valid, {reader.corrupt} skipped",
                         f"{time.monotonic() - started:.1f}", reasons[:90]))
        if spark:
            from isrcheck.conformance.engine.spark_session import start_session
            from isrcheck.reports.spark_summary import summarize

            files = find_record_files([directory])
            session = start_session("local[2]")
            try:
                distributed = summarize(session, files, Path(tmp) / "spark-out")
            finally:
                session.stop()
            plain = summarize_files(files)
            same = {k: v for k, v in plain.items() if k not in ("engine", "generated_at")} == {
                k: v for k, v in distributed.items() if k not in ("engine", "generated_at")}
            rows.append(("record files", "all of the above, plain vs Spark summary",
                         "identical" if same else "DIFFERENT", "", f"{plain['corrupt']['lines']} corrupt lines"))
    return rows


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=20_000, help="malformed and valid frames each (default 20,000)")
    parser.add_argument("--skip-kills", action="store_true", help="leave out the kill probes (about 3 minutes)")
    parser.add_argument("--spark", action="store_true", help="also feed the record corpus to the Spark summary")
    parser.add_argument("--out", type=Path, help="write the tables here as well")
    args = parser.parse_args()
    parts = [f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} cores "
             f"with `python bench/reliability.py{' --spark' if args.spark else ''}`.", ""]
    parts += ["### Frames", "", table(("probe", "seen"), frames_probe(args.frames)), ""]
    if not args.skip_kills:
        parts += ["### Kills", "", table(("killed", "processes before", "all stopped after (s)", "alive 8 s later",
                                           "TMPDIR entries left", "records: at the signal → all stopped → 3 s later",
                                           "lines cut by the kill"), kills_probe()), ""]
    parts += ["### Hostile inputs", "", table(("input", "kind", "outcome", "seconds", "message"),
                                               inputs_probe(args.spark)), ""]
    text = "\n".join(parts)
    print(text)
    if args.out is not None:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
