"""summary.json to one self-contained HTML page.

What a person opening the report needs, in the order they need it: how much ran and what broke
(overview), where it broke (target × release × property matrix), which distinct bugs (sortable
signature table), and for each bug the smallest interleaving that shows it, drawn as a sequence
diagram, with the one command that replays it — the shape of the Jepsen, etcd-robustness and
ducktape reports (docs: landscape §3).

Safety: every value taken from a record is escaped with `html.escape`; record data reaches the
script only as JSON in a `<script type="application/json">` block with `<`, `>` and `&` escaped;
a Content-Security-Policy forbids any fetch and runs only the page's own script (by nonce), so
even a missed escape could not run injected code.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from isrcheck.reports import html_charts as charts
from isrcheck.reports.html_assets import CSS, JS
from isrcheck.reports.html_sequence import compact, differing_steps, sequence_svg
from isrcheck.reports.mutant_verdict import verdict

PROPERTY_HELP = {
    "P-ACK": "an acks=all record survives any sequence of clean elections",
    "P-HWV": "every controller-ISR member has LEO >= the leader's high watermark",
    "P-ELIG": "the ISR never holds a fenced, shutting-down, offline or stale-incarnation broker",
    "P-LOG": "replicas with the same (offset, epoch) have identical prefixes",
    "P-HWM": "the high watermark never goes back within a leader epoch",
    "P-1IF": "at most one outstanding ISR proposal per partition",
    "P-LEAD": "at most one broker acts on a (partition, leader epoch)",
    "LeaderInIsr": "the leader is a member of the ISR",
    "P-LIVE": "pending proposals resolve; eligible followers join; lagging ones leave",
    "violation": "violations without a property name",
    "divergence": "the target's result or state differed from the reference's",
    "timeout": "an adapter call passed its timeout",
    "crash": "the target died",
    "error": "isrcheck itself failed (a bug in the suite, not in the target)",
}


def esc(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def render_report(summary: dict[str, Any], title: str = "isrcheck report") -> str:
    """The whole page for `summary` (the layout `plain_summary` and `spark_summary` write)."""
    nonce = secrets.token_urlsafe(18)
    signatures = summary.get("signatures") or []
    sections = [
        _overview(summary),
        _matrix(summary.get("matrix") or {}),
        _signature_table(signatures),
        _counterexamples(signatures),
        _mutants(summary.get("mutants") or []),
        _distributions(summary.get("distributions") or {}),
    ]
    csp = (f"default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-{nonce}'; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
        _header(summary, title),
        '<nav><a href="#overview">Overview</a><a href="#matrix">Matrix</a><a href="#signatures">Signatures</a>'
        '<a href="#counterexamples">Counterexamples</a><a href="#mutants">Mutants</a>'
        '<a href="#distributions">Distributions</a></nav>',
        "<main>", *sections, "</main>",
        f'<footer>Summary format {esc(summary.get("format"))}, made by the {esc(summary.get("engine"))} '
        f'summary at {esc(summary.get("generated_at"))}. The summary itself is embedded in this page as JSON '
        '(<code>#summary-data</code>).</footer>',
        f'<script type="application/json" id="summary-data">{embed_json(summary)}</script>',
        f'<script nonce="{nonce}">{JS}</script>',
        "</body></html>\n",
    ])


def embed_json(value: Any) -> str:
    """JSON safe inside a script element: no `</script>`, no `<!--`, no entity to decode."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _header(summary: dict[str, Any], title: str) -> str:
    totals = summary.get("totals") or {}
    inputs = summary.get("inputs") or {}
    span = ""
    if totals.get("first_started_at"):
        span = f" · runs from {esc(totals['first_started_at'])} to {esc(totals.get('last_started_at'))}"
    return (f'<header class="page"><h1>{esc(title)}</h1><p>{charts.number(inputs.get("files"))} record file(s), '
            f'{charts.number(inputs.get("lines"))} lines{span} · summarized by {esc(summary.get("engine"))} '
            f'at {esc(summary.get("generated_at"))}</p></header>')


