"""The lint rules as data: one table (``RULES``: code, severity, summary, fix) that the checks, ``docs/lint.md``,
the SARIF ``rules`` array and the GUI's lint panel all read, and ``Finding``, one diagnostic of a capture.

Severities: ``error`` — on the console the command buffer would hang the GPU, fault or draw garbage;
``warning`` — legal, but most likely not what the program meant. ``picaemu lint`` exits 1 when any finding is an
error.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Rule:
    """One lint rule: what it finds (``summary``) and how to fix what it finds (``fix``)."""

    code: str
    severity: Severity
    summary: str
    fix: str


E, W = Severity.ERROR, Severity.WARNING
RULES: tuple[Rule, ...] = (
    Rule(
        "list-no-finalize",
        E,
        "a command list ends without raising its finalize interrupt (GPUREG_FINALIZE with IRQ_CMP's value)",
        "end the list with C3D_FrameEnd / GPUCMD_Split (a GPUREG_FINALIZE write, padded to 16 bytes)",
    ),
    Rule(
        "list-size",
        E,
        "a command list's size is not a multiple of 16 bytes, or it runs past the memory the capture wrote",
        "pad the list to 16 bytes and submit only the words written (GPUCMD_Split gives both)",
    ),
    Rule(
        "command-fault",
        E,
        "the command processor cannot run the list: truncated packet, jump outside memory or a jump cycle",
        "fix the packet at the offset named (header count, jump address and size)",
    ),
    Rule(
        "shader-no-end",
        E,
        "a path through the shader program runs past its last instruction (no END on it) or breaks outside a loop",
        "end every path of the program with END (picasso: .end of main), and keep BREAK inside a loop",
    ),
    Rule(
        "attribute-out-of-memory",
        E,
        "a vertex attribute read falls outside the memory the capture wrote (or outside physical memory)",
        "point ATTRIBBUFFERS_LOC / the loader offset at the vertex buffer and keep the draw within it",
    ),
    Rule(
        "index-out-of-range",
        E,
        "an index of a draw-elements call is past the vertices its attribute buffers hold",
        "keep every index below the vertex count of the buffers (or upload the missing vertices)",
    ),
    Rule(
        "texture-out-of-memory",
        E,
        "an enabled texture's levels lie outside the memory the capture wrote (or outside physical memory)",
        "upload the texture (all levels the LOD registers allow) before the draw, or fix the unit's address",
    ),
    Rule(
        "misaligned-address",
        E,
        "an address is not aligned as the hardware needs (elements to their size, GX buffers to 8 bytes)",
        "align the buffer (linearAlloc / vramAlloc align 0x80) and the offsets inside it",
    ),
    Rule(
        "target-overlap",
        E,
        "the color buffer and the depth buffer of a draw overlap in memory",
        "give the depth buffer its own allocation (COLORBUFFER_LOC and DEPTHBUFFER_LOC apart)",
    ),
    Rule(
        "nonfinite-uniform",
        W,
        "a float uniform the draw's shader reads holds NaN or infinity",
        "upload finite values (check the matrix or the division that produced it)",
    ),
    Rule(
        "uniform-index-overflow",
        E,
        "a float-uniform upload goes past c95: the hardware drops those vectors",
        "start the upload lower or upload fewer vectors (FLOATUNIFORM_INDEX + count <= 96)",
    ),
    Rule(
        "register-out-of-range",
        E,
        "a packet writes a register id past 0x2FF, which the hardware ignores",
        "fix the packet header's register id (and the count of a consecutive write)",
    ),
    Rule(
        "uninitialized-state",
        W,
        "a draw reads a register that no packet of the capture has set: it depends on state left by others",
        "set the register before the draw (citro3d: bind the state the draw relies on)",
    ),
    Rule(
        "transfer-format-mismatch",
        E,
        "a display transfer reads a buffer in a format other than the one drawn into it",
        "give the transfer's input format the render target's color format (GX_TRANSFER_IN_FORMAT)",
    ),
)
RULE_OF: dict[str, Rule] = {rule.code: rule for rule in RULES}
DOCS_BEGIN = "<!-- rules table: generated from picaemu.lint.rules.RULES by rules_markdown(); do not edit -->"
DOCS_END = "<!-- end of the rules table -->"


def rules_markdown() -> str:
    """The rules as the Markdown table docs/lint.md shows between ``DOCS_BEGIN`` and ``DOCS_END``."""
    rows = [f"| `{r.code}` | {r.severity.value} | {r.summary} | {r.fix} |" for r in RULES]
    return "\n".join(["| code | severity | finds | fix |", "|---|---|---|---|", *rows])


def with_rules_table(text: str) -> str:
    """``text`` (docs/lint.md) with the table between its markers generated afresh."""
    head, _, rest = text.partition(DOCS_BEGIN + "\n")
    _, _, tail = rest.partition(DOCS_END)
    return f"{head}{DOCS_BEGIN}\n{rules_markdown()}\n{DOCS_END}{tail}"


@dataclass(frozen=True)
class Finding:
    """One diagnostic: ``event`` (capture event index), ``draw`` (global draw index, -1 for none), ``offset``
    (byte offset of the packet in the command buffer at ``buffer``, -1 outside a list), ``packet`` (index of the
    packet in its event's command list, -1 when unknown) and a ``message`` that says what is wrong and, from the
    rule, how to fix it."""

    code: str
    event: int
    message: str
    draw: int = -1
    offset: int = -1
    buffer: int = 0
    packet: int = -1

    def __post_init__(self) -> None:
        if self.code not in RULE_OF:
            raise KeyError(f"unknown lint code {self.code!r}")

    @property
    def rule(self) -> Rule:
        return RULE_OF[self.code]

    @property
    def severity(self) -> Severity:
        return self.rule.severity

    def place(self) -> list[tuple[str, int]]:
        """Where the finding is, the parts that are known: ("event", E), then ("draw", D), ("packet", P)."""
        parts = [("event", self.event), ("draw", self.draw), ("packet", self.packet)]
        return [(name, value) for name, value in parts if name == "event" or value >= 0]

    @property
    def text(self) -> str:
        """The message followed by the rule's fix."""
        return f"{self.message}; fix: {self.rule.fix}"

    def as_dict(self) -> dict[str, object]:
        """The JSON form (docs/lint.md): code, severity, event, draw, offset, buffer, packet, message, fix."""
        out = asdict(self)
        out.update(severity=self.severity.value, fix=self.rule.fix)
        return out
