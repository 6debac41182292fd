"""Find a JDK and Kafka's jars, compile the harness once per set of jars, and build the command
that starts it (docs/kafka-jvm.md).

The harness is the project's own Java source (`java/org/apache/kafka/controller/Isrcheck*.java`,
package data). It is compiled with `javac` against the chosen jars into
`<cache>/kafka-jvm/<hash>/classes`, where the hash covers the harness source and every jar or
class directory on the class path, so a rebuilt Kafka (or an edited harness) compiles afresh and
an unchanged one starts at once. A missing JDK, Kafka home or jar is a one-line `UsageError`.

Start-up: when every class path entry is a jar, the compiled harness is jarred too and, once per
class path (its exact paths, sizes and mtimes, and the JVM build: what the JVM checks before
mapping an archive), one run of the harness that warms up and exits writes a class-data-sharing archive
(`-XX:ArchiveClassesAtExit`, JDK 13+) of every class it loaded; later JVMs map it
(`-XX:SharedArchiveFile`) instead of loading, verifying and linking Kafka's classes again. On the
2-core test machine that cut a start from 0.6 s to 0.35 s of CPU with no warm-up, 1.6 s to 1.1 s
with the default one. An archive that cannot be written costs nothing but the attempt; one the JVM
finds unusable (another JDK build) it ignores. A class directory on the class path (a Kafka
build's `classes/java/main`) rules CDS out; the JVM then starts as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from isrcheck.contract.errors import UsageError

JAVA_SOURCES = Path(__file__).parent / "java"
MAIN_CLASS = "org.apache.kafka.controller.IsrcheckHarness"
REQUIRED_JARS = ("kafka-clients", "kafka-metadata", "kafka-server-common")
"""Jars the controller classes need: ReplicationControlManager & co. are in kafka-metadata."""
JVM_OPTIONS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss1m",
               "-Xlog:disable", "-Xlog:all=warning:stderr")
"""Small heap, one GC thread, and only the C1 compiler: runs are short and the machine is shared —
C2's compile threads cost more than they give back (in-JVM AlterPartition 1,000-2,200/s with C2,
8,600-11,600/s C1-only, same loaded 2-core machine). The JVM's own warnings go to stderr: by
default unified logging writes them to stdout, which is the exec protocol's channel (a CDS archive
the JVM could not map once printed `[warning][cds,dynamic] …` where `describe`'s reply belonged)."""


@dataclass(frozen=True)
class Jdk:
    java: str
    javac: str


def find_jdk() -> Jdk:
    """`$JAVA_HOME/bin` first, then PATH; both `java` and `javac` are needed (the harness is compiled on first use)."""
    java_home = os.environ.get("JAVA_HOME")
    candidates = [str(Path(java_home) / "bin")] if java_home else []
    for directory in [*candidates, None]:
        java = shutil.which("java", path=directory) if directory else shutil.which("java")
        javac = shutil.which("javac", path=directory) if directory else shutil.which("javac")
        if java and javac:
            return Jdk(java, javac)
    raise UsageError("kafka-jvm needs a JDK 17+ (java and javac on PATH or in $JAVA_HOME/bin); none found")


def kafka_home_classpath(kafka_home: Path) -> list[Path]:
    """Every jar in `KAFKA_HOME/libs`, after checking the controller's jars are there."""
    libs = kafka_home / "libs"
    if not libs.is_dir():
        raise UsageError(f"kafka-jvm: {kafka_home} is not a Kafka home (no libs/ directory)")
    jars = sorted(libs.glob("*.jar"))
    names = [jar.name for jar in jars]
    missing = [req for req in REQUIRED_JARS if not any(n.startswith(req + "-") for n in names)]
    if missing:
        raise UsageError(f"kafka-jvm: {libs} has no {', '.join(j + '-*.jar' for j in missing)}")
    return jars


def explicit_classpath(text: str) -> list[Path]:
    """`classpath=A:B:DIR/*` — jars, class directories and `DIR/*` wildcards (a Kafka build's
    `*/build/classes/java/main` directories and its `libs`), each checked to exist."""
    entries: list[Path] = []
    for part in [p for p in text.split(os.pathsep) if p]:
        if part.endswith("/*"):
            directory = Path(part[:-2])
            if not directory.is_dir():
                raise UsageError(f"kafka-jvm: classpath entry {part!r}: no such directory")
            entries.extend(sorted(directory.glob("*.jar")))
            continue
        path = Path(part)
        if not path.exists():
            raise UsageError(f"kafka-jvm: classpath entry {part!r} does not exist")
        entries.append(path)
    if not entries:
        raise UsageError("kafka-jvm: classpath= is empty")
    return entries


