# SPDX-License-Identifier: GPL-2.0-only
"""The classification rules of Documentation/classification.rst.

Rules are tried in order; the first that matches decides.  Checked rules
(refcount, usage) come first; wrap-safe verdicts need complete, exact,
positive evidence; everything else is unknown and stays checked.
"""

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple, Optional, TextIO

from refsweep import atomic_api
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


def _has(uses: frozenset[Use], verdict: Verdict, rule: str,
         confidence: Confidence) -> Rule:
    def check(ev: list[Evidence]) -> Optional[Decision]:
        if any(e.use in uses for e in ev):
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


# What a counter that is never decreased may be used for and still be
# judged a flag: zero tests (waits too) whose value serves nothing else,
# state tests, printing, IDs.  A comparison with a bound or an equality
# ("== nr_cpus" in a rendezvous, "> hang_limit") counts events something
# waits for or gates on; that, an unjudged value, a zero test returned to
# a caller or an escape leaves the rules below to decide.
_RAISED_ONLY_USES = frozenset({Use.MOD, Use.ZERO_TEST, Use.WAIT_ZERO,
                               Use.STATE_TEST, Use.ID, Use.PRINT})


def _tests_by_itself(e: Evidence) -> bool:
    """An operation that is a zero test by itself: "add_unless(v, n, 0)"
    takes references only while the count is not zero, "inc_and_test"
    counts a negative start up to zero; both are shapes of counts."""
    sem = atomic_api.OPS.get(e.base)
    return sem is not None and sem.zero_test


def _spelled_out(e: Evidence) -> bool:
    """E moves the counter by, or sets it to, a constant, or has no
    amount at all (inc, dec, read): its direction is in sight."""
    return e.effect is Effect.READ or e.constant


def _raises_only(e: Evidence) -> bool:
    """E leaves the counter where it was or raises it by, or sets it to,
    a constant, and it is used in a way the rules judge."""
    return not e.ambiguous and not e.guard and \
        not _tests_by_itself(e) and e.use in _RAISED_ONLY_USES and \
        e.effect not in (Effect.DECREASE, Effect.BITS) and _spelled_out(e)


# The last word of the names of functions that run once per lifecycle of
# a device, module or object in the kernel's conventions: driver-model
# callbacks (probe, remove, disconnect, shutdown), module and subsystem
# set-up and tear-down.  An increment there is not per event: "stop",
# "start", "open" and "release" are left out, since they can run per
# request, per queue-full or per file.
LIFECYCLE_WORDS = frozenset({
    "probe", "remove", "disconnect", "shutdown", "init", "initialize",
    "initialise", "exit", "deinit", "uninit", "cleanup", "destroy",
    "teardown"})


def is_lifecycle_function(name: Optional[str]) -> bool:
    """Does the function NAME, by the kernel's naming conventions, run
    once per lifecycle ("foo_probe", "cvm_oct_rx_initialize",
    "atmel_shutdown")?"""
    if not name:
        return False
    return name.strip("_").rsplit("_", 1)[-1].lower() in LIFECYCLE_WORDS


def _lifecycle_flag(ev: list[Evidence]) -> Optional[Decision]:
    """Counted up, never down, and only in set-up or tear-down paths: a
    flag raised once per lifecycle ("ready", "shut down"), whose zero is
    the value it was set or reset to, so a zero test asks "raised
    since?".  An increment per event looks the same in the operations
    (an interrupt handler counting pending work that a consumer takes
    with xchg), so the calling context decides: every increase must sit
    in a function is_lifecycle_function() names.  No wrap-safe verdict
    unless every operation is in sight and spelled out: none ambiguous,
    no address taken, none a zero test by itself, every increase by a
    constant (a computed amount may be negative) and every set or
    exchange to a constant (a computed one may lower it, as a
    "try_cmpxchg(v, &old, old - 1)" loop does).  Only what a zero test
    would otherwise decide: without one, the rules for IDs and
    statistics below judge it."""
    increases = [e for e in ev if e.effect is Effect.INCREASE]
    if not increases or \
            not all(_raises_only(e) for e in ev) or \
            not all(is_lifecycle_function(e.function) for e in increases) or \
            not any(e.use in (Use.ZERO_TEST, Use.WAIT_ZERO) for e in ev):
        return None
    if any(e.use is Use.ID for e in ev):
        return Decision(Verdict.ID, "lifecycle-flag", _MEDIUM)
    if any(e.use is Use.PRINT for e in ev):
        return Decision(Verdict.STATISTIC, "lifecycle-flag", _MEDIUM)
    return Decision(Verdict.STATE, "lifecycle-flag", _MEDIUM)


