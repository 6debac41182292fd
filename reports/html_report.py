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

from isrcheck.contract.operations.coverage import FAULTS, PROTOCOL_OUTCOMES, STATES
from isrcheck.contract.operations.implementation_defined import IMPLEMENTATION_DEFINED
from isrcheck.reports import html_charts as charts
from isrcheck.reports.html_assets import CSS, JS
from isrcheck.reports.html_sequence import allowed_only, compact, differing_steps, sequence_svg
from isrcheck.reports.mutant_verdict import verdict

PROPERTY_HELP = {
    "P-ACK": "an acks=all record survives any sequence of clean elections",
    "P-HWV": "every controller-ISR member has LEO >= the leader's high watermark",
    "P-ELIG": "the ISR never holds a fenced, shutting-down, offline or stale-incarnation broker",
    "P-LOG": "replicas with the same (offset, epoch) have identical prefixes",
    "P-HWM": "the high watermark never goes back within a leader epoch",
    "P-1IF": "at most one outstanding ISR proposal per partition",
    "P-LEAD": "a leader acts only on the epoch and the ISR the controller gave it",
    "LeaderInIsr": "the leader is a member of the ISR",
    "P-LIVE": "pending proposals resolve; eligible followers join; lagging ones leave",
    "P-HWC": "the high watermark a consumer sees never goes backwards",
    "P-FENCE": "a broker down past the session timeout is fenced",
    "P-ADM": "acks=all is refused with NOT_ENOUGH_REPLICAS exactly when the leader's ISR is below the min ISR",
    "P-SHRINK": "a leader proposes to drop an out-of-sync ISR follower within one isr-expiration period",
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
    bugs = summary.get("bugs")
    sections = [
        _overview(summary),
        _ran(summary.get("ran") or []),
        *([_bug_table(bugs), _bug_counterexamples(bugs)] if isinstance(bugs, list)
          # a summary written before findings were grouped by root cause: one row per signature
          else [_signature_table(signatures), _counterexamples(signatures)]),
        _matrix(summary.get("matrix") or {}, summary.get("properties") or []),
        _coverage(summary.get("coverage") or []),
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
        '<nav><a href="#overview">Overview</a><a href="#ran">What ran</a><a href="#bugs">Bugs</a>'
        '<a href="#counterexamples">Counterexamples</a><a href="#matrix">Properties</a>'
        '<a href="#coverage">Coverage</a><a href="#mutants">Mutants</a>'
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
    ran = summary.get("ran") or []
    span = ""
    if totals.get("first_started_at"):
        span = f" · runs from {esc(totals['first_started_at'])} to {esc(totals.get('last_started_at'))}"
    versions = sorted({v for entry in ran for v in entry.get("versions") or []})
    commits = sorted({c for entry in ran for c in entry.get("commits") or []})
    seeds = [entry[key] for entry in ran for key in ("seed_min", "seed_max") if entry.get(key) is not None]
    provenance = [
        f'isrcheck <span class="mono" data-field="version">{esc(", ".join(versions) or "version not recorded")}</span>',
        f'commit <span class="mono" data-field="commit" title="{esc(", ".join(commits))}">'
        f'{esc(", ".join(c[:12] + ("+dirty" if c.endswith("+dirty") else "") for c in commits) or "not recorded")}'
        "</span>",
        f'seeds <span class="mono" data-field="seeds">{esc(f"{min(seeds)}–{max(seeds)}" if seeds else "—")}</span>',
    ]
    return (f'<header class="page"><h1>{esc(title)}</h1><p class="provenance">{" · ".join(provenance)}</p>'
            f'<p>{charts.number(inputs.get("files"))} record file(s), '
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
    bugs = summary.get("bugs") or []
    unexpected = sum(1 for bug in bugs if bug.get("kind") in UNEXPECTED)
    # per mutant and target, as `isrcheck pipeline` counts its campaigns: B02 in process and over the wire are two
    campaigns = [m for m in summary.get("mutants") or [] if not m.get("negative_control")]
    detected = sum(1 for m in campaigns if m.get("detected"))
    cards = [
        _card("new bugs", charts.number(unexpected), "bad" if unexpected else "",
              hint="distinct root causes found without a planted mutant (divergences, violations, timeouts, crashes)"),
        _card("known divergences", charts.number(sum(1 for bug in bugs if bug.get("kind") == "known")),
              hint="Kafka's triaged behaviour (docs/known-divergences.md): a divergence from the reference, or a "
                   "Kafka bug the reference reproduces, each matched by its rule: not a finding"),
        _card("mutants found", f"{detected:,}/{len(campaigns):,}",
              hint="mutant campaigns (mutant × target, negative controls apart) in which a finding caught the bug"),
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
        _card("mutant ids", charts.number(totals.get("mutants")),
              hint="distinct catalogue ids run, negative controls included"),
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


def _matrix(matrix: dict[str, Any], properties: Sequence[dict[str, Any]]) -> str:
    columns: list[str] = matrix.get("columns") or []
    rows: list[dict[str, Any]] = matrix.get("rows") or []
    head = "".join(f'<th class="col" title="{esc(PROPERTY_HELP.get(c, c))}">{esc(c)}</th>' for c in columns)
    body = []
    previous = None
    for row in rows:
        runs = row.get("runs") or 0
        cells = row.get("cells") or {}
        checked = row.get("checked") or {}
        first = row.get("target") != previous
        span = sum(1 for r in rows if r.get("target") == row.get("target"))
        target = f'<td class="target" rowspan="{span}">{esc(row.get("target"))}</td>' if first else ""
        previous = row.get("target")
        tds = []
        for column in columns:
            count = cells.get(column, 0)
            held = checked.get(column, 0)
            if count:
                tds.append(f'<td class="cell hit" style="{_cell_style(count, runs)}" '
                           f'title="broken in {count:,} of {runs:,} runs: {esc(column)}">{count:,}</td>')
            elif held:
                tds.append(f'<td class="cell held" title="checked and held in {held:,} runs: {esc(column)}">'
                           "✓</td>")
            else:
                tds.append(f'<td class="cell zero" title="not checked or not found in these runs: {esc(column)}">'
                           "·</td>")
        body.append(f'<tr class="{"first-of-target" if first else ""}">{target}<td>{esc(row.get("release"))}</td>'
                    f'<td class="num">{runs:,}</td><td class="num">{(row.get("runs_with_findings") or 0):,}</td>'
                    f"{''.join(tds)}</tr>")
    if not rows:
        return '<section id="matrix"><h2>Properties</h2><p class="muted">No runs.</p></section>'
    return ('<section id="matrix"><h2>Properties: where they broke and where they held</h2>'
            '<p class="muted">Per target and release: a red cell counts the runs with a finding of that property '
            "(divergences, timeouts, crashes and engine errors under their kind), its shade the share of the row's "
            "runs; ✓ the property was judged in those runs and never broke; · not judged there (not checked, or "
            "unknown: the runs' histories could not judge it — see the legend).</p>"
            '<div class="scroll"><table class="matrix"><thead><tr><th>target</th><th>release</th>'
            f'<th class="num">runs</th><th class="num">with findings</th>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>{_property_legend(properties)}</section>')


def _property_legend(properties: Sequence[dict[str, Any]]) -> str:
    """Every property the runs checked or a finding named: what it means, how often it held."""
    if not properties:
        return ""
    rows = []
    for entry in properties:
        name = str(entry.get("property"))
        checked, violated = int(entry.get("runs_checked") or 0), int(entry.get("runs_violated") or 0)
        unknown = int(entry.get("runs_unknown") or 0)
        if violated:
            status = f'<span class="badge no">broken in {violated:,} run(s)</span>'
        elif checked:
            status = '<span class="badge yes">held</span>'
        elif unknown:
            status = '<span class="badge warn">unknown</span>'
        else:
            status = '<span class="badge">not checked</span>'
        if unknown and (violated or checked):
            status += f' <span class="badge warn">unknown in {unknown:,} run(s)</span>'
        rows.append(f'<tr data-property="{esc(name)}"><td class="mono">{esc(name)}</td>'
                    f'<td>{esc(PROPERTY_HELP.get(name, "(no description in this report)"))}</td>'
                    f'<td class="num">{checked:,}</td><td class="num">{unknown:,}</td><td>{status}</td></tr>')
    return ('<h3 style="margin-top:14px">Property legend</h3><table class="legend-table"><thead><tr><th>property</th>'
            '<th>what it means</th><th class="num">runs that judged it</th>'
            '<th class="num" title="runs whose history could not judge it (the record\'s unknown): never a pass">'
            'runs it was unknown</th><th>result</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


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
    parts.append(_counterexample_body(f"sig{index}", f"signature {index + 1}", shortest))
    parts.append("</article>")
    return "".join(parts)


def _mutants(mutants: Sequence[dict[str, Any]]) -> str:
    if not mutants:
        return '<section id="mutants"><h2>Mutants</h2><p class="muted">No mutant runs.</p></section>'
    head = "".join(f'<th data-type="{kind or "text"}" class="{"num" if kind else ""}">{name}</th>' for name, kind in (
        ("mutant", ""), ("what it reintroduces", ""), ("runs", "number"), ("result", ""),
        ("runs to first finding", "number"), ("steps to first finding", "number"), ("signatures", "")))
    rows = []
    for mutant in mutants:
        result = verdict(mutant)
        steps = mutant.get("steps_to_first_finding")
        first_run = mutant.get("runs_to_first_finding")
        control = ' <span class="badge control">negative control</span>' if result.negative_control else ""
        ticket = f'<br><span class="badge ticket">{esc(mutant.get("ticket"))}</span>' if mutant.get("ticket") else ""
        signatures = mutant.get("signatures") or []
        folded = (f'<details class="sigs"><summary>{len(signatures)}</summary><ul>'
                  + "".join(f'<li class="sig-code">{esc(sig)}</li>' for sig in signatures) + "</ul></details>"
                  if signatures else '<span class="muted">—</span>')
        rows.append(
            f'<tr><td class="mono" data-sort="{esc(charts.mutant_label(mutant))}">{esc(mutant.get("mutant"))}{control}'
            f'<br><span class="muted small">{esc(mutant.get("target"))}</span></td>'
            f'<td>{esc(mutant.get("title") or "—")}{ticket}</td>'
            f'<td class="num" data-sort="{mutant.get("runs") or 0}">{charts.number(mutant.get("runs"))}<br>'
            f'<span class="muted small">{charts.number(mutant.get("runs_with_findings"))} found</span></td>'
            f'<td><span class="badge {"yes" if result.passed else "no"}">{esc(result.label)}</span></td>'
            f'<td class="num" data-sort="{first_run or 10**12}">{charts.number(first_run)}</td>'
            f'<td class="num" data-sort="{steps or 10**12}">{charts.number(steps)}</td>'
            f'<td data-sort="{len(signatures)}">{folded}</td></tr>')
    return ('<section id="mutants"><h2>Mutants</h2><p class="muted">Each mutant reintroduces one historical Kafka bug '
            "(its ticket beside it; docs/protocol/bugs.md tells the story) into the reference; the same mutant may "
            "run in process and served over the wire (one row each). A mutant is detected by any finding other than "
            "an engine error. A negative control is a variation Kafka allows: it passes when nothing flags it, and a "
            "finding on it is a false positive. Steps to first finding add up the steps of its earlier runs (in "
            "started_at order) and the step of the first finding.</p>"
            f'<table class="sortable mutants"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></section>')


UNEXPECTED = ("new", "timeout", "crash")
BUG_GROUPS = (
    (UNEXPECTED, "New findings", "Found without a planted mutant: divergences from the reference, property "
     "violations, timeouts and crashes of the target. Each is a candidate bug of the implementation under test."),
    (("known",), "Known divergences", "Where real Kafka differs from the reference for a reason triaged as "
     "Kafka's own, or where the reference breaks a property as real Kafka does (a known Kafka bug; "
     "docs/known-divergences.md), matched by the rule named here on each run: not a finding."),
    (("mutant",), "Planted mutants found", "Runs against a catalogue mutant (a historical Kafka bug reintroduced "
     "into the reference): whatever signature a run took, it found that mutant's bug."),
    (("error",), "isrcheck errors", "The suite itself failed: a bug in isrcheck, not in the target."),
)


def bug_title(bug: dict[str, Any]) -> str:
    """What a bug row says it is: the mutant and its title, or where the runs first parted."""
    key = str(bug.get("bug") or "")
    kind = bug.get("kind")
    if kind == "mutant":
        return f'{bug.get("mutant")}: {bug.get("title") or "mutant (no title recorded)"}'
    parts = key.split(":")
    if kind == "new" and len(parts) >= 4:
        adapter, level, operation = ":".join(parts[1:-2]), parts[-2], parts[-1]
        return f"{adapter} parts from the reference at {operation} ({level} level)"
    if kind in ("timeout", "crash") and len(parts) >= 3:
        return f'{":".join(parts[1:-1])}: {kind} at {parts[-1]}'
    if kind == "error":
        return f"isrcheck failed at {parts[-1]}"
    if kind == "known":
        return f"known divergence: {':'.join(parts[1:])}"
    return key


def _bug_table(bugs: Sequence[dict[str, Any]]) -> str:
    if not bugs:
        return '<section id="bugs"><h2>Bugs</h2><p class="muted">No findings.</p></section>'
    parts = ['<section id="bugs"><h2>Bugs</h2><p class="muted">One row per distinct bug: findings grouped by root '
             "cause (the mutant a run was planted with; otherwise the implementation, level and operation where "
             "its run first parted from the reference), with the signatures they took folded under it. Click a "
             "bug for its shortest counterexample.</p>"]
    index = 0
    for kinds, heading, explanation in BUG_GROUPS:
        group = [bug for bug in bugs if bug.get("kind") in kinds]
        if not group:
            continue
        rows = []
        for bug in group:
            rows.append(_bug_row(index, bug))
            index += 1
        parts.append(f'<h3 class="group">{esc(heading)} <span class="muted">({len(group)})</span></h3>'
                     f'<p class="muted small">{esc(explanation)}</p>'
                     '<table class="sortable bugs"><thead><tr><th data-type="number" class="num">#</th>'
                     '<th data-type="text">bug and its signatures</th><th data-type="number" class="num">findings</th>'
                     '<th data-type="number" class="num">runs</th><th data-type="text">where</th>'
                     '<th data-type="text">first seen</th><th data-type="number" class="num">shortest</th></tr></thead>'
                     f'<tbody>{"".join(rows)}</tbody></table>')
    others = [bug for bug in bugs if not any(bug.get("kind") in kinds for kinds, _, _ in BUG_GROUPS)]
    for bug in others:  # a kind this report does not know: still one row each
        parts.append(f'<table class="bugs"><tbody>{_bug_row(index, bug)}</tbody></table>')
        index += 1
    parts.append("</section>")
    return "".join(parts)


def _bug_row(index: int, bug: dict[str, Any]) -> str:
    shortest = bug.get("shortest") or {}
    length = shortest.get("length")
    ticket = f' <span class="badge ticket">{esc(bug.get("ticket"))}</span>' if bug.get("ticket") else ""
    control = ' <span class="badge no">negative control flagged: false positive</span>' \
        if bug.get("negative_control") else ""
    signatures = bug.get("signatures") or []
    folded = "".join(f'<li><span class="sig-code">{esc(sig.get("signature"))}</span> '
                     f'<span class="muted">{charts.number(sig.get("findings"))} finding(s) in '
                     f'{charts.number(sig.get("runs"))} run(s)</span></li>' for sig in signatures)
    where = f'{esc(", ".join(bug.get("targets") or []))}<br><span class="muted">releases ' \
            f'{esc(", ".join(bug.get("releases") or []))}</span>'
    return (f'<tr class="bug" data-bug-id="{esc(bug.get("bug"))}">'
            f'<td class="num" data-sort="{index + 1}">{index + 1}</td>'
            f'<td data-sort="{esc(bug.get("bug"))}"><a class="bug-title" href="#bug-{index}">{esc(bug_title(bug))}</a>'
            f'{ticket}{control}<details class="sigs"><summary>{len(signatures)} signature(s)</summary>'
            f'<ul>{folded}</ul></details></td>'
            f'<td class="num" data-sort="{int(bug.get("findings") or 0)}">{charts.number(bug.get("findings"))}</td>'
            f'<td class="num" data-sort="{int(bug.get("runs") or 0)}">{charts.number(bug.get("runs"))}</td>'
            f'<td class="where">{where}</td>{_when(bug.get("first_seen"))}'
            f'<td class="num" data-sort="{length if length is not None else 10**9}">'
            f'{esc(length) if length is not None else "—"}</td></tr>')


def _bug_counterexamples(bugs: Sequence[dict[str, Any]]) -> str:
    if not bugs:
        return ""
    ordered = [bug for kinds, _, _ in BUG_GROUPS for bug in bugs if bug.get("kind") in kinds]
    ordered += [bug for bug in bugs if bug not in ordered]
    blocks = [_bug_block(index, bug) for index, bug in enumerate(ordered)]
    return ('<section id="counterexamples"><h2>Shortest counterexamples</h2>'
            '<p class="muted">For each bug, the shortest shrunk interleaving found, and what <em>that</em> '
            "interleaving found (the message is about the steps drawn). The highlighted row is the diverging step; "
            "red arrows mark steps whose reference and target results differ in a field the protocol fixes. Grey "
            "results differ only where the protocol leaves the value to the implementation; they are not "
            "divergences, and the differential checker does not compare them either: "
            + "; ".join(f'<span class="mono">{esc(name)}</span>: {esc(why)}'
                        for name, why in IMPLEMENTATION_DEFINED.items())
            + f'.</p>{"".join(blocks)}</section>')


def _bug_block(index: int, bug: dict[str, Any]) -> str:
    ticket = f' · ticket <span class="mono">{esc(bug.get("ticket"))}</span>' if bug.get("ticket") else ""
    meta = (f'{charts.number(bug.get("findings"))} finding(s) in {charts.number(bug.get("runs"))} run(s), '
            f'{len(bug.get("signatures") or [])} signature(s) · targets: {esc(", ".join(bug.get("targets") or []))}'
            f'{ticket}')
    head = [f'<article class="signature" id="bug-{index}" data-for-bug="{esc(bug.get("bug"))}">'
            f'<h3>{esc(bug_title(bug))}</h3><div class="meta">{meta}</div>']
    shortest = bug.get("shortest")
    if not isinstance(shortest, dict):
        head.append('<p class="muted">No counterexample recorded: no run with this bug was shrunk.</p></article>')
        return "".join(head)
    return "".join(head) + _counterexample_body(f"bug{index}", f"bug {index + 1}", shortest) + "</article>"


def _counterexample_body(uid: str, name: str, shortest: dict[str, Any]) -> str:
    """Message, diagram, differing steps, replay and evidence of one shown counterexample."""
    finding: dict[str, Any] = shortest["finding"] if isinstance(shortest.get("finding"), dict) else {}
    counterexample: dict[str, Any] = (shortest["counterexample"] if isinstance(shortest.get("counterexample"), dict)
                                      else {})
    parts = [f'<div class="message"><span class="sig-code">{esc(finding.get("signature"))}</span><br>'
             f'step {esc(finding.get("step"))}: {esc(finding.get("message"))}</div>']
    if shortest.get("finding_of_counterexample") is False:
        parts.append('<p class="note">This record predates counterexample findings: the message is the run\'s '
                     "before shrinking and may name steps the diagram no longer has.</p>")
    if shortest.get("first_finding") is False:
        parts.append(f'<p class="note">Found at step {esc(finding.get("step"))} of a run whose counterexample was '
                     f'shrunk for its first finding, <span class="mono">{esc(shortest.get("run_first_signature"))}'
                     "</span>.</p>")
    parts.append(f'<div class="meta">run <span class="mono">{esc(shortest.get("run_id"))}</span> · target '
                 f'{esc(shortest.get("target"))} · release {esc(shortest.get("release"))} · seed '
                 f'{esc(shortest.get("seed"))} · started {esc(shortest.get("started_at"))} · '
                 f'{esc(counterexample.get("length"))} step(s), diverging at step '
                 f'{esc(counterexample.get("diverging_step"))}</div>')
    label = f"sequence diagram of the shortest counterexample of {name}"
    compared = shortest.get("compared") is not False
    parts.append(f'<div class="diagram">{sequence_svg(counterexample, label, uid, compared)}</div>')
    if compared:
        parts.append(_differing_table(counterexample))
    else:
        parts.append('<p class="note">This run compared no results with the reference (cluster level, or '
                     "--no-differential): the diagram shows the target's answers beside the reference's, and only "
                     "the property named above judged the target.</p>")
    replay = shortest.get("replay")
    if replay:
        parts.append(f'<div class="replay"><code id="replay-{uid}">{esc(replay)}</code>'
                     f'<button type="button" class="copy" data-target="replay-{uid}">Copy</button></div>')
    else:
        parts.append('<p class="muted">No replay command recorded for this run.</p>')
    evidence = finding.get("evidence")
    parts.append(f'<details><summary>Evidence and the full counterexample</summary>'
                 f'<pre class="json">{esc(json.dumps(evidence, indent=2, ensure_ascii=False))}</pre>'
                 f'<pre class="json">{esc(json.dumps(counterexample, indent=2, ensure_ascii=False))}</pre></details>')
    return "".join(parts)


def _differing_table(counterexample: dict[str, Any]) -> str:
    diffs = differing_steps(counterexample, compared=True)
    if not diffs:
        return ""
    rows = []
    for step in diffs:
        allowed = allowed_only(step)
        why = "; ".join(IMPLEMENTATION_DEFINED[name] for name in allowed)
        verdict_cell = (f'<td class="allowed-why" title="{esc(why)}">allowed: {esc(", ".join(allowed))} is '
                        "implementation-defined</td>" if allowed
                        else '<td class="divergent-why">divergence</td>')
        rows.append(f'<tr class="{"allowed" if allowed else "divergent"}"><td class="num">{esc(step.get("index"))}'
                    f'</td><td>{esc(step.get("op"))}</td><td>{esc(compact(step.get("reference"), 300))}</td>'
                    f'<td>{esc(compact(step.get("target"), 300))}</td>{verdict_cell}</tr>')
    return ('<table class="diffs"><thead><tr><th class="num">step</th><th>op</th><th>reference</th>'
            f'<th>target</th><th>difference</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')


RAN_OPEN = 12  # rows of "What ran" shown unfolded


def _ran(ran: Sequence[dict[str, Any]]) -> str:
    if not ran:
        return '<section id="ran"><h2>What ran</h2><p class="muted">No runs.</p></section>'
    rows = []
    for entry in ran:
        seeds = (f'{entry.get("seed_min")}' if entry.get("seed_min") == entry.get("seed_max")
                 else f'{entry.get("seed_min")}–{entry.get("seed_max")}')
        commits = entry.get("commits") or []
        rows.append(f'<tr><td class="mono">{esc(entry.get("target"))}</td><td>{esc(entry.get("level"))}</td>'
                    f'<td>{esc(entry.get("release"))}</td>'
                    f'<td class="num" data-sort="{int(entry.get("runs") or 0)}">{charts.number(entry.get("runs"))}</td>'
                    f'<td class="num">{charts.number(entry.get("campaigns"))}</td><td class="mono">{esc(seeds)}</td>'
                    f'<td class="mono">{esc(", ".join(entry.get("versions") or []) or "—")}</td>'
                    f'<td class="mono" title="{esc(", ".join(commits))}">'
                    f'{esc(", ".join(c[:10] for c in commits) or "—")}</td></tr>')
    levels = sorted({str(e.get("level")) for e in ran})
    releases = sorted({str(e.get("release")) for e in ran})
    return ('<section id="ran"><h2>What ran</h2>'
            f'<p class="muted">{len({e.get("target") for e in ran})} target(s) × {len(releases)} release(s) '
            f'({esc(", ".join(releases))}) × {len(levels)} level(s) ({esc(", ".join(levels))}). A target named '
            '<span class="mono">reference+ID</span> or with <span class="mono">mutant=ID</span> is the reference '
            "with a catalogue mutant planted (see Mutants).</p>"
            # a long list (the pipeline runs every mutant) is folded, but one click away
            f'<details class="ran"{" open" if len(rows) <= RAN_OPEN else ""}><summary>{len(rows)} target × level × '
            'release combination(s)</summary><table class="sortable ran"><thead><tr><th>target</th><th>level</th>'
            '<th>release</th><th data-type="number" class="num">runs</th><th data-type="number" class="num">'
            f'campaigns</th><th>seeds</th><th>isrcheck</th><th>commit</th></tr></thead><tbody>{"".join(rows)}'
            "</tbody></table></details></section>")


def _coverage(points: Sequence[dict[str, Any]]) -> str:
    reached = {str(p.get("point")): int(p.get("runs") or 0) for p in points}
    if not reached:
        return ('<section id="coverage"><h2>Protocol-state coverage</h2><p class="muted">The records carry no '
                "coverage (written by an older isrcheck).</p></section>")
    rows = []
    defined = {**PROTOCOL_OUTCOMES, **STATES}  # error codes per operation, then states per subject
    operations = list(defined)
    # operations reached with error codes the table does not list (faults have their own row)
    extra_ops = sorted({p.split(":", 1)[0] for p in reached if ":" in p} - set(operations) - set(FAULTS))
    for op in operations + extra_ops:
        expected = defined.get(op, ())
        seen = sorted(p.split(":", 1)[1] for p in reached if p.startswith(op + ":"))
        outcomes = list(expected) + [code for code in seen if code not in expected]
        cells = "".join(_coverage_chip(code, reached.get(f"{op}:{code}", 0), code in expected) for code in outcomes)
        hit = sum(1 for code in expected if reached.get(f"{op}:{code}"))
        share = f"{hit}/{len(expected)}" if expected else "—"
        rows.append(f'<tr><td class="mono op">{esc(op)}</td><td class="num">{share}</td>'
                    f'<td><div class="chips">{cells}</div></td></tr>')
    faults = "".join(_coverage_chip(op, reached.get(op, 0), True) for op in FAULTS)
    fault_hit = sum(1 for op in FAULTS if reached.get(op))
    rows.append(f'<tr><td>faults and scheduling</td><td class="num">{fault_hit}/{len(FAULTS)}</td>'
                f'<td><div class="chips">{faults}</div></td></tr>')
    return ('<section id="coverage"><h2>Protocol-state coverage</h2><p class="muted">Which validation branches '
            "(the error code the reference answered), which protocol states (leader, broker, partition) and which "
            "faults the runs reached, with the number of runs "
            'that reached each. <span class="cov-chip miss">dashed</span> outcomes the protocol defines were never '
            'exercised; <span class="cov-chip extra">outlined</span> ones were reached but are not in the '
            "expected list.</p>"
            '<table class="coverage"><thead><tr><th>operation</th><th class="num">reached</th><th>outcomes</th></tr>'
            f'</thead><tbody>{"".join(rows)}</tbody></table></section>')


def _coverage_chip(name: str, runs: int, expected: bool) -> str:
    tone = "hit" if runs and expected else "extra" if runs else "miss"
    label = f"{runs:,} run(s)" if runs else "not exercised"
    return f'<span class="cov-chip {tone}" title="{esc(name)}: {label}">{esc(name)} <b>{esc(label)}</b></span>'


def _distributions(distributions: dict[str, Any]) -> str:
    return ('<section id="distributions"><h2>Distributions</h2><div class="grid2">'
            f'<div class="panel"><h3>Steps per run</h3>{charts.histogram_chart(distributions.get("steps"), "steps")}'
            '</div><div class="panel"><h3>Duration per run</h3>'
            f'{charts.histogram_chart(distributions.get("duration_s"), "seconds")}</div></div></section>')