def _duration(seconds: float | None) -> str:
    if not seconds:
        return "0 s"
    if seconds < 120:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} m" if hours else f"{minutes} m {rest:02d} s"


def _card(label: str, value: str, tone: str = "", hint: str = "") -> str:
    return (f'<div class="card {tone}" title="{esc(hint)}"><div class="value" data-metric="{esc(label)}">{value}'
            f'</div><div class="label">{esc(label)}</div></div>')


def _overview(summary: dict[str, Any]) -> str:
    totals = summary.get("totals") or {}
    corrupt = summary.get("corrupt") or {}
    findings = totals.get("findings") or 0
    corrupt_lines = corrupt.get("lines") or 0
    cards = [
        _card("runs", charts.number(totals.get("runs"))),
        _card("steps", charts.number(totals.get("steps"))),
        _card("run time", esc(_duration(totals.get("seconds"))), hint="sum of the runs' durations"),
        _card("findings", charts.number(findings), "bad" if findings else ""),
        _card("runs with findings", charts.number(totals.get("runs_with_findings")),
              "bad" if totals.get("runs_with_findings") else ""),
        _card("signatures", charts.number(totals.get("signatures")), "bad" if totals.get("signatures") else "",
              hint="distinct bugs: findings grouped by kind, operation, property or field, and codes"),
        _card("targets", charts.number(totals.get("targets"))),
        _card("releases", charts.number(totals.get("releases"))),
        _card("mutants", charts.number(totals.get("mutants"))),
        _card("corrupt lines", charts.number(corrupt_lines), "warn" if corrupt_lines else "",
              hint="lines skipped: not JSON, truncated, or breaking the isrcheck.run/1 schema"),
    ]
    parts = ['<section id="overview"><h2>Overview</h2>', f'<div class="cards">{"".join(cards)}</div>',
             "<h3>Outcomes</h3>", charts.outcome_bar(summary.get("outcomes") or {})]
    parts.append('<div class="grid2" style="margin-top:16px"><div class="panel"><h3>Findings over runs</h3>'
                 f'{charts.discovery_chart((summary.get("timeline") or {}).get("buckets") or [])}</div>'
                 '<div class="panel"><h3>Steps to first finding, per mutant</h3>'
                 f'{charts.mutant_chart(summary.get("mutants") or [])}</div></div>')
    if corrupt_lines:
        parts.append(_corrupt(corrupt))
    parts.append("</section>")
    return "".join(parts)


def _corrupt(corrupt: dict[str, Any]) -> str:
    reasons = "".join(f'<tr><td class="mono">{esc(r.get("reason"))}</td><td class="num">{charts.number(r.get("lines"))}'
                      "</td></tr>" for r in corrupt.get("reasons") or [])
    examples = "".join(f'<tr><td class="mono">{esc(e.get("file"))}:{esc(e.get("line"))}</td>'
                       f'<td class="mono">{esc(e.get("reason"))}</td></tr>' for e in corrupt.get("examples") or [])
    return (f'<details class="corrupt" open><summary>{charts.number(corrupt.get("lines"))} corrupt line(s) skipped'
            '</summary><div class="grid2"><div><table><thead><tr><th>reason</th><th class="num">lines</th></tr>'
            f'</thead><tbody>{reasons}</tbody></table></div><div><table><thead><tr><th>first skipped lines</th>'
            f"<th>reason</th></tr></thead><tbody>{examples}</tbody></table></div></div></details>")


def _cell_style(count: int, runs: int) -> str:
    share = count / runs if runs else 0.0
    alpha = 0.16 + 0.74 * share ** 0.5
    colour = "#fff" if alpha > 0.55 else "#7a1010"
    return f"background:rgba(201,42,42,{alpha:.2f});color:{colour}"


