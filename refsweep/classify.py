# SPDX-License-Identifier: GPL-2.0-only
"""The classification rules of Documentation/classification.rst.

Rules are tried in order; the first that matches decides.  Checked rules
(refcount, usage) come first; wrap-safe verdicts need complete, exact,
positive evidence; everything else is unknown and stays checked.
"""

import hashlib
import json
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple, Optional, TextIO

from refsweep.atomic_api import Effect
from refsweep.records import (CHECKED, CHECKED_USES, WRAP_SAFE, Confidence,
                              Evidence, Use, Variable, Verdict)

# The verdicts in the order summaries print them.
VERDICTS: tuple[Verdict, ...] = tuple(Verdict)

_HIGH, _MEDIUM, _LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW


class Decision(NamedTuple):
    """A verdict, the rule that gave it, and how sure the rule is."""
    verdict: Verdict
    rule: str
    confidence: Confidence


Rule = Callable[[list[Evidence]], Optional[Decision]]


def _has(use: Use, verdict: Verdict, rule: str,
         confidence: Confidence) -> Rule:
    def check(ev: list[Evidence]) -> Optional[Decision]:
        if any(e.use is use for e in ev):
            return Decision(verdict, rule, confidence)
        return None
    return check


def _decreases(ev: list[Evidence]) -> bool:
    return any(e.effect is Effect.DECREASE for e in ev)


def _limit(ev: list[Evidence]) -> Optional[Decision]:
    """Compared with a bound; or for equality, when it also goes down (a
    count checked against a value, e.g. "== 1" for the last user)."""
    if any(e.use is Use.LIMIT for e in ev) or (
            any(e.use is Use.EQUALITY for e in ev) and _decreases(ev)):
        return Decision(Verdict.USAGE, "limit", _MEDIUM)
    return None


def _inc_not_zero(ev: list[Evidence]) -> Optional[Decision]:
    if any(e.guard for e in ev):
        return Decision(Verdict.REFCOUNT, "inc-not-zero", _MEDIUM)
    return None


def _no_arithmetic(ev: list[Evidence]) -> Optional[Decision]:
    """Never incremented, decremented, added to or subtracted from: a flag
    or value holder.  Its zero tests are flag tests, and no overflow check
    could ever fire on it."""
    ops = [e for e in ev if e.use is not Use.ESCAPE]
    if ops and not any(e.effect.arithmetic for e in ops) and \
            not all(e.ambiguous for e in ops) and \
            any(e.effect is not Effect.READ for e in ops) and \
            not any(e.use is Use.ESCAPE for e in ev):
        return Decision(Verdict.STATE, "state", _MEDIUM)
    return None


def _escapes(ev: list[Evidence]) -> Optional[Decision]:
    """The address goes where the rules cannot follow: whatever is done
    there is unseen, so no wrap-safe verdict."""
    if any(e.use is Use.ESCAPE and not e.ambiguous for e in ev):
        return Decision(Verdict.UNKNOWN, "escapes", _LOW)
    return None


def _gauge_value(ev: list[Evidence]) -> Optional[Decision]:
    """Counted up and down, and the value feeds code the rules cannot
    judge: a count of live things that something consults."""
    effects = {e.effect for e in ev if not e.ambiguous}
    if Effect.INCREASE in effects and Effect.DECREASE in effects and \
            any(e.use is Use.VALUE for e in ev):
        return Decision(Verdict.USAGE, "gauge-value", _LOW)
    return None


def _no_ops(ev: list[Evidence]) -> Optional[Decision]:
    if any(e.use is not Use.ESCAPE for e in ev):
        return None
    return Decision(Verdict.UNKNOWN, "no-ops", _LOW)


def _unjudged(ev: list[Evidence]) -> Optional[Decision]:
    if any(e.use is Use.VALUE for e in ev):
        return Decision(Verdict.UNKNOWN, "unjudged-use", _LOW)
    return None


