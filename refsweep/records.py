# SPDX-License-Identifier: GPL-2.0-only
"""The typed records that flow from evidence to verdicts.

Uses and verdicts are enums, evidence and variables dataclasses, so that a
misspelt use or verdict is an error, not a rule that silently never
matches.  Their JSON forms are documented in
Documentation/classification.rst ("JSON schema").
"""

import enum
from dataclasses import dataclass, field
from typing import Any, Optional

from refsweep.atomic_api import Effect


class Use(enum.StrEnum):
    """What the code does with one operation (or address) of a counter."""
    MOD = "mod"
    ZERO_RELEASE = "zero-release"
    ZERO_WAKE = "zero-wake"
    ZERO_TEST = "zero-test"
    PRINT_GUARD = "print-guard"      # tested for zero only to print
    TESTED_VALUE = "tested-value"    # tested for zero, and used otherwise
    ZERO_RETURNED = "zero-returned"
    WAIT_ZERO = "wait-zero"
    LIMIT = "limit"
    EQUALITY = "equality"
    STATE_TEST = "state-test"
    ID = "id"
    PRINT = "print"
    VALUE = "value"
    ESCAPE = "escape"


# Uses that, were they this variable's, would keep it checked.
CHECKED_USES = frozenset({Use.ZERO_RELEASE, Use.ZERO_WAKE, Use.ZERO_TEST,
                          Use.PRINT_GUARD,
                          Use.TESTED_VALUE,
                          Use.ZERO_RETURNED, Use.WAIT_ZERO, Use.LIMIT,
                          Use.EQUALITY, Use.VALUE})


class Verdict(enum.StrEnum):
    """The classification of one variable."""
    REFCOUNT = "refcount"
    USAGE = "usage"
    STATISTIC = "statistic"
    ID = "id"
    STATE = "state"
    UNKNOWN = "unknown"

    @property
    def wrap_safe(self) -> bool:
        return self in WRAP_SAFE


CHECKED = frozenset({Verdict.REFCOUNT, Verdict.USAGE, Verdict.UNKNOWN})
WRAP_SAFE = frozenset({Verdict.STATISTIC, Verdict.ID, Verdict.STATE})


class Confidence(enum.StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


@dataclass
class Evidence:
    """One operation (or address taken) attributed to one variable.

    ``base`` is the operation with its ordering suffix removed and
    ``effect`` what this call does to the counter (atomic_api.effect_of);
    ``guard`` marks inc_not_zero-style lookups; ``constant``: the amount
    or new value is a constant the code spells out, or the operation has
    none (inc, dec, read).  ``ambiguous``: the
    target might be another variable of that name; ``weak``: most likely
    another's (see "Attribution"); ``via``: the helper call it came
    through.
    """
    op: str
    at: str
    function: Optional[str]
    use: Use
    detail: str
    parsed: bool
    base: str
    effect: Effect
    guard: bool = False
    constant: bool = False
    ambiguous: bool = False
    weak: bool = False
    via: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "op": self.op, "at": self.at, "function": self.function,
            "use": str(self.use), "detail": self.detail,
            "parsed": self.parsed, "ambiguous": self.ambiguous,
            "weak": self.weak, "effect": str(self.effect)}
        if self.via is not None:
            out["via"] = self.via
        return out


def evidence_from_op(op: dict[str, Any], path: str) -> Evidence:
    """The Evidence of one scan op record (evidence.analyse_file) of PATH.
    Raises ValueError on an unknown use or effect: a scan written by other
    code."""
    return Evidence(op=op["op"], at=f"{path}:{op['line']}",
                    function=op["function"], use=Use(op["use"]),
                    detail=op["detail"], parsed=op["parsed"],
                    base=op["base"], effect=Effect(op["effect"]),
                    guard=op["guard"], constant=op["constant"])


@dataclass
class Variable:
    """One variable: its declaration sites and the evidence gathered.

    ``wrap_by_design`` / ``wrap_evidence``: signs that the counter wraps on
    purpose (a bias near INT_MIN, a random start ...); such a variable
    keeps its rule verdict but must not be converted to a checked type
    without a human look.
    """
    key: str
    type: str
    decl: str
    scope: str
    found_by: set[str]
    decls: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    group: Optional[str] = None
    wrap_by_design: bool = False
    wrap_evidence: list[str] = field(default_factory=list)
    # Storage allocated behind a pointer ("static atomic_t *ids"),
    # see pointers.py; JSON "pointer": true.
    pointer: bool = False

    def __post_init__(self) -> None:
        if not self.decls:
            self.decls = [self.decl]