# What a flag taken by a constant exchange may be used for: tests of its
# value against zero or a constant, and printing.  A limit or an
# unjudged value leaves the rules below to decide.
_EXCHANGE_FLAG_USES = frozenset({Use.MOD, Use.ZERO_TEST, Use.TESTED_VALUE,
                                 Use.WAIT_ZERO, Use.STATE_TEST,
                                 Use.EQUALITY, Use.PRINT})


def _bounded_by_exchange(e: Evidence) -> bool:
    """E never raises the counter by arithmetic: it reads it, lowers it
    by a constant, or sets or exchanges it to a constant."""
    return not e.ambiguous and not e.guard and \
        not _tests_by_itself(e) and e.use in _EXCHANGE_FLAG_USES and \
        e.effect in (Effect.READ, Effect.DECREASE, Effect.SET,
                     Effect.EXCHANGE) and _spelled_out(e)


def _exchange_flag(ev: list[Evidence]) -> Optional[Decision]:
    """Claimed by an exchange to a constant ("if (atomic_cmpxchg(&v, 0,
    1)) return -EBUSY;") and let go by a decrement or a set: a
    test-and-set flag (exclusive open, busy), not a count.  Nothing ever
    adds to it, so its value never exceeds the largest constant written
    and no overflow check could fire on it.  Every operation must be in
    sight and spelled out, as for lifecycle-flag; a decrement that
    releases (dec_and_test) is a zero test by itself and leaves the
    rules below to decide."""
    if not any(e.effect is Effect.EXCHANGE for e in ev) or \
            not any(e.effect is Effect.DECREASE for e in ev) or \
            not all(_bounded_by_exchange(e) for e in ev):
        return None
    return Decision(Verdict.STATE, "exchange-flag", _MEDIUM)


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
    _has(frozenset({Use.ZERO_RELEASE}), Verdict.REFCOUNT, "zero-release",
         _HIGH),
    _inc_not_zero,
    _has(frozenset({Use.ZERO_RETURNED}), Verdict.REFCOUNT, "zero-returned",
         _MEDIUM),
    _has(frozenset({Use.ZERO_WAKE}), Verdict.USAGE, "zero-wake", _HIGH),
    _exchange_flag,
    _lifecycle_flag,
    _has(frozenset({Use.WAIT_ZERO}), Verdict.USAGE, "wait-zero", _HIGH),
    _has(frozenset({Use.ZERO_TEST, Use.TESTED_VALUE}), Verdict.USAGE,
         "zero-test", _MEDIUM),
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


# Rules that need every operation in sight, by name.
_PREMISE_RULES: dict[str, Rule] = {
    "exchange-flag": _exchange_flag,
    "lifecycle-flag": _lifecycle_flag,
}


