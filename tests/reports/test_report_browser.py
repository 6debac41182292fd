"""The report in a real browser: headless Chromium loads it offline, runs its script, draws it.

`--dump-dom` gives the DOM after the page's script ran (so the sortable tables and the test hook
on <html> are there); `--screenshot` proves it renders. Skips when /usr/bin/chromium is absent
(Debian package `chromium`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from isrcheck.reports.html_report import render_report
from isrcheck.reports.plain_summary import summarize_files
from isrcheck.reports.records_io import find_record_files
from report_fixtures import EXPECTED

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (Debian package chromium)")


def chromium(tmp_path: Path, *args: str) -> str:
    profile = tmp_path / "profile"
    result = subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, shared_records: Path) -> Path:
    path = tmp_path_factory.mktemp("browser") / "report.html"
    path.write_text(render_report(summarize_files(find_record_files([shared_records]))), encoding="utf-8")
    return path


def test_dom_after_the_script_ran(report: Path, tmp_path: Path) -> None:
    dom = chromium(tmp_path, "--virtual-time-budget=3000", "--dump-dom", report.as_uri())
    assert 'data-ready="yes"' in dom  # the page's own script ran (its nonce matched the policy)
    assert 'data-scripts="2"' in dom  # and no other script element exists
    assert f'data-metric="runs">{EXPECTED["runs"]}<' in dom
    assert f'data-metric="corrupt lines">{EXPECTED["corrupt_lines"]}<' in dom
    assert '<table class="matrix">' in dom
    table = dom[dom.index('id="signature-table"'):]
    assert table[: table.index("</table>")].count("<tr>") == 1 + EXPECTED["signatures"]
    assert 'tabindex="0"' in table  # headers were made sortable
    assert dom.count('<svg class="sequence"') == 4
    assert 'class="diverging-row"' in dom and 'class="step diverging differs"' in dom
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert "<script>alert(1)</script>" not in dom


def test_screenshot(report: Path, tmp_path: Path) -> None:
    png = tmp_path / "report.png"
    chromium(tmp_path, f"--screenshot={png}", "--window-size=1400,2000", report.as_uri())
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000
