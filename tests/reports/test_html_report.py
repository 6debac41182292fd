"""The HTML report as text: sections present, numbers right, record content escaped, nothing fetched."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from isrcheck.reports.html_charts import mutant_chart
from isrcheck.reports.html_report import PROPERTY_HELP, embed_json, render_report
from isrcheck.reports.html_sequence import actor_order, sequence_svg, short_result
from isrcheck.reports.plain_summary import summarize_files
from isrcheck.reports.records_io import find_record_files
from report_fixtures import ELIG, EXPECTED, SHRUNK_MESSAGE, XSS, counterexample, failing, finding, make_record


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


def test_matrix_shows_where_properties_broke_and_where_they_held(page: str, summary: dict[str, Any]) -> None:
    assert '<table class="matrix">' in page
    assert page.count('class="cell hit"') == sum(len(r["cells"]) for r in summary["matrix"]["rows"])
    # checked and never broken in that row: the 6 reference passes on 4.1 check P-ELIG, P-LEAD and
    # LeaderInIsr; the B02 rows check them too but broke P-ELIG (and P-ACK on 4.1)
    held = page.count('class="cell held"')
    assert held == 3 + 2 + 2
    legend = page[page.index('class="legend-table"'):]
    assert 'data-property="P-LEAD"' in legend and PROPERTY_HELP["P-LEAD"] in legend
    p_lead = legend[legend.index('data-property="P-LEAD"'):]
    assert p_lead[: p_lead.index("</tr>")].count('<span class="badge yes">held</span>') == 1


def test_one_row_per_bug_with_its_signatures_folded_under_it(page: str) -> None:
    assert page.count("data-bug-id=") == EXPECTED["bugs"]
    row = page[page.index('data-bug-id="mutant:B02"'):]
    row = row[: row.index("</tr>")]
    assert "B02: controller accepts a fenced broker" in row and "KAFKA-13916 / KIP-841" in row
    assert "violation:alter_partition:P-ELIG:" in row and "violation:alter_partition:P-ACK:" in row
    assert "2 signature(s)" in row
    # new findings are listed before planted mutants, and isrcheck's own errors apart at the end
    assert page.index("New findings") < page.index("Planted mutants found") < page.index("isrcheck errors")


def test_mutants_found_counts_mutant_campaigns_as_the_pipeline_does(page: str) -> None:
    # B02 detected; N1 is a negative control and counts apart
    assert 'data-metric="mutants found">1/1<' in page


def test_the_header_says_which_isrcheck_ran_and_with_which_seeds(page: str) -> None:
    header = page[page.index('<header class="page">'):page.index("</header>")]
    assert 'data-field="version">0.1.0<' in header
    assert "abc123, def456" in header
    assert 'data-field="seeds">1000–1021<' in header


def test_the_message_beside_a_diagram_is_the_counterexamples_own(page: str) -> None:
    article = page[page.index('data-for-bug="mutant:B02"'):]
    article = article[: article.index("</article>")]
    assert SHRUNK_MESSAGE in article and "unshrunk run" not in article


def test_allowed_differences_are_grey_and_not_divergences() -> None:
    steps = [
        {"index": 1, "op": "register_broker", "args": {"broker": 1}, "src": "broker 1", "dst": "controller",
         "reference": {"error": "NONE", "broker_epoch": 1}, "target": {"error": "NONE", "broker_epoch": 2607}},
        {"index": 2, "op": "alter_partition", "args": {"broker": 1}, "src": "broker 1", "dst": "controller",
         "reference": {"error": "INELIGIBLE_REPLICA"}, "target": {"error": "NONE"}},
        {"index": 3, "op": "register_broker", "args": {"broker": 2}, "src": "broker 2", "dst": "controller",
         "reference": {"error": "REQUEST_TIMED_OUT", "broker_epoch": -1},
         "target": {"error": "REQUEST_TIMED_OUT", "broker_epoch": -1}},
    ]
    svg = sequence_svg({"length": 3, "diverging_step": 2, "steps": steps}, "test", "t")
    assert 'class="step allowed" data-step="1"' in svg and "broker_epoch may differ" in svg
    assert 'class="step diverging differs" data-step="2"' in svg
    assert 'class="step expected" data-step="3"' in svg and "no answer within the step" in svg
    assert svg.count("url(#t-hot)") == 1  # only the real divergence is drawn red
    record = failing(1, [finding("divergence", "alter_partition", field="error", codes=("INELIGIBLE_REPLICA", "NONE"),
                                 step=2)], {"length": 3, "diverging_step": 2, "steps": steps})
    page = render_report(summary_of([record]))
    table = page[page.index('<table class="diffs">'):]
    table = table[: table.index("</table>")]
    assert table.count('<tr class="allowed">') == 1 and table.count('<tr class="divergent">') == 1
    assert "implementation-defined" in table


def test_a_wide_cluster_diagram_fits_its_box() -> None:
    actors = ["admin", "controller", "broker 1", "broker 2", "broker 3", "broker 4", "network", "clock", "nemesis"]
    steps = [{"index": i + 1, "op": "tick", "args": {}, "src": actor, "dst": "controller", "reference": {},
              "target": {}} for i, actor in enumerate(actors)]
    svg = sequence_svg({"length": len(steps), "diverging_step": 9, "steps": steps}, "test", "t")
    width = int(svg.split('width="', 1)[1].split('"', 1)[0])
    assert width <= 1100 and "max-width:100%" in svg


def summary_of(records: list[dict[str, Any]]) -> dict[str, Any]:
    from tempfile import TemporaryDirectory

    with TemporaryDirectory() as directory:
        path = Path(directory) / "runs.jsonl"
        path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
        return summarize_files([path])


def test_each_counterexample_is_a_sequence_diagram(page: str, summary: dict[str, Any]) -> None:
    # one per bug that has one: mutant:B02, the wire divergence and the P-ACK violation
    with_counterexample = [b for b in summary["bugs"] if b["shortest"]]
    assert page.count('<svg class="sequence"') == len(with_counterexample) == 3
    assert page.count('class="diverging-row"') == 3
    assert page.count('<button type="button" class="copy"') == 3
    # the two whose records carry no counterexample findings say that their message may be the unshrunk run's
    assert page.count("This record predates counterexample findings") == 2
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
    return {row.split('<td class="mono" data-sort="')[1].split('"')[0]: row for row in rows}


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


def test_cluster_level_results_are_not_drawn_as_divergences() -> None:
    """A cluster-level run compares no results (each side answers on its own timing): a step
    where the two answers differ is shown as the two answers, not as a red divergence."""
    steps = [{"index": 1, "op": "produce", "args": {"topic": "t0"}, "src": "producer", "dst": "leader",
              "reference": {"error": "NONE", "offset": 0}, "target": {"error": "NONE", "offset": 3}},
             {"index": 2, "op": "tick", "args": {"ms": 100}, "src": "clock", "dst": "cluster",
              "reference": {"now_ms": 100}, "target": {"now_ms": 100}}]
    counterexample = {"length": 2, "diverging_step": 2, "steps": steps}
    svg = sequence_svg(counterexample, "test", "t", compared=False)
    assert 'class="step uncompared" data-step="1"' in svg and "url(#t-hot)" in svg.split('data-step="2"')[1]
    assert "url(#t-hot)" not in svg.split('data-step="2"')[0].split('data-step="1"')[1]
    record = failing(1, [finding("violation", "tick", "P-LIVE", step=2)], counterexample, level="cluster",
                     differential=False)
    page = render_report(summary_of([record]))
    assert '<table class="diffs">' not in page and "compared no results with the reference" in page
    compared = render_report(summary_of([{**record, "level": "controller", "differential": True}]))
    assert '<table class="diffs">' in compared
