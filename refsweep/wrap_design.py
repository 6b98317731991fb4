# SPDX-License-Identifier: GPL-2.0-only
"""Signs that a counter wraps on purpose.

A checked atomic saturates or traps where such a counter is meant to pass
INT_MAX (or LONG_MAX) and go on: percpu_ref biases its count by LONG_MIN,
IP ident buckets start at random values and add across the wrap,
sequence numbers are compared with ``(s32)(a - b) < 0``.  Each sign found
becomes one short line of ``wrap_evidence`` ("adds bias LONG_MIN at
lib/percpu-refcount.c:250"); a variable with any is flagged
``wrap_by_design``: it keeps its verdict, and convert and the reports
treat it as "must be unchecked; needs a human look".

Only exact evidence counts (an operation attributed to this variable
alone, not ambiguous or weak), because a flag takes the counter out of
the checked set.  The signs (Documentation/classification.rst,
"Wrap by design"):

- an add, subtract or set whose operand has a term near INT_MIN or
  LONG_MIN (the tree's own ``#define``s expanded): a bias;
- a random value set or added (``get_random_*()``, ``prandom_*()``,
  also through a local), or random bytes written over the counter;
- the result of an increasing ``*_return``/``fetch_*`` reduced modulo,
  masked, or truncated to 8 or 16 bits;
- the value in a signed-difference ordering comparison
  (``(s32)(a - b) < 0``) or a wrap-aware comparison macro
  (``time_after()``, ``before()``);
- a comment at the declaration or the operation saying that it may wrap
  or overflow, without a negation.
"""

import re
from pathlib import Path
from typing import Any, NamedTuple, Optional

from refsweep import atomic_api, lexical, wrap_flow
from refsweep.atomic_api import AtomicOp, Effect
from refsweep.records import Evidence, Use, Variable
from refsweep.sources import Sources, call_args

Record = dict[str, Any]

_ADDS = {"add", "sub", "add_return", "sub_return", "fetch_add", "fetch_sub",
         "set", "set_release", "add_negative", "sub_and_test", "add_unless",
         "fetch_add_unless", "xchg"}
# A random start (set), or a random step in a value handed out (the IP ID
# buckets): a random amount taken off a budget is no sign.
_RANDOM_START = {"set", "set_release", "xchg", "add_return", "fetch_add"}
_RETURNS_NEW = {"inc_return", "add_return", "fetch_inc", "fetch_add"}
_RANDOM = re.compile(r"\b(get_random_\w+|prandom_\w+|random32|"
                     r"get_random_bytes\w*)\s*\(")
_SIGNED_CAST = (r"\(\s*(?:s8|s16|s32|s64|__s8|__s16|__s32|__s64|int|long|"
                r"long\s+long|signed\s+(?:int|long|char|short))\s*\)")
_WRAP_COMPARE = re.compile(
    r"\b(time_(?:after|before)(?:_eq)?(?:64)?|time_in_range\w*|"
    r"before(?:32|64)?|after(?:32|64)?|seq_(?:lt|gt|le|ge|before|after)|"
    r"\w*(?:seq|time|gen|serial|ts|id)\w*_(?:before|after|lt|gt)(?:_eq)?)"
    r"\s*\(")
_COMMENT_WRAP = re.compile(
    r"\b(?:(?:may|can|will|might|could|does|is\s+allowed\s+to|are\s+allowed"
    r"\s+to|expected\s+to|designed\s+to|meant\s+to|supposed\s+to|ok\s+to|"
    r"okay\s+to|fine\s+to|allowed\s+to|safe\s+to|going\s+to|eventually)\s+"
    r"(?:wrap|overflow|roll\s*over)|wraps?\s+around\s+(?:is|are)\s+"
    r"(?:fine|ok|okay|expected|intended|harmless|handled)|"
    r"wrap-?around\s+is\s+(?:fine|ok|okay|expected|intended|harmless)|"
    r"(?:overflow|wrap)\s+is\s+(?:fine|ok|okay|expected|intended|harmless)|"
    r"don'?t\s+care\s+(?:about|if\s+it)\s+(?:wrap|overflow)|"
    r"wraps?\s+(?:safely|harmlessly))", re.I)
