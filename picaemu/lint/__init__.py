"""``picaemu lint``: a validation layer for command buffers, like Vulkan's validation layers for the PICA200.

``lint(capture) -> list[Finding]`` replays a capture once without rendering and reports what would hang, fault
or draw garbage on the console (errors) and what is legal but suspicious (warnings). The rules are data
(``picaemu.lint.rules.RULES``); the runner (``picaemu.lint.runner``) checks events and packets, the draw checks
(``picaemu.lint.draws``) each draw's decoded state; ``picaemu.lint.sarif`` writes SARIF 2.1.0. Reference:
docs/lint.md.
"""

from __future__ import annotations

from picaemu.lint.rules import RULE_OF, RULES, Finding, Rule, Severity
from picaemu.lint.runner import Linter, lint

__all__ = ["RULES", "RULE_OF", "Finding", "Linter", "Rule", "Severity", "lint"]
