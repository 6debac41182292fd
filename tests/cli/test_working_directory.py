"""An `isrcheck` command leaves nothing of Hypothesis's in the directory it runs in: importing kio
registers Hypothesis strategies, which built Hypothesis's character map under `.hypothesis/` in
the working directory on every command, `--version` included."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("argv", [["--version"], ["run", "--examples", "3", "--steps", "5", "--seed", "1",
                                                  "--workers", "2"]])
def test_a_command_writes_no_hypothesis_directory_where_it_runs(argv: list[str], tmp_path: Path) -> None:
    work, cache = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    done = subprocess.run([sys.executable, "-m", "isrcheck", *argv], cwd=work, capture_output=True, text=True,
                          env={**os.environ, "XDG_CACHE_HOME": str(cache)}, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in work.iterdir()) == []
    if argv == ["--version"]:  # every command module imported, kio's with them: the map went to the cache
        assert (cache / "isrcheck" / "hypothesis" / "unicode_data").is_dir()
