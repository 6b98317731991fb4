# SPDX-License-Identifier: GPL-2.0-only
"""The classification rules of Documentation/classification.rst.

Rules are tried in order; the first that matches decides.  Checked rules
(refcount, usage) come first; wrap-safe verdicts need complete, exact,
positive evidence; everything else is unknown and stays checked.
"""

import json
from typing import Any, Callable, Iterable, NamedTuple, Optional, TextIO

from refsweep.resolve import Variable

CHECKED = ("refcount", "usage", "unknown")
WRAP_SAFE = ("statistic", "id", "state")
VERDICTS = ("refcount", "usage", "statistic", "id", "state", "unknown")

_STATE_BASES = {"set", "set_release", "xchg", "cmpxchg", "try_cmpxchg",
                "read", "read_acquire", "and", "or", "xor", "andnot",
                "fetch_and", "fetch_or", "fetch_xor", "fetch_andnot"}
_DECREASE = {"dec", "sub", "dec_return", "sub_return", "fetch_dec",
             "fetch_sub"}
_INCREASE = {"inc", "add", "inc_return", "add_return", "fetch_inc",
             "fetch_add"}


class Verdict(NamedTuple):
    verdict: str
    rule: str
    confidence: str


Rule = Callable[[list[dict[str, Any]]], Optional[Verdict]]


def _has(use: str, verdict: str, rule: str, confidence: str) -> Rule:
    def check(ev: list[dict[str, Any]]) -> Optional[Verdict]:
        if any(e["use"] == use for e in ev):
            return Verdict(verdict, rule, confidence)
        return None
    return check


def _inc_not_zero(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    if any(e["guard"] for e in ev):
        return Verdict("refcount", "inc-not-zero", "medium")
    return None


def _no_ops(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    return None if ev else Verdict("unknown", "no-ops", "low")


def _unjudged(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    if any(e["use"] == "value" for e in ev):
        return Verdict("unknown", "unjudged-use", "low")
    return None


def _ambiguous_only(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    if all(e["ambiguous"] for e in ev):
        return Verdict("unknown", "ambiguous-only", "low")
    return None


def _state(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    uses = {e["use"] for e in ev}
    if "state-test" in uses and uses <= {"state-test", "mod", "print"} \
            and all(e["base"] in _STATE_BASES for e in ev):
        return Verdict("state", "state", "medium")
    return None


def _id(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    uses = {e["use"] for e in ev}
    if "id" in uses and uses <= {"id", "mod", "print"} and \
            not any(e["base"] in _DECREASE for e in ev):
        return Verdict("id", "id", "medium")
    return None


def _print_only(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    uses = {e["use"] for e in ev}
    if uses == {"mod", "print"}:
        return Verdict("statistic", "print-only", "medium")
    return None


def _write_only(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    if {e["use"] for e in ev} <= {"mod"}:
        return Verdict("unknown", "write-only", "low")
    return None


RULES: list[Rule] = [
    _has("zero-release", "refcount", "zero-release", "high"),
    _inc_not_zero,
    _has("zero-returned", "refcount", "zero-returned", "medium"),
    _has("zero-wake", "usage", "zero-wake", "high"),
    _has("wait-zero", "usage", "wait-zero", "high"),
    _has("zero-test", "usage", "zero-test", "medium"),
    _has("limit", "usage", "limit", "medium"),
    _no_ops,
    _unjudged,
    _ambiguous_only,
    _state,
    _id,
    _print_only,
    _write_only,
]


def decide(evidence: list[dict[str, Any]]) -> Verdict:
    """The verdict for one variable's evidence."""
    for rule in RULES:
        v = rule(evidence)
        if v is not None:
            return v
    return Verdict("unknown", "conflict", "low")


def classify(variables: dict[str, Variable]) -> dict[str, Verdict]:
    """Verdicts for all variables, with conversion groups applied."""
    out = {k: decide(v.evidence) for k, v in variables.items()}
    checked_groups = {v.group for k, v in variables.items()
                      if v.group and out[k].verdict in CHECKED}
    for k, v in variables.items():
        if v.group in checked_groups and out[k].verdict in WRAP_SAFE:
            out[k] = Verdict("unknown", "group-checked", "medium")
    return out


def to_json(var: Variable, verdict: Verdict) -> dict[str, Any]:
    """The documented JSON object of one variable."""
    return {
        "key": var.key, "type": var.type, "decl": var.decl,
        "also_declared": var.decls[1:], "scope": var.scope, "found_by": sorted(var.found_by),
        "verdict": verdict.verdict, "rule": verdict.rule,
        "confidence": verdict.confidence, "group": var.group,
        "evidence": [
            {k: e[k] for k in ("op", "at", "function", "use", "detail",
                               "parsed", "ambiguous", "via") if k in e}
            for e in var.evidence],
    }


def write_json(variables: dict[str, Variable],
               verdicts: dict[str, Verdict], out: TextIO) -> None:
    for key in sorted(variables):
        out.write(json.dumps(to_json(variables[key], verdicts[key])) + "\n")


def read_json(lines: Iterable[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines if line.strip()]
