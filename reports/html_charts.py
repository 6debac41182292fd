"""Small inline SVG charts for the report: outcome bar, discovery curve, mutant detection, histograms.

Hand-drawn SVG rather than a charting library: the report must open offline from one file, and
these four charts need nothing a few rectangles, lines and labels cannot show. Inputs are the
numbers of summary.json; labels that come from records (mutant ids) are escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

from isrcheck.reports.mutant_verdict import verdict

OUTCOME_COLOURS = {"pass": "#3f9b5a", "known": "#8fb89a", "finding": "#d43d3d", "timeout": "#e08a1e",
                   "crash": "#8a4fbf", "error": "#6b6b6b", "skipped": "#b9c0c8"}
OTHER_COLOUR = "#4d7fc4"


def number(value: float | int | None) -> str:
    """12,345 for counts; up to 3 significant decimals for fractions."""
    if value is None:
        return "—"
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.1f}"


def outcome_bar(outcomes: dict[str, int]) -> str:
    """One stacked bar of run outcomes, with a legend."""
    total = sum(outcomes.values())
    if not total:
        return '<p class="muted">No runs.</p>'
    width, x = 1000.0, 0.0
    parts = ['<svg class="outcomes" viewBox="0 0 1000 28" preserveAspectRatio="none" role="img" '
             'aria-label="run outcomes" width="100%" height="28">']
    legend = []
    for name, count in outcomes.items():
        share = width * count / total
        colour = OUTCOME_COLOURS.get(name, OTHER_COLOUR)
        parts.append(f'<rect x="{x:.2f}" y="0" width="{share:.2f}" height="28" fill="{colour}">'
                     f"<title>{escape(name)}: {count:,}</title></rect>")
        x += share
        legend.append(f'<span class="legend-item"><i style="background:{colour}"></i>{escape(name)} '
                      f"<b>{count:,}</b> ({100 * count / total:.1f}%)</span>")
    parts.append("</svg>")
    return "".join(parts) + f'<div class="legend">{"".join(legend)}</div>'


def discovery_chart(buckets: Sequence[dict[str, Any]]) -> str:
    """Runs with findings per bucket (bars) and distinct signatures found so far (line), over runs."""
    if not buckets:
        return '<p class="muted">No runs.</p>'
    width, height, left, right, top, bottom = 760, 250, 52, 52, 16, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    total_runs = buckets[-1]["runs_so_far"]
    max_failing = max(max(b["runs_with_findings"] for b in buckets), 1)
    max_signatures = max(buckets[-1]["signatures_so_far"], 1)
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
             'aria-label="findings over runs, in started_at order">']
    parts += _axes(left, top, plot_w, plot_h)
    start = 0
    for bucket in buckets:
        x0 = left + plot_w * start / total_runs
        x1 = left + plot_w * bucket["runs_so_far"] / total_runs
        bar = plot_h * bucket["runs_with_findings"] / max_failing
        parts.append(f'<rect class="bar-findings" x="{x0 + 0.5:.1f}" y="{top + plot_h - bar:.1f}" '
                     f'width="{max(x1 - x0 - 1, 0.8):.1f}" height="{bar:.1f}"><title>runs {start + 1:,}–'
                     f'{bucket["runs_so_far"]:,} ({escape(str(bucket.get("first_started_at", "")))} …): '
                     f'{bucket["runs_with_findings"]:,} with findings, {bucket["new_signatures"]} new '
                     "signatures</title></rect>")
        start = bucket["runs_so_far"]
    points = [f"{left},{top + plot_h}"]
    for bucket in buckets:
        x = left + plot_w * bucket["runs_so_far"] / total_runs
        y = top + plot_h - plot_h * bucket["signatures_so_far"] / max_signatures
        points.append(f"{x:.1f},{y:.1f}")
    parts.append(f'<polyline class="line-signatures" points="{" ".join(points)}"/>')
    parts.append(f'<text class="tick" x="{left}" y="{height - 22}" text-anchor="start">0</text>'
                 f'<text class="tick" x="{left + plot_w}" y="{height - 22}" text-anchor="end">'
                 f"{total_runs:,} runs</text>"
                 f'<text class="axis-title" x="{left + plot_w / 2}" y="{height - 6}">runs, in started_at order'
                 "</text>"
                 f'<text class="tick bars" x="{left - 6}" y="{top + 10}" text-anchor="end">{max_failing:,}</text>'
                 f'<text class="tick bars" x="{left - 6}" y="{top + plot_h}" text-anchor="end">0</text>'
                 f'<text class="tick line" x="{left + plot_w + 6}" y="{top + 10}" text-anchor="start">'
                 f"{max_signatures}</text>"
                 f'<text class="tick line" x="{left + plot_w + 6}" y="{top + plot_h}" text-anchor="start">0</text>')
    parts.append("</svg>")
    legend = ('<div class="legend"><span class="legend-item"><i class="swatch-findings"></i>runs with findings '
              '(left axis)</span><span class="legend-item"><i class="swatch-line"></i>distinct signatures so '
              "far (right axis)</span></div>")
    return "".join(parts) + legend


def _axes(left: float, top: float, plot_w: float, plot_h: float) -> list[str]:
    return [f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}"/>',
            f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}"/>',
            f'<line class="axis" x1="{left + plot_w}" y1="{top}" x2="{left + plot_w}" y2="{top + plot_h}"/>']


def mutant_label(mutant: dict[str, Any]) -> str:
    """`B02`, or `B02 · kafka-wire` for a mutant served by another adapter than the in-process
    reference (the same mutant run two ways is two rows)."""
    name, target = str(mutant.get("mutant")), str(mutant.get("target") or "")
    if not target or target.startswith("reference"):
        return name
    return f"{name} · {target.split(',')[0]}"


def mutant_chart(mutants: Sequence[dict[str, Any]]) -> str:
    """Steps to the first finding per mutant, on a log scale; undetected mutants marked as such,
    and negative controls the other way round (unflagged passes, a finding is a false positive)."""
    if not mutants:
        return '<p class="muted">No mutant runs.</p>'
    row, left, width = 24, 150, 760
    plot_w = width - left - 150
    detected = [m["steps_to_first_finding"] for m in mutants if m.get("steps_to_first_finding")]
    top_exp = math.ceil(math.log10(max(detected))) if detected else 1
    top_exp = max(top_exp, 1)
    height = row * len(mutants) + 34
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
             'aria-label="steps to first finding per mutant">']
    for exp in range(top_exp + 1):
        x = left + plot_w * exp / top_exp
        parts.append(f'<line class="grid" x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height - 26}"/>'
                     f'<text class="tick" x="{x:.1f}" y="{height - 10}">{10 ** exp:,}</text>')
    for index, mutant in enumerate(mutants):
        y = index * row + 4
        name = escape(mutant_label(mutant))
        parts.append(f'<text class="bar-label" x="{left - 8}" y="{y + 13}" text-anchor="end">{name}</text>')
        steps = mutant.get("steps_to_first_finding")
        result = verdict(mutant)
        if steps:
            bar = plot_w * max(math.log10(steps), 0.05) / top_exp
            tone, prefix = ("detected", "") if result.passed else ("false-positive", "false positive after ")
            parts.append(f'<rect class="bar-{tone}" x="{left}" y="{y}" width="{bar:.1f}" height="{row - 8}">'
                         f"<title>{name}: first finding after {steps:,} steps "
                         f'(run {mutant.get("runs_to_first_finding")} of {mutant["runs"]:,})</title></rect>'
                         f'<text class="bar-value {tone}" x="{left + bar + 6:.1f}" y="{y + 13}" text-anchor="start">'
                         f"{prefix}{steps:,} steps · run {mutant.get('runs_to_first_finding')}</text>")
        else:
            tone = "passed" if result.passed else "undetected"
            text = "passed: not flagged" if result.passed else "not detected"
            parts.append(f'<rect class="bar-undetected" x="{left}" y="{y}" width="{plot_w:.1f}" '
                         f'height="{row - 8}"/><text class="bar-value {tone}" x="{left + 8}" y="{y + 13}" '
                         f'text-anchor="start">{text} in {mutant["runs"]:,} runs</text>')
    parts.append("</svg>")
    return "".join(parts)


def histogram_chart(distribution: dict[str, Any] | None, unit: str) -> str:
    """Bars per 1-2-5 bin, with min / median / p90 / max under them."""
    if not distribution or not distribution.get("histogram"):
        return '<p class="muted">No runs.</p>'
    bins = distribution["histogram"]
    width, height, bottom = 440, 190, 46
    slot = (width - 20) / len(bins)
    tallest = max(b["count"] for b in bins) or 1
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
             f'aria-label="{escape(unit)} histogram">']
    for index, item in enumerate(bins):
        bar = (height - bottom - 10) * item["count"] / tallest
        x = 10 + index * slot
        label = f"{number(item['lo'])}–{number(item['hi'])}" if item["hi"] is not None else f"≥{number(item['lo'])}"
        parts.append(f'<rect class="bar-hist" x="{x + 1:.1f}" y="{height - bottom - bar:.1f}" '
                     f'width="{max(slot - 2, 1):.1f}" height="{bar:.1f}"><title>{escape(label)} {escape(unit)}: '
                     f"{item['count']:,} runs</title></rect>")
        if index % max(1, len(bins) // 6) == 0:
            parts.append(f'<text class="tick" x="{x + slot / 2:.1f}" y="{height - bottom + 14}">'
                         f"{escape(number(item['lo']))}</text>")
    parts.append(f'<text class="axis-title" x="{width / 2}" y="{height - 10}">{escape(unit)} (bins 1-2-5)</text>')
    parts.append("</svg>")
    stats = " · ".join(f"{name} <b>{escape(number(distribution.get(name)))}</b>"
                       for name in ("min", "median", "p90", "max"))
    return "".join(parts) + f'<p class="stats">{stats}</p>'