# The uses each rule decides on, for showing a reader the line that
# decided (the reports mark it, the commit messages quote it).
DECISIVE_USES: dict[str, tuple[Use, ...]] = {
    "zero-release": (Use.ZERO_RELEASE,),
    "inc-not-zero": (Use.ZERO_TEST,),
    "zero-returned": (Use.ZERO_RETURNED,),
    "zero-wake": (Use.ZERO_WAKE,),
    "wait-zero": (Use.WAIT_ZERO,),
    "zero-test": (Use.ZERO_TEST, Use.TESTED_VALUE, Use.PRINT_GUARD),
    "limit": (Use.LIMIT, Use.EQUALITY),
    "gauge-value": (Use.VALUE,),
    "unjudged-use": (Use.VALUE,),
    "escapes": (Use.ESCAPE,),
    "id": (Use.ID, Use.EQUALITY),
    "print-only": (Use.PRINT, Use.PRINT_GUARD),
    "print-unmodified": (Use.PRINT,),
    "write-only": (Use.MOD,),
    "unread-up-down": (Use.MOD,),
    "state": (Use.STATE_TEST, Use.MOD),
    "exchange-flag": (Use.ZERO_TEST, Use.TESTED_VALUE, Use.WAIT_ZERO,
                      Use.STATE_TEST, Use.EQUALITY),
    "lifecycle-flag": (Use.ZERO_TEST, Use.WAIT_ZERO, Use.STATE_TEST),
    "weak-conflict": (Use.ZERO_TEST, Use.TESTED_VALUE, Use.WAIT_ZERO,
                      Use.LIMIT, Use.EQUALITY, Use.VALUE),
}


def _may_lower(ev: list[Evidence]) -> bool:
    """Counted down; moved by an amount or to a value the code computes
    ("atomic_add(delta, v)", "atomic_set(v, n)"), whose sign is not in
    sight; or its address handed to code not in sight, which may count
    it down."""
    return _decreases(ev) or any(
        e.use is Use.ESCAPE or
        (e.effect is not Effect.BITS and not _spelled_out(e)) for e in ev)


def _judge_print_guards(evidence: list[Evidence]) -> list[Evidence]:
    """A zero test that only chooses what to print ("if (value) p +=
    sprintf(p, ...)") prints, for a counter that nothing may count down
    (a histogram bucket shown when non-zero).  For one that may be
    (_may_lower), or as weak evidence, it stays a zero test: it may
    be a leak check of a count of holders ("if (atomic_read(&pending))
    pr_warn(...)" at tear-down)."""
    if not any(e.use is Use.PRINT_GUARD for e in evidence):
        return evidence
    lowered = _may_lower(evidence)
    return [dataclasses.replace(
        e, use=Use.ZERO_TEST if lowered or e.weak else Use.PRINT)
        if e.use is Use.PRINT_GUARD else e for e in evidence]


def decide(evidence: list[Evidence]) -> Decision:
    """The verdict for one variable's evidence.

    Weak evidence (an op on a member of that name in a file that does not
    include this struct's header, while it includes another's) decides
    nothing, but it blocks a wrap-safe verdict when it would be checked
    evidence were it this variable's.  The flag rules, whose premise is
    that every operation is in sight, decide only when they would still
    decide with the weak evidence taken as this variable's.
    """
    evidence = _judge_print_guards(evidence)
    strong = [e for e in evidence if not e.weak]
    weak = [e for e in evidence if e.weak]
    rules = RULES
    decision = _first_rule(strong, rules)
    while weak and decision.rule in _PREMISE_RULES:
        if _PREMISE_RULES[decision.rule](strong + weak) == decision:
            return decision
        # Were a weak op this variable's, the premise would not hold:
        # the rules after that one decide.
        rules = [r for r in rules if r is not _PREMISE_RULES[decision.rule]]
        decision = _first_rule(strong, rules)
    if decision.verdict in WRAP_SAFE and any(
            e.use in CHECKED_USES or e.guard for e in weak):
        return Decision(Verdict.UNKNOWN, "weak-conflict", _LOW)
    if decision.rule == "no-ops" and weak:
        return Decision(Verdict.UNKNOWN, "ambiguous-only", _LOW)
    return decision


def _first_rule(evidence: list[Evidence], rules: list[Rule]) -> Decision:
    for rule in rules:
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