_NEGATION = re.compile(r"\b(not|never|cannot|can't|won't|mustn't|avoid\w*|"
                       r"prevent\w*|unless|before\s+it|nor|no\s+way)\b",
                       re.I)
_KNOWN = {"INT_MIN": -2**31, "INT_MAX": 2**31 - 1, "S32_MIN": -2**31,
          "S32_MAX": 2**31 - 1, "U32_MAX": 2**32 - 1, "UINT_MAX": 2**32 - 1,
          "LONG_MIN": -2**63, "LONG_MAX": 2**63 - 1, "LLONG_MIN": -2**63,
          "LLONG_MAX": 2**63 - 1, "S64_MIN": -2**63, "S64_MAX": 2**63 - 1,
          "ULONG_MAX": 2**64 - 1, "BITS_PER_LONG": 64,
          "BITS_PER_LONG_LONG": 64, "BITS_PER_TYPE": None}
_CAST = re.compile(r"\(\s*(?:(?:unsigned|signed|const)\s+)*(?:long\s+long|"
                   r"long|int|short|char|u8|u16|u32|u64|s8|s16|s32|s64|"
                   r"__u32|__u64|__s32|__s64|size_t)?\s*\)")
# Names of constants looked up in the tree's headers (others are taken
# from the operation's own file only): what a bias is called.
_BIAS_NAME = re.compile(r"BIAS|MIN|WRAP|OFFSET|BASE|START|INIT|SIGN|TOP")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Z_][A-Z0-9_]*)[ \t]+"
                     r"([^\n\\]+)$", re.M)


def near_min(value: int) -> Optional[str]:
    """"INT_MIN" if VALUE is within 2^24 of -2^31 or in [2^31, 2^31 +
    2^24]; "LONG_MIN" the same for 63 bits and 2^56."""
    # INT_MIN itself, or its unsigned image 2^31 (1U << 31); INT_MAX, a
    # "no limit" value, is no bias.
    for name, bits, slack in (("INT_MIN", 31, 2**24),
                              ("LONG_MIN", 63, 2**56)):
        if 2**bits <= value <= 2**bits + slack or \
                -2**bits - slack <= value <= -2**bits + slack:
            return name
    return None


def evaluate(expr: str, defines: dict[str, str], depth: int = 0
             ) -> Optional[int]:
    """The value of a constant C expression, or None."""
    if depth > 6:
        return None
    expr = re.sub(r"\bBIT(?:_ULL)?\s*\(", "(1<<", expr)
    expr = _CAST.sub("", expr)

    def name(m: "re.Match[str]") -> str:
        word = m.group(0)
        if word in _KNOWN and _KNOWN[word] is not None:
            return f"({_KNOWN[word]})"
        if word in defines:
            value = evaluate(defines[word], defines, depth + 1)
            if value is not None:
                return f"({value})"
        return word

    expr = re.sub(r"\b0[xX][0-9a-fA-F]+[uUlL]*\b|\b\d+[uUlL]*\b",
                  lambda m: str(int(m.group(0).rstrip("uUlL"), 0)), expr)
    expr = re.sub(r"\b[A-Za-z_]\w*\b", name, expr)
    if not re.fullmatch(r"[\d\s()+\-*/<>~|&%^]+", expr) or not expr.strip():
        return None
    try:
        value = eval(expr.replace("/", "//"),  # noqa: S307 (digits only)
                     {"__builtins__": {}}, {})
    except (SyntaxError, ValueError, ZeroDivisionError, TypeError,
            OverflowError, MemoryError):
        return None
    return value if isinstance(value, int) else None