def _uses(ev: list[Evidence]) -> set[Use]:
    """Uses that speak for this variable: an ambiguous address-taking is
    most likely another struct's member of the same name."""
    return {e.use for e in ev
            if not (e.use is Use.ESCAPE and e.ambiguous)}


def _id(ev: list[Evidence]) -> Optional[Decision]:
    uses = _uses(ev)
    if uses & {Use.ID, Use.EQUALITY} and \
            uses <= {Use.ID, Use.EQUALITY, Use.MOD, Use.PRINT} and \
            not _decreases(ev):
        return Decision(Verdict.ID, "id", _MEDIUM)
    return None


def _print_only(ev: list[Evidence]) -> Optional[Decision]:
    if _uses(ev) == {Use.MOD, Use.PRINT}:
        return Decision(Verdict.STATISTIC, "print-only", _MEDIUM)
    return None


def _print_unmodified(ev: list[Evidence]) -> Optional[Decision]:
    """Printed, and nothing modifies it: a counter left at its initial
    value (a statistic whose increments were removed), which no check
    could ever fire on.  Operations hidden behind macros and helpers are
    expanded first (see "Helpers, macros and pointers"); one that still
    hid would be an operation on an atomic that convert did not rewrite,
    which its build check reports as a type error."""
    if _uses(ev) == {Use.PRINT} and not any(e.ambiguous for e in ev):
        return Decision(Verdict.STATISTIC, "print-unmodified", _LOW)
    return None


def _write_only(ev: list[Evidence]) -> Optional[Decision]:
    """Only modified, never read, its address never taken (rule escapes
    came first): nothing consults the value, so a wrap changes nothing
    any code can see.  Reads the text pass finds where spatch could not
    parse (macro bodies, broken code) are evidence too and keep the
    variable out of this rule, as do raw ".counter" accesses (escapes).

    Only a counter that never goes down: one counted up and down is
    shaped like a count of holders (a refcount_t whose object is never
    freed, "refcount_inc(); ... refcount_dec();", is exactly that), and
    its reads may be out of sight: unknown."""
    if not _uses(ev) <= {Use.MOD}:
        return None
    if _decreases(ev):
        return Decision(Verdict.UNKNOWN, "unread-up-down", _LOW)
    return Decision(Verdict.STATISTIC, "write-only", _MEDIUM)


def _no_exact(ev: list[Evidence]) -> Optional[Decision]:
    """Every operation might be another variable's: decide nothing."""
    ops = [e for e in ev if e.use is not Use.ESCAPE]
    if ops and all(e.ambiguous for e in ops):
        return Decision(Verdict.UNKNOWN, "ambiguous-only", _LOW)
    return None


RULES: list[Rule] = [
    _no_exact,
    _no_arithmetic,
    _has(Use.ZERO_RELEASE, Verdict.REFCOUNT, "zero-release", _HIGH),
    _inc_not_zero,
    _has(Use.ZERO_RETURNED, Verdict.REFCOUNT, "zero-returned", _MEDIUM),
    _has(Use.ZERO_WAKE, Verdict.USAGE, "zero-wake", _HIGH),
    _has(Use.WAIT_ZERO, Verdict.USAGE, "wait-zero", _HIGH),
    _has(Use.ZERO_TEST, Verdict.USAGE, "zero-test", _MEDIUM),
    _limit,
    _gauge_value,
    _no_ops,
    _unjudged,
    _escapes,
    _id,
    _print_only,
    _print_unmodified,
    _write_only,
]


