# SPDX-License-Identifier: GPL-2.0-only
"""Atomic operations hidden behind the tree's own macros.

spatch does not see into macro bodies, and an operation in a body whose
counter is a macro parameter (``#define STAT_INC(s, f) atomic_inc(&(s)->f)``,
token pasting ``&st->name##_drops``) names no variable until the macro is
used.  This module expands such function-like macros lexically at every
use in the tree and hands resolve.py one operation record per use, as if
the body had been written there.  Object-like aliases of members
(``#define sk_drops __sk_common.skc_drops``) are looked up for member names
that name no atomic member.

The use of an expanded operation is judged conservatively from the text:
a zero test stays a zero test (a release call after it in the body makes
it a zero-release), a result-less operation or one whose macro is used as a
statement is a modification, anything else is an unjudged value.  See
Documentation/classification.rst, "Helpers, macros and pointers".
"""

import re
from pathlib import Path
from typing import Any, NamedTuple, Optional

from refsweep import atomic_api, evidence, lexical
from refsweep.sources import Sources, call_args

Record = dict[str, Any]

_DEFINE = re.compile(
    r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)]*)\)((?:[^\n]*\\\n)*"
    r"[^\n]*)", re.M)
_OP_CALL = re.compile(
    r"\b((?:raw_|arch_)?atomic(?:64|_long)?_[a-z0-9_]+)\s*\(")
_ALIAS_BODY = re.compile(r"^\(?\s*([A-Za-z_]\w*(?:\s*(?:\.|->)\s*\w+)*)"
                         r"\s*\)?$")
MAX_DEPTH = 3


class MacroDef(NamedTuple):
    """A function-like macro whose body operates on a parameter."""
    name: str
    params: tuple[str, ...]
    body: str
    path: str
    line: int


def _references(expr: str, params: tuple[str, ...]) -> bool:
    return any(re.search(r"(?<!\w)" + re.escape(p) + r"(?!\w)", expr)
               for p in params)


def parse_defines(path: str, code: str) -> list[MacroDef]:
    """Function-like macros of CODE with an atomic op on a parameter."""
    out = []
    for m in _DEFINE.finditer(code):
        params = tuple(p.strip() for p in m.group(2).split(",")
                       if p.strip())
        body = m.group(3).replace("\\\n", " ")
        if not params or "atomic" not in body:
            continue
        for op_m in _OP_CALL.finditer(body):
            op = atomic_api.decode(op_m.group(1))
            args = call_args(body, op_m.end() - 1)
            if op is None or args is None:
                continue
            counter = atomic_api.counter_arg(op, args)
            if counter and _references(counter, params):
                out.append(MacroDef(m.group(1), params, body, path,
                                    code.count("\n", 0, m.start()) + 1))
                break
    return out


_OP_ALIAS = re.compile(
    r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+"
    r"((?:raw_)?atomic(?:64|_long)?_[a-z0-9_]+)[ \t]*$", re.M)


def parse_op_aliases(path: str, code: str) -> list[MacroDef]:
    """Object-like macros that rename an atomic operation ("#define
    cifs_stats_inc atomic_inc"), as function-like macros passing every
    argument on."""
    out = []
    for m in _OP_ALIAS.finditer(code):
        if atomic_api.decode(m.group(2)) is None or \
                atomic_api.decode(m.group(1)) is not None:
            continue
        out.append(MacroDef(m.group(1), ("...",),
                            f"{m.group(2)}(__VA_ARGS__)", path,
                            code.count("\n", 0, m.start()) + 1))
    return out


def address_defines(path: str, code: str
                    ) -> list[tuple[MacroDef, list[str]]]:
    """Function-like macros of CODE whose body passes the address of
    something built from a parameter to a function, with the names of the
    functions it passes such an address to (which of them are helpers is
    known only once the whole tree is read)."""
    out = []
    for m in _DEFINE.finditer(code):
        params = tuple(p.strip() for p in m.group(2).split(",")
                       if p.strip())
        body = m.group(3).replace("\\\n", " ")
        if not params or "&" not in body or atomic_api.decode(m.group(1)):
            continue        # atomic_dec_and_lock() & co. are ops already
        callees = []
        for call in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", body):
            args = call_args(body, call.end() - 1)
            if args and any(a.lstrip().startswith("&") and
                            _references(a, params) for a in args):
                callees.append(call.group(1))
        if callees:
            out.append((MacroDef(m.group(1), params, body, path,
                                 code.count("\n", 0, m.start()) + 1),
                        sorted(set(callees))))
    return out


def helper_calls(body: str, helpers: frozenset[str]
                 ) -> list[tuple[str, list[str]]]:
    """(helper, arguments) of every call of one of HELPERS in BODY."""
    out = []
    for call in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", body):
        if call.group(1) in helpers:
            args = call_args(body, call.end() - 1)
            if args is not None:
                out.append((call.group(1), args))
    return out


