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


def _limit(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    """Compared with a bound; or for equality, when it also goes down (a
    count checked against a value, e.g. "== 1" for the last user)."""
    if any(e["use"] == "limit" for e in ev) or (
            any(e["use"] == "equality" for e in ev)
            and any(e["base"] in _DECREASE for e in ev)):
        return Verdict("usage", "limit", "medium")
    return None


def _inc_not_zero(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    if any(e["guard"] for e in ev):
        return Verdict("refcount", "inc-not-zero", "medium")
    return None


_ARITH = _DECREASE | _INCREASE | {
    "dec_and_test", "inc_and_test", "sub_and_test", "add_negative",
    "inc_not_zero", "add_unless", "fetch_add_unless", "dec_if_positive",
    "inc_unless_negative", "dec_unless_positive", "dec_and_lock",
    "dec_and_lock_irqsave", "dec_and_raw_lock", "dec_and_raw_lock_irqsave",
    "dec_and_mutex_lock"}


def _no_arithmetic(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    """Never incremented, decremented, added to or subtracted from: a flag
    or value holder.  Its zero tests are flag tests, and no overflow check
    could ever fire on it."""
    ops = [e for e in ev if e["use"] != "escape"]
    if ops and not any(e["base"] in _ARITH for e in ops) and \
            not all(e["ambiguous"] for e in ops) and \
            any(e["base"] not in ("read", "read_acquire") for e in ops) and \
            not any(e["use"] == "escape" for e in ev):
        return Verdict("state", "state", "medium")
    return None


def _escapes(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    """The address goes where the rules cannot follow: whatever is done
    there is unseen, so no wrap-safe verdict."""
    if any(e["use"] == "escape" and not e["ambiguous"] for e in ev):
        return Verdict("unknown", "escapes", "low")
    return None


def _gauge_value(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    """Counted up and down, and the value feeds code the rules cannot
    judge: a count of live things that something consults."""
    bases = {e["base"] for e in ev if not e["ambiguous"]}
    if bases & _INCREASE and bases & _DECREASE and \
            any(e["use"] == "value" for e in ev):
        return Verdict("usage", "gauge-value", "low")
    return None


def _no_ops(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    if any(e["use"] != "escape" for e in ev):
        return None
    return Verdict("unknown", "no-ops", "low")


def _unjudged(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    if any(e["use"] == "value" for e in ev):
        return Verdict("unknown", "unjudged-use", "low")
    return None


def _uses(ev: list[dict[str, Any]]) -> set[str]:
    """Uses that speak for this variable: an ambiguous address-taking is
    most likely another struct's member of the same name."""
    return {e["use"] for e in ev
            if not (e["use"] == "escape" and e["ambiguous"])}


def _id(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    uses = _uses(ev)
    if uses & {"id", "equality"} and uses <= {"id", "equality", "mod",
                                             "print"} and \
            not any(e["base"] in _DECREASE for e in ev):
        return Verdict("id", "id", "medium")
    return None


def _print_only(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    uses = _uses(ev)
    if uses == {"mod", "print"}:
        return Verdict("statistic", "print-only", "medium")
    return None


def _write_only(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    if _uses(ev) <= {"mod"}:
        return Verdict("unknown", "write-only", "low")
    return None


def _no_exact(ev: list[dict[str, Any]]) -> Optional[Verdict]:
    """Every operation might be another variable's: decide nothing."""
    ops = [e for e in ev if e["use"] != "escape"]
    if ops and all(e["ambiguous"] for e in ops):
        return Verdict("unknown", "ambiguous-only", "low")
    return None


RULES: list[Rule] = [
    _no_exact,
    _no_arithmetic,
    _has("zero-release", "refcount", "zero-release", "high"),
    _inc_not_zero,
    _has("zero-returned", "refcount", "zero-returned", "medium"),
    _has("zero-wake", "usage", "zero-wake", "high"),
    _has("wait-zero", "usage", "wait-zero", "high"),
    _has("zero-test", "usage", "zero-test", "medium"),
    _limit,
    _gauge_value,
    _no_ops,
    _unjudged,
    _escapes,
    _id,
    _print_only,
    _write_only,
]


# Uses that, if they were this variable's, would keep it checked.
_CHECKED_USES = {"zero-release", "zero-wake", "zero-test", "zero-returned",
                 "wait-zero", "limit", "equality", "value"}


def decide(evidence: list[dict[str, Any]]) -> Verdict:
    """The verdict for one variable's evidence.

    Weak evidence (an op on a member of that name in a file that does not
    include this struct's header, while it includes another's) decides
    nothing, but it blocks a wrap-safe verdict when it would be checked
    evidence were it this variable's.
    """
    strong = [e for e in evidence if not e.get("weak")]
    weak = [e for e in evidence if e.get("weak")]
    verdict = _first_rule(strong)
    if verdict.verdict in WRAP_SAFE and any(
            e["use"] in _CHECKED_USES or e["guard"] for e in weak):
        return Verdict("unknown", "weak-conflict", "low")
    if verdict.rule == "no-ops" and weak:
        return Verdict("unknown", "ambiguous-only", "low")
    return verdict


def _first_rule(evidence: list[dict[str, Any]]) -> Verdict:
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
                               "parsed", "ambiguous", "weak", "via")
             if k in e}
            for e in var.evidence],
        # wrap_design.py; storage behind a pointer (pointers.py).
        "wrap_by_design": bool(var.wrap_evidence),
        "wrap_evidence": var.wrap_evidence,
        **({"pointer": True} if var.pointer else {}),
    }


def write_json(variables: dict[str, Variable],
               verdicts: dict[str, Verdict], out: TextIO) -> None:
    for key in sorted(variables):
        out.write(json.dumps(to_json(variables[key], verdicts[key])) + "\n")


def read_json(lines: Iterable[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines if line.strip()]
