"""SARIF 2.1.0 output of ``picaemu lint`` for code-scanning tools (GitHub code scanning, SARIF viewers).

``sarif_log(findings, capture_uri) -> dict``: one run whose ``tool.driver.rules`` is ``RULES`` (id, name, short
description = the summary, help = the fix, default level = the severity) and one result per finding: ``ruleId`` /
``ruleIndex``, ``level``, ``message.text`` (message and fix), a location in the capture file (the artifact) with a
logical location naming the event, draw and packet (``event[5]/draw[0]/packet[65]``: a packet's byte offset is in
the command buffer in emulated memory, not in the file), and ``properties`` with the finding's JSON fields.
"""

from __future__ import annotations

from importlib import metadata

from picaemu.lint.rules import RULES, Finding

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
VERSION = "2.1.0"
_INDEX = {rule.code: i for i, rule in enumerate(RULES)}


def _tool_version() -> str:
    try:
        return metadata.version("picaemu")
    except metadata.PackageNotFoundError:
        return "0"


def sarif_rules() -> list[dict[str, object]]:
    """The ``rules`` array, from the rule table."""
    return [
        {
            "id": rule.code,
            "name": "".join(part.capitalize() for part in rule.code.split("-")),
            "shortDescription": {"text": rule.summary},
            "help": {"text": rule.fix},
            "defaultConfiguration": {"level": rule.severity.value},
        }
        for rule in RULES
    ]


def logical_name(f: Finding) -> str:
    """Where a finding is in the capture: ``event[E]``, then ``/draw[D]`` and ``/packet[P]`` when known."""
    return "/".join(f"{name}[{value}]" for name, value in f.place())


def _result(f: Finding, capture_uri: str) -> dict[str, object]:
    return {
        "ruleId": f.code,
        "ruleIndex": _INDEX[f.code],
        "level": f.severity.value,
        "message": {"text": f.text},
        "locations": [
            {
                "physicalLocation": {"artifactLocation": {"uri": capture_uri, "index": 0}},
                "logicalLocations": [{"fullyQualifiedName": logical_name(f), "kind": "object"}],
            }
        ],
        "properties": f.as_dict(),
    }


def sarif_log(findings: list[Finding], capture_uri: str) -> dict[str, object]:
    """The SARIF log of one lint run over the capture at ``capture_uri`` (a relative path or a URI)."""
    return {
        "$schema": SCHEMA,
        "version": VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "picaemu lint",
                        "version": _tool_version(),
                        "rules": sarif_rules(),
                    }
                },
                "artifacts": [{"location": {"uri": capture_uri}}],
                "results": [_result(f, capture_uri) for f in findings],
            }
        ],
    }