def terms(expr: str) -> list[str]:
    """Top-level '+'/'-' terms of EXPR."""
    out, depth, cur = [], 0, ""
    for ch in expr:
        depth += ch == "("
        depth -= ch == ")"
        if ch in "+-" and depth == 0 and cur.strip() and \
                not re.search(r"[<>*/(]\s*$", cur):
            out.append(cur)
            cur = ""
            continue
        cur += ch
    out.append(cur)
    return [t.strip() for t in out if t.strip()]


class Finder:
    """Wrap-by-design signs for the variables of one run."""

    def __init__(self, sources: Sources, tree: Optional[Path]) -> None:
        self.sources = sources
        self.tree = tree
        self.defines: dict[str, dict[str, str]] = {}
        self.tree_defines: dict[str, str] = {}
        self.merged: dict[str, dict[str, str]] = {}

    def file_defines(self, path: str) -> dict[str, str]:
        if path not in self.defines:
            self.defines[path] = {m.group(1): m.group(2).strip() for m in
                                  _DEFINE.finditer(self.sources.code(path))}
        return self.defines[path]

    def learn_defines(self, names: set[str]) -> None:
        """Object-like #defines of NAMES anywhere in the tree."""
        todo = sorted(n for n in names if n not in self.tree_defines
                      and n not in _KNOWN and _BIAS_NAME.search(n))
        for _path, _line, text in self.sources.grep_lines(todo, ("*.h",)):
            m = _DEFINE.match(text.rstrip("\n"))
            if m and m.group(1) in names:
                self.tree_defines.setdefault(m.group(1), m.group(2).strip())
        self.merged.clear()

    def constants(self, path: str) -> dict[str, str]:
        """The tree's bias #defines, PATH's own taking precedence."""
        if path not in self.merged:
            self.merged[path] = {**self.tree_defines,
                                 **self.file_defines(path)}
        return self.merged[path]

    def op_call(self, path: str, line: int, op: str
                ) -> Optional[tuple[int, int, list[str]]]:
        """(start, close, args) of the call of OP on LINE of PATH."""
        code = self.sources.code(path)
        start = self.sources.offset(path, line)
        end = code.find("\n", start)
        m = re.compile(r"\b" + re.escape(op) + r"\s*\(").search(
            code, start, end if end >= 0 else len(code))
        if not m:
            return None
        args = call_args(code, m.end() - 1)
        if args is None:
            return None
        close = lexical.matching_paren(code, m.end() - 1)
        return m.start(), close, args

    def function_text(self, path: str, line: int,
                      spans: list[tuple[str, int, int]]) -> tuple[str, int]:
        for _n, start, end in spans:
            if start <= line <= end:
                return self.sources.lines(path, start, end), start
        return "", line

    def operand_sources(self, path: str, line: int, operand: str,
                        spans: list[tuple[str, int, int]]) -> list[str]:
        """OPERAND and what its plain locals were assigned before LINE."""
        out = [operand]
        body, first = self.function_text(path, line, spans)
        if not body:
            return out
        upto = body[:self.sources.offset(path, line) -
                    self.sources.offset(path, first)]
        for word in set(re.findall(r"\b[a-z_]\w*\b", operand)):
            for m in re.finditer(r"\b" + re.escape(word) +
                                 r"\s*(?:[-+|]?=)(?!=)\s*([^;]+);", upto):
                out.append(m.group(1))
        return out

    def signs_of_op(self, ev: Evidence,
                    spans: dict[str, list[tuple[str, int, int]]],
                    monotonic: bool = True) -> list[str]:
        """Signs in one operation.  MONOTONIC: the variable is never
        decremented; a masked or ordered value of a count that also goes
        down is a packed field or a level, not a wrapping sequence."""
        path, _sep, lno = ev.at.rpartition(":")
        line = int(lno)
        op = atomic_api.decode(ev.op)
        if op is None or not monotonic and op.base not in _ADDS:
            return []       # every sign below needs one or the other
        found = self.op_call(path, line, ev.op)
        if op is None or found is None:
            return []
        start, close, args = found
        where = f"{path}:{line}"
        out = []
        code = self.sources.code(path)
        counter = atomic_api.counter_arg(op, args)
        operands = [a for a in args if a is not counter]
        fspans = spans.get(path, [])
        if op.base in _ADDS and operands:
            for src in self.operand_sources(path, line, operands[0],
                                            fspans):
                for t in terms(src):
                    value = evaluate(t, self.constants(path))
                    which = near_min(value) if value is not None else None
                    if which:
                        out.append(f"adds bias {which} ({t.strip()}) at "
                                   f"{where}")
                if op.base in _RANDOM_START and _RANDOM.search(src):
                    out.append(f"{op.base} of a random value at {where}")
        if op.base in _RETURNS_NEW and close > 0 and monotonic:
            after = code[close + 1:close + 40]
            before = code[max(0, start - 40):start]
            if re.match(r"\s*\)*\s*(%|&(?!&))", after):
                out.append(f"{op.base} result reduced modulo/masked at "
                           f"{where}")
            elif re.search(r"\(\s*(?:u8|u16|__u8|__u16|__be16|unsigned\s+"
                           r"short|unsigned\s+char)\s*\)\s*\(*\s*$", before):
                out.append(f"{op.base} result truncated at {where}")
        if close > 0 and monotonic and self._ordered(code, start, close):
            out.append(f"{op.base} value in a wrap-aware ordering "
                       f"comparison at {where}")
        return out

    def _ordered(self, code: str, start: int, close: int) -> bool:
        """Is the call at START..CLOSE inside "(s32)(... - ...) < 0" or an
        argument of a wrap-aware comparison macro?"""
        window_start = max(0, start - 200)
        before = code[window_start:start]
        stmt = max(before.rfind(";"), before.rfind("{"), before.rfind("}"))
        before = before[stmt + 1:]
        base = window_start + stmt + 1
        for m in re.finditer(_SIGNED_CAST + r"\s*\(", before):
            open_at = base + m.end() - 1
            end = lexical.matching_paren(code, open_at)
            if end > close and "-" in code[open_at:end] and \
                    re.match(r"\s*[<>]", code[end + 1:end + 10]):
                return True
        for m in _WRAP_COMPARE.finditer(before):
            open_at = base + m.end() - 1
            end = lexical.matching_paren(code, open_at)
            if end > close:
                return True
        return False

    def comment_signs(self, path: str, line: int, what: str) -> list[str]:
        """A comment that belongs to LINE (on it, or the block of comment
        lines right above it) saying that it may wrap."""
        if not self.sources.commented(path, line) and \
                not self.sources.commented(path, line - 1):
            return []       # no comment on the line or right above it
        first = max(line - 8, 1)
        raw = self.sources.raw_lines(path, first, line)
        code = self.sources.lines(path, first, line).split("\n")
        pairs = list(zip(raw, code))
        if not pairs:
            return []
        block = [pairs[-1][0]] if pairs[-1][0] != pairs[-1][1] else []
        for r, c in reversed(pairs[:-1]):
            if c.strip() or r == c:
                break           # code, or a line without a comment
            block.insert(0, r)
        comment = " ".join(" ".join(r.split()) for r in block)
        for m in _COMMENT_WRAP.finditer(comment):
            lead = comment[max(0, m.start() - 40):m.start()]
            if _NEGATION.search(lead + m.group(0)):
                continue
            return [f"comment \"{m.group(0)}\" at {what} {path}:{line}"]
        return []


