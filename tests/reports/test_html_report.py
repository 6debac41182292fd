"""The HTML report as text: sections present, numbers right, record content escaped, nothing fetched."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from isrcheck.reports.html_charts import mutant_chart
from isrcheck.reports.html_report import embed_json, render_report
from isrcheck.reports.html_sequence import actor_order, sequence_svg, short_result
from isrcheck.reports.plain_summary import summarize_files
from isrcheck.reports.records_io import find_record_files
from report_fixtures import ELIG, EXPECTED, XSS, counterexample, failing, finding, make_record


@pytest.fixture
def summary(records_dir: Path) -> dict[str, Any]:
    return summarize_files(find_record_files([records_dir]))


@pytest.fixture
def page(summary: dict[str, Any]) -> str:
    return render_report(summary, title="fixture <report>")


def test_overview_numbers(page: str) -> None:
    for label, key in (("runs", "runs"), ("findings", "findings"), ("signatures", "signatures"),
                       ("corrupt lines", "corrupt_lines"), ("targets", "targets"), ("releases", "releases")):
        assert f'data-metric="{label}">{EXPECTED[key]}<' in page, label
    assert "<title>fixture &lt;report&gt;</title>" in page


def test_matrix_and_signature_table(page: str, summary: dict[str, Any]) -> None:
    assert '<table class="matrix">' in page
    assert page.count('class="cell hit"') == sum(len(r["cells"]) for r in summary["matrix"]["rows"])
    table = page[page.index('id="signature-table"'):]
    table = table[: table.index("</table>")]
    assert table.count("<tr>") == 1 + EXPECTED["signatures"]
    assert 'data-type="number"' in table


def test_each_counterexample_is_a_sequence_diagram(page: str, summary: dict[str, Any]) -> None:
    with_counterexample = [s for s in summary["signatures"] if s["shortest"]]
    assert page.count('<svg class="sequence"') == len(with_counterexample) == 4
    assert page.count('class="diverging-row"') == 4
    assert page.count('<button type="button" class="copy"') == 4
    assert page.count('class="note"') == 1  # the one shown with another finding's counterexample
    assert "isrcheck run --adapter kafka-wire --kafka 3.7 --seed 1010 --examples 1" in page


def test_record_content_is_escaped_everywhere(page: str) -> None:
    assert XSS not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(3)&gt;" in page
    assert "<b>bold</b>" not in page and "ref+&lt;b&gt;bold&lt;/b&gt;" in page
    assert page.count("<script") == 2  # the JSON data block and the page's own script
    data = page[page.index('id="summary-data">') + len('id="summary-data">'):]
    data = data[: data.index("</script>")]
    assert "<" not in data and json.loads(data)["totals"]["runs"] == EXPECTED["runs"]


def test_the_page_fetches_nothing(page: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "@import" not in page and "url(http" not in page
    assert "default-src 'none'" in page


def test_embed_json_cannot_close_its_script() -> None:
    text = embed_json({"a": "</script><!-- & -->"})
    assert "</" not in text and "<!--" not in text
    assert json.loads(text) == {"a": "</script><!-- & -->"}


def test_sequence_diagram_lanes_and_highlight() -> None:
    steps = [
        {"index": 1, "op": "register_broker", "args": {"broker": 2}, "src": "broker 2", "dst": "controller",
         "reference": {"error": "NONE"}, "target": {"error": "NONE"}},
        {"index": 2, "op": "advance_clock", "args": {"ms": 9000}, "src": "clock", "dst": "controller",
         "reference": None, "target": None},
        {"index": 3, "op": "crash", "args": {}, "src": "broker 10", "dst": "broker 10",
         "reference": {"error": "NONE"}, "target": {"error": "NONE"}},
        {"index": 4, "op": "alter_partition", "args": {"isr": [1, 2]}, "src": "broker 1", "dst": "controller",
         "reference": {"error": "INELIGIBLE_REPLICA"}, "target": {"error": "NONE", "isr": [1, 2]}},
    ]
    assert actor_order(steps) == ["controller", "broker 1", "broker 2", "broker 10", "clock"]
    svg = sequence_svg({"length": 4, "diverging_step": 4, "steps": steps}, "test", "t")
    assert svg.count('class="lifeline"') == 5
    assert svg.count("<g class=\"step") == 4
    assert 'class="step diverging differs" data-step="4"' in svg
    assert "ref INELIGIBLE_REPLICA ≠ target NONE" in svg
    assert short_result({"error": "NONE", "isr": [1, 2]}) == 'NONE {"isr":[1,2]}'


def test_a_summary_with_nothing_in_it_renders() -> None:
    page = render_report({"format": "isrcheck.summary/1"})
    assert "No runs." in page and "No findings." in page


def mutant_rows(page: str) -> dict[str, str]:
    """Mutant id → its row in the Mutants table."""
    table = page[page.index('<table class="sortable mutants">'):]
    table = table[: table.index("</table>")]
    rows = table.split("<tr>")[2:]
    return {row.split('<td class="mono">')[1].split("<")[0].strip(): row for row in rows}


def test_negative_controls_pass_when_not_flagged_and_fail_when_flagged(tmp_path: Path) -> None:
    """B02 detected and B01 missed are the ordinary cases; for the negative controls the colours
    turn round: N3 unflagged is a pass, N1 flagged is a false positive of the properties."""
    records = [
        failing(1, [finding(*ELIG, step=4)], counterexample(4), target="reference+B02", mutant="B02"),
        make_record(2, target="reference+B01", mutant="B01"),
        failing(3, [finding(*ELIG, step=2)], counterexample(2), target="reference+N1", mutant="N1",
                negative_control=True),
        make_record(4, target="reference+N3", mutant="N3", level="cluster", negative_control=True),
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    summary = summarize_files([path])
    page = render_report(summary)
    rows = mutant_rows(page)
    assert '<span class="badge yes">detected</span>' in rows["B02"]
    assert '<span class="badge no">not detected</span>' in rows["B01"]
    assert '<span class="badge no">false positive</span>' in rows["N1"]
    assert '<span class="badge yes">passed: not flagged</span>' in rows["N3"]
    assert "negative control" in rows["N1"] and "negative control" in rows["N3"]
    assert "negative control" not in rows["B01"] + rows["B02"]
    chart = mutant_chart(summary["mutants"])
    assert chart.count('class="bar-false-positive"') == 1 and "false positive after 2 steps" in chart
    assert '<text class="bar-value passed"' in chart and "passed: not flagged in 1 runs" in chart
    assert chart.count('class="bar-value undetected"') == 1  # B01 only
    assert chart.count('class="bar-detected"') == 1  # B02 only


def test_a_summary_without_the_negative_control_field_shows_an_ordinary_mutant() -> None:
    """The report reads what the records said, never the catalogue: an entry without
    `negative_control` is an ordinary mutant (a plug-in's own mutant, or an older summary)."""
    mutants = [{"mutant": "N2", "runs": 5, "runs_with_findings": 0, "detected": False, "signatures": []},
               {"mutant": "D1", "runs": 5, "runs_with_findings": 0, "detected": False, "signatures": []}]
    rows = mutant_rows(render_report({"format": "isrcheck.summary/1", "mutants": mutants}))
    assert '<span class="badge no">not detected</span>' in rows["N2"]
    assert '<span class="badge no">not detected</span>' in rows["D1"]
