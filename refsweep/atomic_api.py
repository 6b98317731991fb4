# SPDX-License-Identifier: GPL-2.0-only
"""The kernel atomic API: which names are operations, and what each one does.

One table (OPS) serves the lexical pass, the spatch records, the evidence
and the classification rules, so that "is this an atomic operation, which
argument is the counter, does it return a value, does it move the counter
up or down, is it a zero test" is decided in exactly one place.
"""

import enum
import re
from dataclasses import dataclass
from typing import NamedTuple, Optional

ATOMIC_TYPES = ("atomic_t", "atomic64_t", "atomic_long_t")


class Effect(enum.StrEnum):
    """What an operation does to the counter."""
    INCREASE = "increase"
    DECREASE = "decrease"
    SET = "set"              # set, set_release
    EXCHANGE = "exchange"    # xchg, cmpxchg, try_cmpxchg of unrelated values
    BITS = "bits"            # and/or/xor/andnot and their fetch_ forms
    READ = "read"            # read, read_acquire, cond_read_*

    @property
    def arithmetic(self) -> bool:
        """Moves the counter by an amount: the ops an overflow check
        guards."""
        return self in (Effect.INCREASE, Effect.DECREASE)


@dataclass(frozen=True)
class Semantics:
    """What one base operation (ordering suffix removed) does."""
    effect: Effect
    returns: bool            # its result can be used
    counter_last: bool       # counter is the last argument, else the first
    zero_test: bool = False  # tests for (or guards against) zero by itself
    operand: Optional[int] = None  # index of the amount/new value argument
    waits: bool = False      # blocks until a condition on the value holds


_I, _D = Effect.INCREASE, Effect.DECREASE

# The one table.  "operand" names the argument whose sign can reverse the
# direction ("atomic_add(-1, v)" decreases) or, for exchanges, the new
# value ("atomic_try_cmpxchg(v, &old, old - 1)" decreases).
OPS: dict[str, Semantics] = {
    "read": Semantics(Effect.READ, True, False),
    "read_acquire": Semantics(Effect.READ, True, False),
    "cond_read": Semantics(Effect.READ, True, False, waits=True),
    "set": Semantics(Effect.SET, False, False, operand=1),
    "set_release": Semantics(Effect.SET, False, False, operand=1),
    "inc": Semantics(_I, False, False),
    "dec": Semantics(_D, False, False),
    "add": Semantics(_I, False, True, operand=0),
    "sub": Semantics(_D, False, True, operand=0),
    "inc_return": Semantics(_I, True, False),
    "dec_return": Semantics(_D, True, False),
    "add_return": Semantics(_I, True, True, operand=0),
    "sub_return": Semantics(_D, True, True, operand=0),
    "fetch_inc": Semantics(_I, True, False),
    "fetch_dec": Semantics(_D, True, False),
    "fetch_add": Semantics(_I, True, True, operand=0),
    "fetch_sub": Semantics(_D, True, True, operand=0),
    "and": Semantics(Effect.BITS, False, True),
    "or": Semantics(Effect.BITS, False, True),
    "xor": Semantics(Effect.BITS, False, True),
    "andnot": Semantics(Effect.BITS, False, True),
    "fetch_and": Semantics(Effect.BITS, True, True),
    "fetch_or": Semantics(Effect.BITS, True, True),
    "fetch_xor": Semantics(Effect.BITS, True, True),
    "fetch_andnot": Semantics(Effect.BITS, True, True),
    "xchg": Semantics(Effect.EXCHANGE, True, False, operand=1),
    "cmpxchg": Semantics(Effect.EXCHANGE, True, False, operand=2),
    "try_cmpxchg": Semantics(Effect.EXCHANGE, True, False, operand=2),
    "dec_and_test": Semantics(_D, True, False, zero_test=True),
    "inc_and_test": Semantics(_I, True, False, zero_test=True),
    "sub_and_test": Semantics(_D, True, True, zero_test=True, operand=0),
    "add_negative": Semantics(_I, True, True, zero_test=True, operand=0),
    "inc_not_zero": Semantics(_I, True, False, zero_test=True),
    "add_unless": Semantics(_I, True, False, zero_test=True, operand=1),
    "fetch_add_unless": Semantics(_I, True, False, zero_test=True,
                                  operand=1),
    "dec_if_positive": Semantics(_D, True, False, zero_test=True),
    "inc_unless_negative": Semantics(_I, True, False, zero_test=True),
    "dec_unless_positive": Semantics(_D, True, False, zero_test=True),
    "dec_and_lock": Semantics(_D, True, False, zero_test=True),
    "dec_and_lock_irqsave": Semantics(_D, True, False, zero_test=True),
    "dec_and_raw_lock": Semantics(_D, True, False, zero_test=True),
    "dec_and_raw_lock_irqsave": Semantics(_D, True, False, zero_test=True),
    "dec_and_mutex_lock": Semantics(_D, True, False, zero_test=True),
}

# Zero tests that refuse to act at a bound rather than report reaching it.
GUARDS = frozenset({"inc_not_zero", "add_unless", "fetch_add_unless",
                    "inc_unless_negative", "dec_unless_positive",
                    "dec_if_positive"})

_NAME_RE = re.compile(
    r"^(?:raw_|arch_)?atomic(?P<width>64|_long)?_(?P<rest>[a-z0-9_]+)$")