def _random_fill(finder: Finder, path: str, spans: list[tuple[str, int,
                                                                int]],
                 index: Any, near: frozenset[str]) -> list[tuple[str, str]]:
    """(key, sign) for "get_random_bytes(ptr, size)" over a counter."""
    code = finder.sources.code(path)
    out = []
    for m in re.finditer(r"\bget_random_bytes\w*\s*\(", code):
        args = call_args(code, m.end() - 1)
        if not args:
            continue
        line = code.count("\n", 0, m.start()) + 1
        fn = None
        for name, start, end in spans:
            if start <= line <= end:
                fn = name
        keys, ambiguous = index.resolve(path, fn, args[0], None)
        # The only atomic member of that name need not be the one filled:
        # its declaration must be in this file or a header it includes.
        if len(keys) == 1 and not ambiguous and \
                index.decl_paths[keys[0]] & near:
            out.append((keys[0], f"random bytes written over it at "
                                 f"{path}:{line}"))
    return out


def _all_ones(value: Optional[int]) -> bool:
    """-1, ~0, or its unsigned image in 32 or 64 bits."""
    return value in (-1, 2**32 - 1, 2**64 - 1)


# Operations whose result is the counter's value (new, old or current),
# where the value flow starts.
_VALUE_EFFECTS = (Effect.READ, Effect.INCREASE)