def uses_of(tree: Optional[Path], sources: Sources,
            defs: list[MacroDef]) -> list[tuple[str, int, MacroDef,
                                                 list[str]]]:
    """(path, line, macro, arguments) of every use of DEFS in TREE, the
    #define lines themselves left out."""
    by_name = {d.name: d for d in defs}
    out: list[tuple[str, int, MacroDef, list[str]]] = []
    if not by_name:
        return out
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, by_name)) +
                         r")\s*\(")
    for path, line in sources.grep_words(sorted(by_name)):
        code = sources.code(path)
        start = sources.offset(path, line)
        end = code.find("\n", start)
        end = len(code) if end < 0 else end
        if re.match(r"\s*#\s*define\b", code[start:end]):
            continue
        for m in pattern.finditer(code[start:end]):
            args = call_args(code, start + m.end() - 1)
            if args is not None:
                out.append((path, line, by_name[m.group(1)], args))
    return out


def substitute(macro: MacroDef, args: list[str]) -> str:
    """MACRO's body with ARGS for its parameters, ## pasting done."""
    named = [p for p in macro.params if p != "..."]
    values = dict(zip(named, args))
    if "..." in macro.params or len(args) < len(named):
        values.setdefault("__VA_ARGS__", ", ".join(args[len(named):]))

    def token(m: "re.Match[str]") -> str:
        return values.get(m.group(0), m.group(0))

    body = re.sub(r"#\s*([A-Za-z_]\w*)", lambda m: '"' + m.group(1) + '"'
                  if m.group(1) in values else m.group(0),
                  re.sub(r"\s*##\s*", "##", macro.body))
    body = re.sub(r"[A-Za-z_]\w*", token, body)
    return body.replace("##", "")


def _statement_site(code: str, start: int, close: int) -> bool:
    before = code[max(0, start - 200):start].rstrip()
    after = code[close + 1:close + 20].lstrip()
    return (not before or before[-1] in ";{}:" or
            bool(re.search(r"\belse$", before))) and after.startswith(";")


def ops_in(body: str) -> list[tuple[atomic_api.AtomicOp, str, list[str],
                                    int]]:
    """Atomic operations in BODY: (op, counter, args, offset)."""
    out = []
    for m in _OP_CALL.finditer(body):
        op = atomic_api.decode(m.group(1))
        args = call_args(body, m.end() - 1)
        if op is None or args is None:
            continue
        counter = atomic_api.counter_arg(op, args)
        if counter:
            out.append((op, counter, args, m.start()))
    return out


def _use(op: atomic_api.AtomicOp, body: str, at: int,
         statement: bool) -> tuple[str, str]:
    if op.is_zero_test:
        if evidence.RELEASE_CALLS.search(body[at + len(op.name):]):
            return "zero-release", "zero test, release call in the macro"
        return "zero-test", "zero test in the macro"
    before = body[:at].rstrip()
    own_statement = not before or before[-1] in ";{}(" and (
        before[-1] != "(" or before.endswith("({"))
    if not op.returns_value or (statement and own_statement
                                and not op.is_read):
        return "mod", op.base
    return "value", "value used in the macro"


class Expansion(NamedTuple):
    """What expanding the tree's macros adds and hides."""
    ops: dict[str, list[Record]]     # path -> op records at uses
    hidden: set[tuple[str, int]]     # (path, line) of ops on parameters
    names: frozenset[str]


def expand(tree: Optional[Path], files: list[Record],
           sources: Sources) -> Expansion:
    """Expand every macro that operates on a parameter, at every use."""
    macros: dict[str, list[MacroDef]] = {}
    spans: dict[str, list[tuple[str, int, int]]] = {}
    for f in files:
        spans[f["path"]] = [(n, int(s), int(e))
                            for n, s, e in f.get("functions", [])]
        for d in macro_defs_of(f, sources):
            macros.setdefault(d.name, []).append(d)
    hidden: set[tuple[str, int]] = set()
    for defs in macros.values():
        for d in defs:
            for op, counter, _args, at in ops_in(d.body):
                if _references(counter, d.params):
                    hidden.add((d.path, d.line + _body_lines_before(
                        sources.code(d.path), d, op.name)))
    out: dict[str, list[Record]] = {}
    calls = _calls_of(macros)
    for path, line in sources.grep_words(sorted(macros)):
        code = sources.code(path)
        start = sources.offset(path, line)
        end = code.find("\n", start)
        if re.match(r"\s*#\s*define\b", code[start:end]):
            continue
        for m in calls.finditer(code[start:end]):
            open_at = start + m.end() - 1
            args = call_args(code, open_at)
            if args is None:
                continue
            defs = macros[m.group(1)]
            close = lexical.matching_paren(code, open_at)
            stmt = _statement_site(code, start + m.start(), close)
            fn = _function_at(spans.get(path, []), line)
            for d in defs[:1]:
                for rec in _expanded_ops(d, args, macros, calls, stmt, 0):
                    out.setdefault(path, []).append(dict(
                        rec, line=line, function=fn))
    return Expansion(out, hidden, frozenset(macros))


