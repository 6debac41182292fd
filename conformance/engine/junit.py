"""JUnit XML for CI dashboards: one test case per finding signature, plus one for the campaign.

Each says what it is (docs/exit-codes.md): a finding, crash or timeout of the target is a
`<failure>`, isrcheck's own failure an `<error>`, and a campaign that tested nothing (the target
refused the configuration) is `<skipped>` with the reason — never a green case that ran nothing.
A known divergence (docs/known-divergences.md) is a passing case of class `isrcheck.known` whose
output names it, so a dashboard shows it without turning red.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

from isrcheck.conformance.engine.campaign import CampaignConfig, CampaignResult


def write_junit(path: Path, config: CampaignConfig, result: CampaignResult) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    ElementTree.ElementTree(junit_suite(config, result)).write(path, encoding="utf-8", xml_declaration=True)


def junit_suite(config: CampaignConfig, result: CampaignResult) -> ElementTree.Element:
    """The campaign's `<testsuite>` (`isrcheck qualify` puts several in one file)."""
    known = sorted(result.known)
    errors = sorted(s for s in result.signatures if s.startswith("error:"))
    failures = sorted(s for s in result.signatures if not s.startswith("error:") and s not in result.known)
    untested = not result.tested
    suite = ElementTree.Element(
        "testsuite", name=f"isrcheck {config.level} {config.adapter} {config.release}",
        tests=str(1 + len(result.signatures)), failures=str(len(failures)), errors=str(len(errors)),
        skipped=str(int(untested)), time=f"{result.seconds:.3f}",
    )
    case = ElementTree.SubElement(suite, "testcase", classname="isrcheck.campaign", name="campaign",
                                  time=f"{result.seconds:.3f}")
    if untested:
        reason = result.skip_reason or "no run exercised the target"
        ElementTree.SubElement(case, "skipped", message=f"nothing tested: {reason}")
    ElementTree.SubElement(case, "system-out").text = (
        f"{result.runs} runs ({result.tested} tested), {result.steps} steps, outcomes {dict(result.outcomes)}"
    )
    for signature in failures + errors:
        example = result.examples.get(signature, {})
        case = ElementTree.SubElement(suite, "testcase", classname="isrcheck.finding", name=signature)
        element = ElementTree.SubElement(case, "error" if signature in errors else "failure",
                                         message=str(example.get("message", signature)))
        element.text = f"found {result.signatures[signature]} time(s); replay: {example.get('replay')}"
    for signature in known:  # passes: Kafka's triaged behaviour, shown so nobody takes it for unseen
        example = result.examples.get(signature, {})
        case = ElementTree.SubElement(suite, "testcase", classname="isrcheck.known", name=signature)
        ElementTree.SubElement(case, "system-out").text = (
            f"known divergence (docs/known-divergences.md), seen {result.signatures[signature]} time(s): "
            f"{example.get('message', signature)}; replay: {example.get('replay')}")
    return suite