# The operations whose result may be the counter's value (_value_op
# decides with the call's arguments).
_VALUE_BASES = frozenset(
    base for base, sem in atomic_api.OPS.items()
    if sem.returns and not sem.zero_test and "xchg" not in base and
    sem.effect in (Effect.READ, Effect.INCREASE))


def _value_op(op: AtomicOp) -> bool:
    """OP's result is the counter's value, and not the old value of an
    exchange (compared with the expected one, it says whether the
    exchange happened)."""
    return op.returns_value and not op.is_zero_test and \
        op.effect in _VALUE_EFFECTS and "xchg" not in op.base


class _Start(NamedTuple):
    """Where one operation's value starts: the evidence, its decoded
    operation and the site of the call."""
    ev: Evidence
    op: AtomicOp
    site: wrap_flow.Site


def _free_running(finder: Finder, var: Variable, exact: list[Evidence]
                  ) -> bool:
    """Counted up only: at least one exact increase, no decrease and no
    bit operation in its own or ambiguous evidence, no exact escape (code
    out of sight could count it down), and no increase by an amount that
    is a difference ("atomic_add(new - old, &v)", sign unknown).  The
    value-flow signs are read only for such a counter: a masked or
    compared value of a count that also goes down is a packed field or a
    level."""
    own = [e for e in var.evidence if not e.weak]
    if not any(e.effect is Effect.INCREASE for e in exact) or \
            any(e.effect in (Effect.DECREASE, Effect.BITS) for e in own) or \
            any(e.use is Use.ESCAPE and not e.ambiguous for e in own) or \
            any(e.effect in (Effect.SET, Effect.EXCHANGE) and
                not _constant_write(finder, e) for e in own):
        # A set or exchange to a computed value may lower it (a decay,
        # "cmpxchg(v, old, old > n ? old - n : 0)").
        return False
    for e in exact:
        if e.effect is not Effect.INCREASE or e.constant:
            continue            # no amount, or a constant one
        op = atomic_api.decode(e.op)
        path, _s, lno = e.at.rpartition(":")
        found = finder.op_call(path, int(lno), e.op)
        if op is None or found is not None and \
                atomic_api.signed_amount(op, found[2]):
            return False
    return True


def _constant_write(finder: Finder, e: Evidence) -> bool:
    """E sets or exchanges the counter to a constant: one the code spells
    out, or an expression of constants ("~0U", "-1", "1 << 4")."""
    if e.constant:
        return True
    op = atomic_api.decode(e.op)
    path, _s, lno = e.at.rpartition(":")
    found = finder.op_call(path, int(lno), e.op) if op else None
    if op is None or found is None:
        return False
    sem = op.semantics
    args = found[2]
    if sem.operand is None or sem.operand >= len(args):
        return False
    return evaluate(args[sem.operand], finder.constants(path)) is not None


