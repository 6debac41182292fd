"""``classpath=PATH[:PATH...]`` for `kafka-local` and `kafka-cluster`: class directories or jars put
FIRST on every node's class path, before the release's own ``libs/``, so a patched Kafka class
(a broker's `kafka.cluster.Partition`, a controller's `ReplicationControlManager`) is the one the
node loads — the way a Kafka developer tests a patch to a release on real processes.

How it gets first: the release's ``bin/kafka-run-class.sh`` (3.3.2 to 4.1.1) starts from the
``CLASSPATH`` it inherits and appends ``libs/*`` after it (``CLASSPATH="$CLASSPATH":"$file"``,
then strips a leading ``:``), and the JVM loads a class or resource from the first entry that
has it. So the nodes get ``CLASSPATH=<the entries>`` in their environment, nothing else changes.
"""

from __future__ import annotations

import os
from pathlib import Path

from isrcheck.contract.errors import UsageError


def classpath_first(text: str, adapter: str) -> str:
    """The entries of `text` as absolute paths joined by ``:``; each must be an existing directory
    or a ``.jar`` file (a usage error naming the entry otherwise: the run would test the release
    unpatched while claiming the patch)."""
    entries: list[str] = []
    for part in [p for p in text.split(os.pathsep) if p]:
        path = Path(part)
        if path.is_dir() or (path.is_file() and path.suffix == ".jar"):
            entries.append(str(path.resolve()))
        elif path.is_file():
            raise UsageError(f"{adapter}: classpath entry {part!r} is neither a directory nor a .jar")
        else:
            raise UsageError(f"{adapter}: classpath entry {part!r} does not exist")
    if not entries:
        raise UsageError(f"{adapter}: classpath= is empty")
    return os.pathsep.join(entries)