def _calls_of(macros: dict[str, list[MacroDef]]) -> "re.Pattern[str]":
    """A call of one of MACROS; group 1 is its name."""
    return re.compile(r"\b(" + "|".join(map(re.escape, macros)) +
                      r")\s*\(")


def _expanded_ops(d: MacroDef, args: list[str],
                  macros: dict[str, list[MacroDef]],
                  calls: "re.Pattern[str]", stmt: bool,
                  depth: int) -> list[Record]:
    body = substitute(d, args)
    recs = []
    for op, counter, op_args, at in ops_in(body):
        use, detail = _use(op, body, at, stmt)
        counter = evidence._normalise(counter)
        recs.append({"op": op.name, "base": op.base, "counter": counter,
                     "effect": str(atomic_api.effect_of(op, op_args)),
                     "guard": evidence._is_not_zero_guard(op, op_args),
                     "constant": atomic_api.constant_operand(op, op_args),
                     "use": use, "detail": f"{detail} (macro {d.name}())",
                     "parsed": True, "base_type": None})
    if depth < MAX_DEPTH:
        for m in calls.finditer(body):
            inner = call_args(body, m.end() - 1)
            if inner is not None and m.group(1) != d.name:
                recs.extend(_expanded_ops(macros[m.group(1)][0], inner,
                                          macros, calls, stmt, depth + 1))
    return recs


def _body_lines_before(code: str, d: MacroDef, op_name: str) -> int:
    """Lines between the #define and the first OP_NAME in its body."""
    start = 0
    for _k in range(d.line - 1):
        start = code.index("\n", start) + 1
    at = code.find(op_name, start)
    return code.count("\n", start, at) if at >= 0 else 0


def _function_at(spans: list[tuple[str, int, int]], line: int
                 ) -> Optional[str]:
    for name, start, end in spans:
        if start <= line <= end:
            return name
    return None


_OBJECT_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([a-z_]\w*)[ \t]+"
                            r"([^\n\\]+?)[ \t]*$", re.M)


def alias_defines(code: str) -> list[tuple[str, str]]:
    """(name, expression) of the object-like macros of CODE that alias a
    member or variable ("#define sk_refcnt __sk_common.skc_refcnt")."""
    out: list[tuple[str, str]] = []
    if "define" not in code:
        return out
    for m in _OBJECT_DEFINE.finditer(code):
        body = _ALIAS_BODY.match(m.group(2))
        if body and body.group(1) != m.group(1):
            out.append((m.group(1), re.sub(r"\s+", "", body.group(1))))
    return out


def aliases(files: list[Record], sources: Sources,
            names: set[str]) -> dict[str, str]:
    """Object-like macros among NAMES that alias a member or variable:
    name -> the expression it stands for.  Looked for in the scanned
    files: such an alias sits next to the struct it reaches into, which
    mentions an atomic type."""
    out: dict[str, str] = {}
    for f in files:
        for name, expansion in file_facts_of(f, sources)["alias_defines"]:
            if name not in names:
                continue
            if out.get(name, expansion) != expansion:
                out[name] = ""        # two meanings: use neither
            else:
                out[name] = expansion
    return {k: v for k, v in out.items() if v}


def file_facts(path: str, code: str) -> Record:
    """What one file (comment-stripped CODE) defines that the resolve
    stage expands, kept with the file's scan record: macros with an
    atomic op on a parameter, macros passing an address to a function,
    and object-like aliases."""
    return {"macro_defs": [[d.name, list(d.params), d.body, d.line]
                           for d in [*parse_defines(path, code),
                                     *parse_op_aliases(path, code)]],
            "address_defines": [[d.name, list(d.params), d.body, d.line,
                                 callees]
                                for d, callees in address_defines(path,
                                                                  code)],
            "alias_defines": [list(a) for a in alias_defines(code)]}


def file_facts_of(f: Record, sources: Sources) -> Record:
    """F's macro facts: from its scan record, or from the file itself for
    a record that lacks them."""
    if "macro_defs" in f:
        return f
    return file_facts(f["path"], sources.code(f["path"]))


def macro_defs_of(f: Record, sources: Sources) -> list[MacroDef]:
    return [MacroDef(name, tuple(params), body, f["path"], line)
            for name, params, body, line in
            file_facts_of(f, sources)["macro_defs"]]


def helper_defines_of(f: Record, sources: Sources,
                      helpers: frozenset[str]) -> list[MacroDef]:
    """Function-like macros of F whose body passes the address of
    something built from a parameter to a function in HELPERS
    ("#define afs_stat_v(vnode, n) __afs_stat(&afs_v2net(vnode)->n)"):
    at each use the helper's summary applies to the expansion."""
    return [MacroDef(name, tuple(params), body, f["path"], line)
            for name, params, body, line, callees in
            file_facts_of(f, sources)["address_defines"]
            if helpers.intersection(callees)]