def _start_of(finder: Finder, flow: wrap_flow.Flow, e: Evidence
              ) -> Optional[_Start]:
    op = atomic_api.decode(e.op)
    if op is None:
        return None
    path, _s, lno = e.at.rpartition(":")
    found = finder.op_call(path, int(lno), e.op)
    if found is None:
        return None
    op = atomic_api.refine(op, found[2])
    if not _value_op(op):
        return None
    site = flow.site(path, found[0], found[1] + 1, "")
    return _Start(e, op, site) if site is not None else None


def _via(s: wrap_flow.Site) -> str:
    return f" ({s.via})" if s.via else ""


def flow_signs(finder: Finder, flow: wrap_flow.Flow,
               starts: list[_Start], evidence: list[Evidence]) -> list[str]:
    """Signs in where the values of STARTS go (wrap_flow): reduced,
    truncated, a difference compared with a bound, an ordering macro, an
    equality with a stored copy of the value.  Signs at the operation
    itself that signs_of_op reads already are left out.

    The equality sign marks a generation number, whose values are only
    ever compared for (in)equality: one whose values are also ordered
    ("cap->gen < atomic_read(&s->gen)", a limit) relies on never
    wrapping, and gets none.  EVIDENCE is the variable's own."""
    out: list[str] = []
    stores_m: set[str] = set()
    stores_l: dict[tuple[str, Optional[str], str], set[int]] = {}
    equalities: list[tuple[_Start, wrap_flow.Use]] = []
    ordered = any(e.use is Use.LIMIT for e in evidence if not e.weak)
    for st in starts:
        for s in flow.sites(st.site):
            code = finder.sources.code(s.path)
            first = not s.via
            for u in flow.uses(s):
                where = f"{st.op.base} at {st.ev.at}"
                if u.kind == "store":
                    if u.detail.startswith("->"):
                        stores_m.add(u.detail)
                    else:
                        stores_l.setdefault((s.path, s.func, u.detail),
                                            set()).add(s.start)
                elif u.kind == "equality":
                    equalities.append((st, u))
                elif u.kind == "relational":
                    ordered = True
                elif u.kind in ("reduced", "truncated") and first and \
                        st.op.base in _RETURNS_NEW and \
                        not u.detail.startswith(("masked by", "kept in")):
                    continue            # signs_of_op has it
                elif u.kind == "reduced":
                    out.append(f"{where}: value {u.detail} at {u.at}"
                               f"{_via(s)}")
                elif u.kind == "truncated":
                    out.append(f"{where}: value truncated, {u.detail}, at "
                               f"{u.at}{_via(s)}")
                elif u.kind == "difference":
                    out.append(f"{where}: {u.detail} at {u.at}{_via(s)}")
            if not first and finder._ordered(code, s.start, s.end - 1):
                out.append(f"{st.op.base} at {st.ev.at}: value in a "
                           f"wrap-aware ordering comparison at "
                           f"{s.path}:{s.line}{_via(s)}")
    if ordered:
        return out
    for st, u in equalities:
        other = u.detail
        member = wrap_flow.member_of(other)
        s = u.site
        local = (s.path, s.func, other)
        if member and member in stores_m or wrap_flow.is_plain(other) and \
                local in stores_l and flow.only_assigned_at(
                    s, other, stores_l[local]):
            out.append(f"{st.op.base} at {st.ev.at}: value compared for "
                       f"equality with a stored copy ({other}) at "
                       f"{u.at}{_via(s)}")
    return out