def _matrix(matrix: dict[str, Any]) -> str:
    columns: list[str] = matrix.get("columns") or []
    rows: list[dict[str, Any]] = matrix.get("rows") or []
    head = "".join(f'<th class="col" title="{esc(PROPERTY_HELP.get(c, c))}">{esc(c)}</th>' for c in columns)
    body = []
    previous = None
    for row in rows:
        runs = row.get("runs") or 0
        cells = row.get("cells") or {}
        first = row.get("target") != previous
        span = sum(1 for r in rows if r.get("target") == row.get("target"))
        target = f'<td class="target" rowspan="{span}">{esc(row.get("target"))}</td>' if first else ""
        previous = row.get("target")
        tds = []
        for column in columns:
            count = cells.get(column, 0)
            if count:
                tds.append(f'<td class="cell hit" style="{_cell_style(count, runs)}" '
                           f'title="{count:,} of {runs:,} runs: {esc(column)}">{count:,}</td>')
            else:
                tds.append(f'<td class="cell zero" title="no run: {esc(column)}">·</td>')
        body.append(f'<tr class="{"first-of-target" if first else ""}">{target}<td>{esc(row.get("release"))}</td>'
                    f'<td class="num">{runs:,}</td><td class="num">{(row.get("runs_with_findings") or 0):,}</td>'
                    f"{''.join(tds)}</tr>")
    if not rows:
        return '<section id="matrix"><h2>Target × release × property</h2><p class="muted">No runs.</p></section>'
    return ('<section id="matrix"><h2>Target × release × property</h2>'
            '<p class="muted">Runs with at least one finding of each property (divergences, timeouts, crashes '
            "and engine errors under their kind). Shade grows with the share of the row's runs.</p>"
            '<div class="scroll"><table class="matrix"><thead><tr><th>target</th><th>release</th>'
            f'<th class="num">runs</th><th class="num">with findings</th>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div></section>')


def _chips(values: Iterable[Any], limit: int = 6) -> str:
    items = list(values)
    shown = "".join(f'<span class="badge">{esc(v)}</span>' for v in items[:limit])
    more = f'<span class="muted" title="{esc(", ".join(map(str, items[limit:])))}">+{len(items) - limit}</span>' \
        if len(items) > limit else ""
    return f'<div class="chips">{shown}{more}</div>'


def _listing(values: Sequence[Any], limit: int = 8) -> str:
    text = ", ".join(map(str, values[:limit])) + (f" +{len(values) - limit}" if len(values) > limit else "")
    return f'<span title="{esc(", ".join(map(str, values)))}">{esc(text)}</span>'


def _when(stamp: Any) -> str:
    """A started_at shown to the second (full value kept for sorting and in the tooltip)."""
    text = str(stamp or "")
    shown = text[:19].replace("T", " ") if len(text) >= 19 and text[10:11] == "T" else text
    return f'<td class="when" data-sort="{esc(text)}" title="{esc(text)}">{esc(shown)}</td>'


