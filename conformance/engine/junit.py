"""JUnit XML for CI dashboards: one test case per finding signature, plus one for the campaign."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

from isrcheck.conformance.engine.campaign import CampaignConfig, CampaignResult


def write_junit(path: Path, config: CampaignConfig, result: CampaignResult) -> None:
    suite = ElementTree.Element(
        "testsuite", name=f"isrcheck {config.level} {config.adapter} {config.release}",
        tests=str(1 + len(result.signatures)), failures=str(len(result.signatures)), time=f"{result.seconds:.3f}",
    )
    case = ElementTree.SubElement(suite, "testcase", classname="isrcheck.campaign", name="campaign",
                                  time=f"{result.seconds:.3f}")
    ElementTree.SubElement(case, "system-out").text = (
        f"{result.runs} runs, {result.steps} steps, outcomes {dict(result.outcomes)}"
    )
    for signature, count in sorted(result.signatures.items()):
        example = result.examples.get(signature, {})
        case = ElementTree.SubElement(suite, "testcase", classname="isrcheck.finding", name=signature)
        failure = ElementTree.SubElement(case, "failure", message=str(example.get("message", signature)))
        failure.text = f"found {count} time(s); replay: {example.get('replay')}"
    path.parent.mkdir(parents=True, exist_ok=True)
    ElementTree.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