def find(variables: dict[str, Variable], files: list[Record], sources: Sources,
         tree: Optional[Path], index: Any) -> int:
    """Set wrap_evidence on VARIABLES; returns how many are flagged."""
    finder = Finder(sources, tree)
    spans = {f["path"]: [(n, int(s), int(e))
                         for n, s, e in f.get("functions", [])]
             for f in files}
    flow = wrap_flow.Flow(sources, dict(spans),
                          {f["path"]: list(f.get("includes", []))
                           for f in files})
    exact: dict[str, list[Evidence]] = {}
    names: set[str] = set()
    for key, var in variables.items():
        evs = [e for e in var.evidence if not e.ambiguous
               and not e.weak and e.use is not Use.ESCAPE]
        exact[key] = evs
        for e in evs:
            if e.base in _ADDS - {"set", "set_release", "xchg"}:
                path, _s, lno = e.at.rpartition(":")
                local = finder.file_defines(path)
                names.update(n for n in re.findall(
                    r"\b[A-Z][A-Z0-9_]{2,}\b", sources.lines(
                        path, int(lno), int(lno))) if n not in local)
    finder.learn_defines(names)
    # The counters that only count up, and where their values start;
    # the getters among the functions their values reach are looked up
    # with one grep for all.
    starts: dict[str, list[_Start]] = {}
    for key, var in variables.items():
        if not any(e.base in _VALUE_BASES for e in exact[key]) or \
                not _free_running(finder, var, exact[key]):
            continue
        starts[key] = [s for s in (_start_of(finder, flow, e)
                                   for e in exact[key]) if s is not None]
    flow.learn_wanted([st.site for found in starts.values()
                       for st in found])
    for key, var in variables.items():
        signs: list[str] = []
        monotonic = not any(e.effect is Effect.DECREASE
                            for e in var.evidence if not e.weak)
        for e in exact[key]:
            signs.extend(finder.signs_of_op(e, spans, monotonic))
        if key in starts:
            signs.extend(flow_signs(finder, flow, starts[key],
                                    var.evidence))
            signs.extend(_all_ones_start(finder, exact[key], starts[key]))
        for at in var.decls:
            path, _s, lno = at.rpartition(":")
            signs.extend(finder.comment_signs(path, int(lno),
                                              "the declaration"))
        for e in exact[key]:
            path, _s, lno = e.at.rpartition(":")
            if e.via is None:
                signs.extend(finder.comment_signs(path, int(lno),
                                                  "the operation"))
        var.wrap_evidence = list(dict.fromkeys(signs))
        var.wrap_by_design = bool(var.wrap_evidence)
    for f in files:
        if "get_random_bytes" in sources.raw(f["path"]) and \
                "get_random_bytes" in sources.code(f["path"]):
            near = frozenset({f["path"], *f.get("includes", [])})
            for key, sign in _random_fill(finder, f["path"],
                                          spans[f["path"]], index, near):
                if sign not in variables[key].wrap_evidence:
                    variables[key].wrap_evidence.append(sign)
                    variables[key].wrap_by_design = True
    return sum(1 for v in variables.values() if v.wrap_evidence)


def _all_ones_start(finder: Finder, exact: list[Evidence],
                    starts: list[_Start]) -> list[str]:
    """A counter that only counts up, is set to ~0 (-1, UINT_MAX) and
    hands out its new values ("atomic_set(&log->cur, ~0U)", then
    "atomic_inc_return(&log->cur)"): the first value taken is 0, an
    unsigned sequence that runs on past INT_MAX."""
    if not any(st.op.base in _RETURNS_NEW for st in starts):
        return []
    out = []
    for e in exact:
        if e.base not in ("set", "set_release", "xchg"):
            continue
        path, _s, lno = e.at.rpartition(":")
        found = finder.op_call(path, int(lno), e.op)
        op = atomic_api.decode(e.op)
        if found is None or op is None:
            continue
        counter = atomic_api.counter_arg(op, found[2])
        operands = [a for a in found[2] if a is not counter]
        if operands and _all_ones(evaluate(operands[0],
                                           finder.constants(path))):
            out.append(f"{e.base} to {operands[0].strip()} (all ones) at "
                       f"{e.at}, then counted up and its new values "
                       f"taken: an unsigned sequence from 0")
    return out