def fingerprint(entry: Path) -> bytes:
    """A jar's content hash, or for a class directory the names, sizes and mtimes of its files."""
    digest = hashlib.sha256()
    if entry.is_dir():
        for path in sorted(entry.rglob("*")):
            if path.is_file():
                stat = path.stat()
                digest.update(f"{path.relative_to(entry)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    else:
        with entry.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.digest()


def classpath_hash(entries: list[Path]) -> str:
    digest = hashlib.sha256()
    for source in sorted(JAVA_SOURCES.rglob("*.java")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    for entry in entries:
        digest.update(str(entry.name).encode() + b"\0" + fingerprint(entry))
    return digest.hexdigest()[:24]


def cache_root() -> Path:
    """`$ISRCHECK_CACHE_DIR/kafka-jvm`, else `$XDG_CACHE_HOME` or `~/.cache` + `/isrcheck/kafka-jvm`."""
    explicit = os.environ.get("ISRCHECK_CACHE_DIR")
    if explicit:
        return Path(explicit) / "kafka-jvm"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "isrcheck" / "kafka-jvm"


def compile_harness(jdk: Jdk, entries: list[Path]) -> Path:
    """The compiled harness for these jars, compiling it first if no cached copy exists."""
    target = cache_root() / classpath_hash(entries)
    classes = target / "classes"
    if (classes / MAIN_CLASS.replace(".", "/")).with_suffix(".class").exists():
        return classes
    target.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="classes-", dir=target))
    sources = [str(s) for s in sorted(JAVA_SOURCES.rglob("*.java"))]
    command = [jdk.javac, "-nowarn", "-encoding", "UTF-8", "-d", str(work),
               "-cp", os.pathsep.join(str(e) for e in entries), *sources]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        first = next((line for line in completed.stderr.splitlines() if "error:" in line), completed.stderr.strip())
        raise UsageError(f"kafka-jvm: the harness does not compile against these jars: {first[:300]}")
    try:
        work.rename(classes)
    except OSError:  # another process won the race: use its copy
        shutil.rmtree(work, ignore_errors=True)
    return classes


def harness_jar(classes: Path) -> Path:
    """The compiled harness as a jar beside its classes (CDS maps classes from jars only)."""
    jar = classes.parent / "harness.jar"
    if jar.exists():
        return jar
    work = Path(tempfile.mkstemp(prefix="harness-", suffix=".jar", dir=classes.parent)[1])
    with zipfile.ZipFile(work, "w", zipfile.ZIP_STORED) as archive:
        for path in sorted(classes.rglob("*.class")):
            archive.write(path, path.relative_to(classes).as_posix())
    work.replace(jar)
    return jar


def archive_key(jdk: Jdk, classpath: str) -> str:
    """What a CDS archive is valid for: the JVM checks the exact class path and each jar's size and
    mtime, and refuses an archive another JVM build wrote. The same Kafka release copied to another
    directory or unpacked again (same content, so the same harness) needs an archive of its own."""
    digest = hashlib.sha256(classpath.encode())
    java = Path(os.path.realpath(jdk.java))
    libjvm = java.parent.parent / "lib" / "server" / "libjvm.so"
    for path in [java, libjvm, *(Path(entry) for entry in classpath.split(os.pathsep))]:
        with contextlib.suppress(OSError):
            stat = path.stat()
            digest.update(f"\0{path}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def class_data_archive(jdk: Jdk, classpath: str, directory: Path) -> Path | None:
    """The CDS archive of the harness's classes for this class path, written once by a run of
    the harness that warms up and exits at once (end of stdin); None if it could not be."""
    key = archive_key(jdk, classpath)
    archive = directory / f"classes-{key}.jsa"
    failed = directory / f"classes-{key}.jsa.failed"
    if archive.exists():
        return archive
    if failed.exists():
        return None
    work = directory / f"classes-{key}-{os.getpid()}.jsa.tmp"
    command = [jdk.java, *JVM_OPTIONS, f"-XX:ArchiveClassesAtExit={work}", "-cp", classpath, MAIN_CLASS]
    try:
        completed = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=120, check=False)
        if completed.returncode == 0 and work.exists() and work.stat().st_size > 0:
            work.replace(archive)
            return archive
        failed.write_bytes(completed.stderr[-2000:])
    except (OSError, subprocess.TimeoutExpired):
        pass
    finally:
        work.unlink(missing_ok=True)
    return None


def harness_command(entries: list[Path], jdk: Jdk | None = None) -> list[str]:
    """`java … IsrcheckHarness` with the compiled harness ahead of the given class path, mapping
    the class path's CDS archive when every entry is a jar."""
    jdk = jdk or find_jdk()
    classes = compile_harness(jdk, entries)
    if not all(entry.is_file() for entry in entries):
        classpath = os.pathsep.join([str(classes), *(str(e) for e in entries)])
        return [jdk.java, *JVM_OPTIONS, "-cp", classpath, MAIN_CLASS]
    classpath = os.pathsep.join([str(harness_jar(classes)), *(str(e) for e in entries)])
    archive = class_data_archive(jdk, classpath, classes.parent)
    sharing = [] if archive is None else [f"-XX:SharedArchiveFile={archive}"]
    return [jdk.java, *JVM_OPTIONS, *sharing, "-cp", classpath, MAIN_CLASS]
