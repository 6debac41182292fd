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


@pytest.mark.parametrize("width", [1400, 900])
def test_no_section_overflows_and_the_key_elements_are_there(report: Path, tmp_path: Path, width: int) -> None:
    """At a desktop and a narrow width: every section fits its box (tables wrap, diagrams scale,
    the matrix scrolls inside its own box), one row per bug, the header says what ran."""
    dom = chromium(tmp_path, f"--window-size={width},2000", "--virtual-time-budget=3000", "--dump-dom",
                   report.as_uri())
    assert 'data-ready="yes"' in dom
    assert 'data-overflow="none"' in dom
    assert dom.count("data-bug-id=") == EXPECTED["bugs"]
    for section in ("overview", "ran", "bugs", "counterexamples", "matrix", "coverage", "mutants"):
        assert f'<section id="{section}">' in dom, section
    assert 'class="legend-table"' in dom and 'class="cov-chip miss"' in dom
    assert 'data-field="version">0.1.0<' in dom


def test_the_overflow_check_sees_an_overflowing_section(tmp_path: Path) -> None:
    """The page's own overflow probe, on a page built to break it: a section holding a 3000 px block."""
    page = render_report({"format": "isrcheck.summary/1"}).replace(
        '<section id="distributions">', '<section id="distributions"><div style="width:3000px">wide</div>')
    path = tmp_path / "wide.html"
    path.write_text(page, encoding="utf-8")
    dom = chromium(tmp_path, "--window-size=1400,2000", "--virtual-time-budget=3000", "--dump-dom", path.as_uri())
    assert 'data-overflow="distributions page"' in dom


def test_dom_after_the_script_ran(report: Path, tmp_path: Path) -> None:
    dom = chromium(tmp_path, "--virtual-time-budget=3000", "--dump-dom", report.as_uri())
    assert 'data-ready="yes"' in dom  # the page's own script ran (its nonce matched the policy)
    assert 'data-scripts="2"' in dom  # and no other script element exists
    assert f'data-metric="runs">{EXPECTED["runs"]}<' in dom
    assert f'data-metric="corrupt lines">{EXPECTED["corrupt_lines"]}<' in dom
    assert '<table class="matrix">' in dom
    table = dom[dom.index('<table class="sortable bugs">'):]
    assert 'tabindex="0"' in table[: table.index("</table>")]  # headers were made sortable
    assert dom.count('<svg class="sequence"') == 3
    assert 'class="diverging-row"' in dom and 'class="step diverging differs"' in dom
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert "<script>alert(1)</script>" not in dom


def test_screenshot(report: Path, tmp_path: Path) -> None:
    png = tmp_path / "report.png"
    chromium(tmp_path, f"--screenshot={png}", "--window-size=1400,2000", report.as_uri())
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000