_ORDER_RE = re.compile(r"_(relaxed|acquire|release)$")
_NEGATIVE = re.compile(r"^\(*\s*-\s*[\w(]")
# "old - 1", "(c + 1)", "v + delta": an exchange that moves the counter.
_STEP = re.compile(r"^\(*\s*[\w.>\-\[\]]+?\s*([-+])\s*[\w()]+\s*\)*$")
# An integer literal, an upper-case macro constant, true or false.
_CONSTANT = re.compile(r"^\(?-?(\d+[uUlL]*|0x[0-9a-fA-F]+[uUlL]*|"
                       r"[A-Z][A-Z0-9_]*|true|false)\)?$")


class AtomicOp(NamedTuple):
    """One atomic API function, decoded; EFFECT may be refined by the
    arguments of one call (see refine)."""
    name: str
    width: str          # "", "64" or "_long"
    base: str           # e.g. "dec_and_test", ordering suffix removed
    counter_last: bool  # counter is the last argument, else the first
    effect: Effect

    @property
    def semantics(self) -> Semantics:
        return OPS[self.base]

    @property
    def returns_value(self) -> bool:
        return self.semantics.returns

    @property
    def is_zero_test(self) -> bool:
        return self.semantics.zero_test

    @property
    def is_guard(self) -> bool:
        return self.base in GUARDS

    @property
    def increases(self) -> bool:
        return self.effect is Effect.INCREASE

    @property
    def decreases(self) -> bool:
        return self.effect is Effect.DECREASE

    @property
    def is_read(self) -> bool:
        return self.semantics.effect is Effect.READ

    @property
    def waits(self) -> bool:
        return self.semantics.waits

    @property
    def is_exchange(self) -> bool:
        return self.semantics.effect is Effect.EXCHANGE

    @property
    def is_state_write(self) -> bool:
        return self.semantics.effect in (Effect.SET, Effect.EXCHANGE)


def decode(name: str) -> Optional[AtomicOp]:
    """Decode an atomic API function name; None if it is not an operation.

    Ordering variants (_relaxed, _acquire, _release) share their base's
    semantics; atomic_read_acquire and atomic_set_release are bases of
    their own, atomic_cond_read_acquire is cond_read.
    """
    m = _NAME_RE.match(name)
    if not m:
        return None
    rest = m.group("rest")
    if rest not in OPS:
        rest = _ORDER_RE.sub("", rest)
        if rest not in OPS:
            return None
    sem = OPS[rest]
    return AtomicOp(name, m.group("width") or "", rest, sem.counter_last,
                    sem.effect)


def effect_of(op: AtomicOp, args: list[str]) -> Effect:
    """The direction of one call, from its arguments: a negative amount
    reverses an add or a sub; an exchange whose new value is "old +/- k"
    is an increase or a decrease."""
    sem = op.semantics
    if sem.operand is None or sem.operand >= len(args) or \
            (not sem.counter_last and len(args) < 2):
        return sem.effect
    operand = args[sem.operand].strip()
    if sem.effect in (Effect.INCREASE, Effect.DECREASE):
        if _NEGATIVE.match(operand):
            return _D if sem.effect is _I else _I
        return sem.effect
    if sem.effect is Effect.EXCHANGE:
        m = _STEP.match(operand)
        if m:
            return _I if m.group(1) == "+" else _D
    return sem.effect


def is_constant(expr: str) -> bool:
    """Whether EXPR is a constant the code spells out (a literal, an
    upper-case macro, true or false)."""
    return bool(_CONSTANT.match(expr.replace(" ", "")))


def constant_operand(op: AtomicOp, args: list[str]) -> bool:
    """Whether this call moves the counter by, or sets it to, a constant:
    true for the operations without an amount (inc, dec, read); false
    when the amount or new value is computed, so that its sign or size is
    not in sight."""
    sem = op.semantics
    if sem.operand is None:
        return True
    if sem.operand >= len(args):
        return False
    return is_constant(args[sem.operand])


def signed_amount(op: AtomicOp, args: list[str]) -> bool:
    """Whether the amount OP adds or subtracts is a difference
    ("new - old", "len - hdr"), whose sign the code does not show."""
    sem = op.semantics
    if sem.effect not in (Effect.INCREASE, Effect.DECREASE) or \
            sem.operand is None or sem.operand >= len(args):
        return False
    return _has_binary_minus(args[sem.operand])


def _has_binary_minus(expr: str) -> bool:
    """A subtraction at the top level of EXPR, outer parentheses aside
    (not "-x", "a->b", "i--", "f(a - b)")."""
    expr = expr.strip()
    while expr.startswith("(") and _closes_at_end(expr):
        expr = expr[1:-1].strip()
    depth = 0
    prev = ""
    for i, ch in enumerate(expr):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "-" and depth == 0 and prev and \
                (prev.isalnum() or prev in "_)]") and \
                expr[i + 1:i + 2] not in (">", "-", "="):
            return True
        if not ch.isspace():
            prev = ch
    return False


def _closes_at_end(expr: str) -> bool:
    """Whether the "(" EXPR starts with is closed by its last character."""
    depth = 0
    for i, ch in enumerate(expr):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            return i == len(expr) - 1
    return False


def refine(op: AtomicOp, args: list[str]) -> AtomicOp:
    """OP with its effect for one call with ARGS."""
    return op._replace(effect=effect_of(op, args))


def split_args(args: str) -> list[str]:
    """Split a C argument list at top-level commas."""
    out: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in args:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    if last or out:
        out.append(last)
    return out


def counter_arg(op: AtomicOp, args: list[str]) -> Optional[str]:
    """The argument that names the counter, or None if there is none."""
    if not args:
        return None
    return args[-1] if op.counter_last else args[0]
