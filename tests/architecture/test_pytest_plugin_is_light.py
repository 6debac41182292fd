"""The `pytest11` entry point is loaded into every pytest session of an environment where isrcheck
is installed: it must not drag isrcheck's engine, adapters or Hypothesis in with it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = '''
import sys

def test_modules_loaded_by_the_plugin():
    loaded = sorted(m for m in sys.modules if m.startswith("isrcheck"))
    assert "isrcheck.pytest_plugin" in loaded, loaded
    assert loaded == ["isrcheck", "isrcheck.pytest_plugin"], loaded
'''


def test_the_plugin_imports_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "test_probe.py").write_text(PROBE, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                             "-p", "no:randomly", str(tmp_path / "test_probe.py")],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout[-2000:]
