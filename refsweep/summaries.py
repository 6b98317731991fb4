# SPDX-License-Identifier: GPL-2.0-only
"""Whole-tree summaries of functions that take a pointer to an atomic.

For every function with an ``atomic_t *`` (``atomic64_t *``,
``atomic_long_t *``) parameter: what it does to the pointee, directly and
through any number of helper levels, in any file.  A summary is a list of
evidence records (the operations on the parameter, with their uses, as the
evidence stage judged them inside the helper), plus an ``escape`` for every
call that passes the pointer to a function that is not itself summarised:
what happens there is unseen, so the pointee cannot be wrap-safe.

Summaries are applied at call sites by resolve.py.  See
Documentation/classification.rst, "Helpers, macros and pointers".
"""

import dataclasses
import re
from typing import AbstractSet, Any, Callable, NamedTuple, Optional

from refsweep import atomic_api, lexical
from refsweep.atomic_api import Effect
from refsweep.records import Evidence, Use
from refsweep.sources import Sources, calls_in, strip_expr

Record = dict[str, Any]

# Calls that take the pointer without doing anything to the count, or
# that turn it into the containing object (members are resolved by name).
_TRANSPARENT = re.compile(
    r"^(sizeof|typeof|__typeof__|offsetof|container_of\w*|READ_ONCE|"
    r"WRITE_ONCE|prefetch\w*|BUILD_BUG_ON\w*|likely|unlikely|"
    r"lockdep_\w+|kasan_\w+|kcsan_\w+|instrument_\w+|__chk_\w+|"
    r"pr_\w+|printk\w*|dev_(dbg|info|warn|err)\w*|trace_\w+|WARN\w*|"
    r"BUG_ON|VM_BUG_ON\w*|if|while|for|switch|return)$")


class HelperDef(NamedTuple):
    """One definition of a helper and one of its atomic pointer params."""
    name: str
    path: str
    position: int
    param: str


HelperKey = tuple[str, str, int]      # (path, name, index)


class Summaries:
    """Helper definitions, their direct evidence and their pass-ons."""

    def __init__(self, files: list[Record], sources: Sources,
                 sees: Callable[[str], AbstractSet[str]],
                 macro_names: frozenset[str] = frozenset()) -> None:
        self.sources = sources
        self.sees = sees
        self.defs: dict[str, list[HelperDef]] = {}
        self.direct: dict[HelperKey, list[Evidence]] = {}
        self.edges: dict[HelperKey, list[tuple[str, int, str]]] = {}
        self.spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
        self._memo: dict[HelperKey, list[Evidence]] = {}
        for f in files:
            for name, start, end in f.get("functions", []):
                self.spans.setdefault((f["path"], name), []).append(
                    (int(start), int(end)))
            for h in f.get("helpers", []):
                if atomic_api.decode(h["function"]) is not None:
                    continue        # the atomic API itself
                d = HelperDef(h["function"], f["path"], int(h["index"]),
                              h["param"])
                if d not in self.defs.get(d.name, []):
                    self.defs.setdefault(d.name, []).append(d)
        self.macro_names = macro_names

    def param_of(self, path: str, function: Optional[str],
                 counter: str) -> Optional[int]:
        """Index of the helper parameter COUNTER names, if it does."""
        if not function or function not in self.defs:
            return None
        if re.match(r"^&\s*\w+\s*\[", counter):
            counter = counter[1:counter.index("[")]    # &p[i]: an element
        elif counter.startswith("&"):
            return None
        name = strip_expr(counter)
        for d in self.defs[function]:
            if d.path == path and d.param == name:
                return d.position
        return None

    def add_direct(self, path: str, function: str, index: int,
                   ev: Evidence) -> None:
        self.direct.setdefault((path, function, index), []).append(ev)

    def find_edges(self) -> None:
        """Calls inside helper bodies passing the parameter on."""
        for name, defs in self.defs.items():
            for d in defs:
                for start, end in self.spans.get((d.path, name), []):
                    self._edges_in(d, start, end)

    def _edges_in(self, d: HelperDef, start: int, end: int) -> None:
        body = self.sources.lines(d.path, start, end)
        key = (d.path, d.name, d.position)
        for callee, at, args in calls_in(body):
            if atomic_api.decode(callee) is not None or \
                    callee in self.macro_names or \
                    _TRANSPARENT.match(callee):
                continue
            for k, arg in enumerate(args):
                if strip_expr(arg) != d.param:
                    continue
                lno = start + body.count("\n", 0, at)
                where = f"{d.path}:{lno}"
                if callee in self.defs:
                    self.edges.setdefault(key, []).append((callee, k, where))
                else:
                    self.direct.setdefault(key, []).append(Evidence(
                        op=f"{d.param} -> {callee}()", at=where,
                        function=d.name, use=Use.ESCAPE,
                        detail=f"pointer passed to {callee}()", parsed=True,
                        base="escape", effect=Effect.READ))

    def lookup(self, name: str, caller: str) -> tuple[list[HelperDef], bool]:
        """The definitions a call of NAME from file CALLER reaches, and
        whether that is ambiguous: the caller's own file first, then the
        headers it sees, then every definition."""
        defs = self.defs.get(name, [])
        pick = [d for d in defs if d.path == caller]
        if pick:
            return pick, False
        headers = [d for d in defs if d.path.endswith(".h")]
        if headers:
            # What CALLER sees costs a walk of the include graph: only
            # when a header defines the helper.
            sees = self.sees(caller)
            pick = [d for d in headers if d.path in sees]
            if pick:
                return pick, False
        global_defs = [d for d in defs if d.path.endswith(".c")] or defs
        return global_defs, len({d.path for d in global_defs}) > 1

    def effects(self, d: HelperDef) -> list[Evidence]:
        """Everything done to D's parameter, through every helper level."""
        return self._effects((d.path, d.name, d.position), set())

    def _effects(self, key: HelperKey, active: set[HelperKey]
                 ) -> list[Evidence]:
        if key in self._memo:
            return self._memo[key]
        if key in active:
            return []               # recursion: seen on the way down
        active.add(key)
        out = list(self.direct.get(key, []))
        for callee, index, where in self.edges.get(key, []):
            defs, ambiguous = self.lookup(callee, key[0])
            for d in defs:
                if d.position != index:
                    continue
                for ev in self._effects((d.path, d.name, d.position),
                                        active):
                    chain = f"{callee}() at {where}"
                    out.append(dataclasses.replace(
                        ev, ambiguous=ev.ambiguous or ambiguous,
                        via=chain + (", " + ev.via if ev.via else "")))
        active.discard(key)
        self._memo[key] = out
        return out


def function_at(spans: list[tuple[str, int, int]], line: int
                ) -> Optional[str]:
    for name, start, end in spans:
        if start <= line <= end:
            return name
    return None


def call_at(sources: Sources, path: str, line: int, name: str
            ) -> list[tuple[int, list[str]]]:
    """Calls of NAME starting on LINE of PATH: (offset, arguments)."""
    code = sources.code(path)
    start = sources.offset(path, line)
    end = code.find("\n", start)
    end = len(code) if end < 0 else end
    out = []
    for m in re.finditer(r"\b" + re.escape(name) + r"\s*\(",
                         code[start:end]):
        open_at = start + m.end() - 1
        close = lexical.matching_paren(code, open_at)
        if close < 0:
            continue
        out.append((start + m.start(),
                    atomic_api.split_args(code[open_at + 1:close])))
    return out
