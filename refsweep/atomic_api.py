# SPDX-License-Identifier: GPL-2.0-only
"""The kernel atomic API: which names are operations, and what each one does.

One table serves the lexical pass, the spatch records and the classifier,
so that "is this an atomic operation, which argument is the counter, does it
return a value, is it a zero test" is decided in exactly one place.
"""

import re
from typing import NamedTuple, Optional

ATOMIC_TYPES = ("atomic_t", "atomic64_t", "atomic_long_t")

# Operations whose counter argument is the last one (the new-style API puts
# the operand first: atomic_add(i, v)).
_COUNTER_LAST = {
    "add", "sub", "and", "or", "xor", "andnot",
    "add_return", "sub_return", "fetch_add", "fetch_sub", "fetch_and",
    "fetch_or", "fetch_xor", "fetch_andnot", "sub_and_test", "add_negative",
}

# Operations that return nothing.
_VOID = {"set", "inc", "dec", "add", "sub", "and", "or", "xor", "andnot"}

# Arithmetic that moves the counter (as opposed to set/xchg/cmpxchg/bits).
_INCREASE = {"inc", "add", "inc_return", "add_return", "fetch_inc", "fetch_add"}
_DECREASE = {"dec", "sub", "dec_return", "sub_return", "fetch_dec", "fetch_sub"}

# Operations that test for zero (or guard against it) by themselves.
ZERO_TESTS = {
    "dec_and_test", "inc_and_test", "sub_and_test", "add_negative",
    "inc_not_zero", "add_unless", "fetch_add_unless", "dec_if_positive",
    "inc_unless_negative", "dec_unless_positive", "dec_and_lock",
    "dec_and_lock_irqsave", "dec_and_raw_lock", "dec_and_raw_lock_irqsave",
    "dec_and_mutex_lock",
}

_BASES = (
    _VOID | _INCREASE | _DECREASE | ZERO_TESTS | {
        "read", "read_acquire", "set_release", "xchg", "cmpxchg",
        "try_cmpxchg", "fetch_and", "fetch_or", "fetch_xor", "fetch_andnot",
    }
)

_NAME_RE = re.compile(
    r"^(?:raw_|arch_)?atomic(?P<width>64|_long)?_(?P<rest>[a-z0-9_]+)$")
_ORDER_RE = re.compile(r"_(relaxed|acquire|release)$")


class AtomicOp(NamedTuple):
    """One atomic API function, decoded."""
    name: str
    width: str          # "", "64" or "_long"
    base: str           # e.g. "dec_and_test", ordering suffix removed
    counter_last: bool  # counter is the last argument, else the first

    @property
    def returns_value(self) -> bool:
        return self.base not in _VOID

    @property
    def is_zero_test(self) -> bool:
        return self.base in ZERO_TESTS

    @property
    def increases(self) -> bool:
        return self.base in _INCREASE

    @property
    def decreases(self) -> bool:
        return self.base in _DECREASE

    @property
    def is_read(self) -> bool:
        return self.base in ("read", "read_acquire")

    @property
    def is_state_write(self) -> bool:
        return self.base in ("set", "set_release", "xchg", "cmpxchg",
                             "try_cmpxchg")


def decode(name: str) -> Optional[AtomicOp]:
    """Decode an atomic API function name; None if it is not an operation."""
    m = _NAME_RE.match(name)
    if not m:
        return None
    rest = m.group("rest")
    if rest not in _BASES:
        stripped = _ORDER_RE.sub("", rest)
        if stripped not in _BASES or stripped in ("read", "set"):
            # atomic_read_acquire/atomic_set_release are their own bases.
            if stripped not in _BASES:
                return None
        rest = stripped
    return AtomicOp(name, m.group("width") or "", rest, rest in _COUNTER_LAST)


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