def _signature_table(signatures: Sequence[dict[str, Any]]) -> str:
    if not signatures:
        return '<section id="signatures"><h2>Finding signatures</h2><p class="muted">No findings.</p></section>'
    headers = [("#", "number"), ("signature", ""), ("kind", ""), ("findings", "number"), ("runs", "number"),
               ("targets", "number"), ("releases", ""),
               ("mutants", ""), ("first seen", ""), ("last seen", ""), ("shortest", "number")]
    head = "".join(f'<th data-type="{kind or "text"}" class="{"num" if kind else ""}">{esc(name)}</th>'
                   for name, kind in headers)
    rows = []
    for index, sig in enumerate(signatures):
        shortest = sig.get("shortest") or {}
        length = shortest.get("length")
        targets = sig.get("targets") or []
        rows.append(
            f'<tr><td class="num" data-sort="{index + 1}">{index + 1}</td>'
            f'<td><a class="sig-code" href="#sig-{index}">{esc(sig.get("signature"))}</a></td>'
            f'<td><span class="badge {esc(sig.get("kind"))}">{esc(sig.get("kind"))}</span></td>'
            f'<td class="num" data-sort="{int(sig.get("findings") or 0)}">{charts.number(sig.get("findings"))}</td>'
            f'<td class="num" data-sort="{int(sig.get("runs") or 0)}">{charts.number(sig.get("runs"))}</td>'
            f'<td class="num" data-sort="{len(targets)}" title="{esc(", ".join(targets))}">{len(targets)}</td>'
            f'<td>{_listing(sig.get("releases") or [])}</td><td>{_listing(sig.get("mutants") or [])}</td>'
            f'{_when(sig.get("first_seen"))}{_when(sig.get("last_seen"))}'
            f'<td class="num" data-sort="{length if length is not None else 10**9}">'
            f'{esc(length) if length is not None else "—"}</td></tr>')
    return ('<section id="signatures"><h2>Finding signatures</h2>'
            '<p class="muted">One row per distinct bug. Click a column header to sort; click a signature for its '
            'shortest counterexample.</p><div class="scroll"><table class="sortable signatures" id="signature-table">'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div></section>')


def _counterexamples(signatures: Sequence[dict[str, Any]]) -> str:
    if not signatures:
        return ""
    blocks = [_signature_block(index, sig) for index, sig in enumerate(signatures)]
    return ('<section id="counterexamples"><h2>Shortest counterexamples</h2>'
            '<p class="muted">For each signature, the shortest shrunk interleaving found (preferring runs where it '
            "was the first finding, the one a counterexample is shrunk for). The highlighted row is the diverging "
            "step; red arrows mark steps "
            f'whose reference and target results differ.</p>{"".join(blocks)}</section>')


def _signature_block(index: int, sig: dict[str, Any]) -> str:
    shortest = sig.get("shortest")
    where = [f'targets: {esc(", ".join(sig.get("targets") or []))}',
             f'releases: {esc(", ".join(sig.get("releases") or []))}']
    if sig.get("mutants"):
        where.append(f'mutants: {esc(", ".join(sig.get("mutants") or []))}')
    meta = (f'<span class="badge {esc(sig.get("kind"))}">{esc(sig.get("kind"))}</span> '
            f'{charts.number(sig.get("findings"))} finding(s) in {charts.number(sig.get("runs"))} run(s) · '
            + " · ".join(where))
    parts = [f'<article class="signature" id="sig-{index}"><h3 class="sig-code">{esc(sig.get("signature"))}</h3>',
             f'<div class="meta">{meta}</div>']
    if not isinstance(shortest, dict):
        parts.append('<p class="muted">No counterexample recorded: no run with this finding was shrunk.</p></article>')
        return "".join(parts)
    finding: dict[str, Any] = shortest["finding"] if isinstance(shortest.get("finding"), dict) else {}
    counterexample: dict[str, Any] = (shortest["counterexample"] if isinstance(shortest.get("counterexample"), dict)
                                      else {})
    parts.append(f'<div class="message">{esc(finding.get("message"))}</div>')
    if shortest.get("first_finding") is False:
        parts.append(f'<p class="note">This signature was found at step {esc(finding.get("step"))} of a run whose '
                     f'counterexample was shrunk for its first finding, <span class="mono">'
                     f'{esc(shortest.get("run_first_signature"))}</span>; no run had it first.</p>')
    parts.append(f'<div class="meta">run <span class="mono">{esc(shortest.get("run_id"))}</span> · target '
                 f'{esc(shortest.get("target"))} · release {esc(shortest.get("release"))} · seed '
                 f'{esc(shortest.get("seed"))} · started {esc(shortest.get("started_at"))} · '
                 f'{esc(counterexample.get("length"))} step(s), diverging at step '
                 f'{esc(counterexample.get("diverging_step"))}</div>')
    label = f"sequence diagram of the shortest counterexample for signature {index + 1}"
    parts.append(f'<div class="diagram">{sequence_svg(counterexample, label, f"sig{index}")}</div>')
    diffs = differing_steps(counterexample)
    if diffs:
        rows = "".join(f'<tr><td class="num">{esc(step.get("index"))}</td><td>{esc(step.get("op"))}</td>'
                       f'<td>{esc(compact(step.get("reference"), 300))}</td>'
                       f'<td>{esc(compact(step.get("target"), 300))}</td></tr>' for step in diffs)
        parts.append('<table class="diffs" style="margin-top:8px"><thead><tr><th class="num">step</th><th>op</th>'
                     f"<th>reference</th><th>target</th></tr></thead><tbody>{rows}</tbody></table>")
    replay = shortest.get("replay")
    if replay:
        parts.append(f'<div class="replay"><code id="replay-{index}">{esc(replay)}</code>'
                     f'<button type="button" class="copy" data-target="replay-{index}">Copy</button></div>')
    else:
        parts.append('<p class="muted">No replay command recorded for this run.</p>')
    evidence = finding.get("evidence")
    parts.append(f'<details><summary>Evidence and the full counterexample</summary>'
                 f'<pre class="json">{esc(json.dumps(evidence, indent=2, ensure_ascii=False))}</pre>'
                 f'<pre class="json">{esc(json.dumps(counterexample, indent=2, ensure_ascii=False))}</pre></details>')
    parts.append("</article>")
    return "".join(parts)


def _mutants(mutants: Sequence[dict[str, Any]]) -> str:
    if not mutants:
        return '<section id="mutants"><h2>Mutants</h2><p class="muted">No mutant runs.</p></section>'
    head = "".join(f'<th data-type="{kind or "text"}" class="{"num" if kind else ""}">{name}</th>' for name, kind in (
        ("mutant", ""), ("runs", "number"), ("runs with findings", "number"), ("result", ""),
        ("runs to first finding", "number"), ("steps to first finding", "number"), ("first finding at", ""),
        ("signatures", "")))
    rows = []
    for mutant in mutants:
        result = verdict(mutant)
        steps = mutant.get("steps_to_first_finding")
        first_run = mutant.get("runs_to_first_finding")
        control = ' <span class="badge control">negative control</span>' if result.negative_control else ""
        rows.append(
            f'<tr><td class="mono">{esc(mutant.get("mutant"))}{control}</td>'
            f'<td class="num" data-sort="{mutant.get("runs") or 0}">{charts.number(mutant.get("runs"))}</td>'
            f'<td class="num" data-sort="{mutant.get("runs_with_findings") or 0}">'
            f'{charts.number(mutant.get("runs_with_findings"))}</td>'
            f'<td><span class="badge {"yes" if result.passed else "no"}">{esc(result.label)}'
            f'</span></td><td class="num" data-sort="{first_run or 10**12}">{charts.number(first_run)}</td>'
            f'<td class="num" data-sort="{steps or 10**12}">{charts.number(steps)}</td>'
            f'{_when(mutant.get("first_finding_at"))}'
            f'<td>{_chips(mutant.get("signatures") or [], 3)}</td></tr>')
    return ('<section id="mutants"><h2>Mutants</h2><p class="muted">A mutant is detected by any finding other than an '
            'engine error. A negative control is a variation Kafka allows: it passes when nothing flags it, and a '
            'finding on it is a false positive. Steps to first finding add up the steps of its earlier runs (in '
            'started_at order) and the step of the first finding.</p>'
            f'<div class="scroll"><table class="sortable mutants"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div></section>')


def _distributions(distributions: dict[str, Any]) -> str:
    return ('<section id="distributions"><h2>Distributions</h2><div class="grid2">'
            f'<div class="panel"><h3>Steps per run</h3>{charts.histogram_chart(distributions.get("steps"), "steps")}'
            '</div><div class="panel"><h3>Duration per run</h3>'
            f'{charts.histogram_chart(distributions.get("duration_s"), "seconds")}</div></div></section>')