# The uses each rule decides on, for showing a reader the line that
# decided (the reports mark it, the commit messages quote it).
DECISIVE_USES: dict[str, tuple[Use, ...]] = {
    "zero-release": (Use.ZERO_RELEASE,),
    "inc-not-zero": (Use.ZERO_TEST,),
    "zero-returned": (Use.ZERO_RETURNED,),
    "zero-wake": (Use.ZERO_WAKE,),
    "wait-zero": (Use.WAIT_ZERO,),
    "zero-test": (Use.ZERO_TEST,),
    "limit": (Use.LIMIT, Use.EQUALITY),
    "gauge-value": (Use.VALUE,),
    "unjudged-use": (Use.VALUE,),
    "escapes": (Use.ESCAPE,),
    "id": (Use.ID, Use.EQUALITY),
    "print-only": (Use.PRINT,),
    "print-unmodified": (Use.PRINT,),
    "write-only": (Use.MOD,),
    "unread-up-down": (Use.MOD,),
    "state": (Use.STATE_TEST, Use.MOD),
    "weak-conflict": (Use.ZERO_TEST, Use.WAIT_ZERO, Use.LIMIT,
                      Use.EQUALITY, Use.VALUE),
}

def decide(evidence: list[Evidence]) -> Decision:
    """The verdict for one variable's evidence.

    Weak evidence (an op on a member of that name in a file that does not
    include this struct's header, while it includes another's) decides
    nothing, but it blocks a wrap-safe verdict when it would be checked
    evidence were it this variable's.
    """
    strong = [e for e in evidence if not e.weak]
    weak = [e for e in evidence if e.weak]
    decision = _first_rule(strong)
    if decision.verdict in WRAP_SAFE and any(
            e.use in CHECKED_USES or e.guard for e in weak):
        return Decision(Verdict.UNKNOWN, "weak-conflict", _LOW)
    if decision.rule == "no-ops" and weak:
        return Decision(Verdict.UNKNOWN, "ambiguous-only", _LOW)
    return decision


def _first_rule(evidence: list[Evidence]) -> Decision:
    for rule in RULES:
        d = rule(evidence)
        if d is not None:
            return d
    return Decision(Verdict.UNKNOWN, "conflict", _LOW)


def classify(variables: dict[str, Variable]) -> dict[str, Decision]:
    """Verdicts for all variables, with conversion groups applied."""
    out = {k: decide(v.evidence) for k, v in variables.items()}
    checked_groups = {v.group for k, v in variables.items()
                      if v.group and out[k].verdict in CHECKED}
    for k, v in variables.items():
        if v.group in checked_groups and out[k].verdict in WRAP_SAFE:
            out[k] = Decision(Verdict.UNKNOWN, "group-checked", _MEDIUM)
    return out


def to_json(var: Variable, decision: Decision) -> dict[str, Any]:
    """The documented JSON object of one variable."""
    return {
        "key": var.key, "type": var.type, "decl": var.decl,
        "also_declared": var.decls[1:], "scope": var.scope,
        "found_by": sorted(var.found_by),
        "verdict": str(decision.verdict), "rule": decision.rule,
        "confidence": str(decision.confidence), "group": var.group,
        "wrap_by_design": var.wrap_by_design,
        "wrap_evidence": list(var.wrap_evidence),
        "evidence": [e.to_json() for e in var.evidence],
        **({"pointer": True} if var.pointer else {}),
    }


def write_json(variables: dict[str, Variable],
               decisions: dict[str, Decision], out: TextIO) -> None:
    for key in sorted(variables):
        out.write(json.dumps(to_json(variables[key], decisions[key])) + "\n")


def read_json(lines: Iterable[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines if line.strip()]


def listing(records: Iterable[dict[str, Any]]) -> str:
    """'PATH:LINE: verdict (rule) KEY' lines, one a variable, for editors
    and grep; a triage decision ('final') wins over the machine's."""
    return "".join(
        f"{r['decl']}: {r.get('final') or r['verdict']} ({r['rule']}) "
        f"{r['key']}\n" for r in records)


def code_sha256() -> str:
    """The classifier's code (rules, records, attribution), for the
    record of what produced a verdicts file."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for name in ("classify.py", "records.py", "resolve.py", "atomic_api.py"):
        h.update((here / name).read_bytes())
    return h.hexdigest()
