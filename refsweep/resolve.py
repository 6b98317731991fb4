# SPDX-License-Identifier: GPL-2.0-only
"""Attribute scanned operations to variables, and link conversion groups.

See Documentation/classification.rst, "Variables and keys" and
"Attribution".  Checked evidence must never be lost, so an operation whose
target cannot be told apart is given to every candidate, marked ambiguous.
"""

import collections.abc
import dataclasses
import json
import posixpath
import re
import subprocess
from pathlib import Path
from typing import AbstractSet, Any, Callable, Iterable, Iterator, Optional

from refsweep import (atomic_api, macros, pointers, summaries, workdir,
                      wrap_design)
from refsweep.records import Evidence, Use, Variable, evidence_from_op
from refsweep.sources import ResolveError, Sources, git_grep

Record = dict[str, Any]
_MEMBER = re.compile(r"(?:->|\.)(\w+)(?:\[[^\]]*\])*\)*$")
_PLAIN = re.compile(r"^\(*(\w+)(?:\[[^\]]*\])*\)*$")
_CAST = re.compile(r"^\((?:const\s+|volatile\s+)*(?:atomic(?:64|_long)?_t"
                   r"|void)\s*\*\)")
_WORD = re.compile(r"[A-Za-z_]\w*")


def variable_key(path: str, d: Record) -> str:
    if d["scope"] == "member":
        return f"{d['tag'] or 'struct ?'}.{d['name']}"
    if d["scope"] == "function":
        return f"{path}:{d['function']}:{d['name']}"
    return f"{path}:{d['name']}"


def collect_variables(files: list[Record]) -> dict[str, Variable]:
    """Every declared variable, merged by key (#ifdef twins become one)."""
    out: dict[str, Variable] = {}
    externs: list[tuple[str, Record]] = []
    for f in files:
        for d in f["decls"]:
            if d.get("extern"):
                externs.append((f["path"], d))
                continue
            key = variable_key(f["path"], d)
            at = f"{f['path']}:{d['line']}"
            var = out.get(key)
            if var is None:
                out[key] = Variable(key, d["type"], at, d["scope"],
                                    set(d["found_by"]))
            else:
                var.decls.append(at)
                var.found_by |= set(d["found_by"])
    # "extern atomic64_t last_mm_ctx_id;" in a header is another
    # declaration of the one global of that name and type (convert
    # rewrites it with the definition); with several candidates it
    # belongs to none.
    by_name: dict[tuple[str, str], list[Variable]] = {}
    for var in out.values():
        if var.scope == "file":
            by_name.setdefault((var.key.rsplit(":", 1)[1], var.type),
                               []).append(var)
    for path, d in externs:
        found = by_name.get((d["name"], d["type"]), [])
        if d["scope"] == "file" and len(found) == 1:
            found[0].decls.append(f"{path}:{d['line']}")
    return out


class Index:
    """Lookup tables from names to variable keys."""

    def __init__(self, variables: dict[str, Variable]) -> None:
        self.variables = variables
        self.decl_paths = {k: {d.rsplit(":", 1)[0] for d in v.decls}
                           for k, v in variables.items()}
        # Keys an op in any file may name: no struct member, or a member
        # of a struct some header declares (see narrow()).
        self.visible_anywhere = {
            k for k, paths in self.decl_paths.items()
            if not k.startswith(("struct ", "union "))
            or any(not p.endswith(".c") for p in paths)}
        self.members: dict[str, list[str]] = {}
        self.globals: dict[str, list[str]] = {}
        # The last word of every key: resolve() finds a key only through
        # a word of the counter expression that is one of these.
        self.names: set[str] = set()
        for key, var in variables.items():
            if var.scope == "member":
                self.members.setdefault(key.rsplit(".", 1)[1], []).append(key)
                self.names.add(key.rsplit(".", 1)[1])
            else:
                self.names.add(key.rsplit(":", 1)[1])
            if var.scope == "file":
                self.globals.setdefault(key.rsplit(":", 1)[1], []).append(key)

    def narrow(self, cands: list[str],
               tiers: list[Callable[[], AbstractSet[str]]]
               ) -> list[tuple[str, str]]:
        """Candidates as (key, level).

        TIERS give sets of paths, nearest first (the file itself, headers
        it includes directly, headers it sees transitively); a tier is
        only computed when the nearer ones do not decide.  The
        candidates declared in the first tier that has any are close:
        "exact" if alone, else "ambiguous"; the others are "weak".  With
        no close candidate all are "ambiguous".  Weak evidence can only
        block a wrap-safe verdict, so a wrong preference costs a decision,
        never safety.
        """
        # A struct declared only in .c files is visible in those files
        # alone: it cannot be the target of an op elsewhere.
        cands = [k for k in cands if k in self.visible_anywhere
                 or any(self.decl_paths[k] & tier() for tier in tiers)]
        if len(cands) == 1:
            return [(cands[0], "exact")]
        for tier_of in tiers:
            tier = tier_of()
            close = [k for k in cands if self.decl_paths[k] & tier]
            if close:
                level = "exact" if len(close) == 1 else "ambiguous"
                return [(k, level if k in close else "weak") for k in cands]
        return [(k, "ambiguous") for k in cands]

    def may_name(self, counter: str) -> bool:
        """Whether COUNTER holds a word naming some variable.  Most of a
        scan's escapes ("&pdev->dev" passed on) hold none; checking
        this first spares them the evidence and resolve() work."""
        return not self.names.isdisjoint(_WORD.findall(counter))

    def resolve(self, path: str, function: Optional[str], counter: str,
                base_type: Optional[str]) -> tuple[list[str], bool]:
        """Keys COUNTER may name, and whether that is ambiguous."""
        expr = counter.strip()
        expr = _CAST.sub("", expr.lstrip("&").strip()).lstrip("&")
        expr = expr.strip()
        while expr.startswith("(") and expr.endswith(")"):
            expr = expr[1:-1].strip().lstrip("&")
        expr = _storage_expr(expr)
        m = _PLAIN.match(expr)
        if m:
            name = m.group(1)
            for key in (f"{path}:{function}:{name}", f"{path}:{name}"):
                if key in self.variables:
                    return [key], False
            cands = self.globals.get(name, [])
            return cands, len(cands) > 1
        m = _MEMBER.search(expr)
        if m:
            field = m.group(1)
            cands = self.members.get(field, [])
            if base_type and f"{base_type}.{field}" in cands:
                return [f"{base_type}.{field}"], False
            return cands, len(cands) > 1
        return [], False


_PERCPU = re.compile(r"^(?:per_cpu_ptr|this_cpu_ptr|raw_cpu_ptr)\((.+?)"
                     r"(?:,[^,()]*)?\)$")
_OFFSET = re.compile(r"^(\(*[\w]+(?:(?:->|\.)\w+)*\)*)\s*\+\s*[^+]+$")


def _storage_expr(expr: str) -> str:
    """The pointer in "per_cpu_ptr(p, cpu)" or "p + i": pointer-held
    counters are named through it."""
    m = _PERCPU.match(expr)
    if m:
        expr = m.group(1).strip().lstrip("&")
    m = _OFFSET.match(expr)
    return m.group(1) if m else expr


_TYPE_OF_WIDTH = {"": "atomic_t", "64": "atomic64_t",
                  "_long": "atomic_long_t"}


class IncludeGraph:
    """Which headers a file sees, through #include, transitively.

    Used to rank the candidates of an ambiguous member: a struct whose
    header a file cannot see is not what its code operates on.  Include
    paths are resolved best-effort (no -I flags; <asm/...> as the file's
    own arch or x86, and asm-generic), so a miss only makes evidence weak,
    never drops it.  Cached per tree HEAD
    commit (a re-run on changed working files reuses it: a stale edge only
    moves evidence between close and weak).
    """

    _LINE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')

    def __init__(self, tree: Optional[Path]) -> None:
        self.edges: dict[str, list[str]] = {}
        self.bit: dict[str, int] = {}       # file -> its bit in masks
        self.mask: dict[str, int] = {}      # file -> what it sees
        if tree is None:
            return
        head = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"],
                              capture_output=True, text=True,
                              check=False).stdout.strip()
        # v2: quoted includes also resolve against the directories above
        cache = workdir.sub("cache") / f"includes-v2-{head}.json"
        if head and cache.is_file():
            self.edges = json.loads(cache.read_text(encoding="utf-8"))
            return
        res = git_grep(tree, ["-n", "-F", "-e", "include"])
        for hit in res.stdout.splitlines():
            path, _sep, rest = hit.partition(":")
            _lno, _sep, code = rest.partition(":")
            m = self._LINE.match(code)
            if m:
                self.edges.setdefault(path, []).extend(
                    _include_targets(path, m.group(1), m.group(2)))
        if head:
            cache.write_text(json.dumps(self.edges), encoding="utf-8")

    def sees(self, path: str) -> "Seen":
        """Every file PATH includes, transitively, and PATH itself."""
        if path not in self.mask:
            self._close(path)
        return Seen(self.mask[path], self.bit)

    def _bit(self, path: str) -> int:
        return self.bit.setdefault(path, len(self.bit))

    def _close(self, start: str) -> None:
        """Set the closure mask of every file reachable from START:
        Tarjan's strongly connected components, iteratively, so that a
        header's closure is the union of its includes' (computed once)
        and an include cycle shares one."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        work = [(start, iter(self.edges.get(start, ())))]
        index[start] = low[start] = 0
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child in self.mask:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(self.edges.get(child, ()))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] != index[node]:
                    continue
                members = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    members.append(top)
                    if top == node:
                        break
                mask = 0
                for member in members:
                    mask |= 1 << self._bit(member)
                    for child in self.edges.get(member, ()):
                        mask |= self.mask.get(child, 0)
                for member in members:
                    self.mask[member] = mask


class Seen(collections.abc.Set[str]):
    """The files one file sees, as a bit mask over the include graph's
    files: unions of large closures are one integer OR each."""

    __slots__ = ("mask", "bit")

    def __init__(self, mask: int, bit: dict[str, int]) -> None:
        self.mask = mask
        self.bit = bit

    def __contains__(self, path: object) -> bool:
        at = self.bit.get(path) if isinstance(path, str) else None
        return at is not None and bool(self.mask >> at & 1)

    def __iter__(self) -> Iterator[str]:
        return (p for p, at in self.bit.items() if self.mask >> at & 1)

    def __len__(self) -> int:
        return bin(self.mask).count("1")

    @classmethod
    def _from_iterable(cls, paths: Iterable[str]) -> frozenset[str]:
        # What "&" and "|" with other sets build: a plain set of paths.
        return frozenset(paths)


__all__ = ["ResolveError", "Variable", "attribute", "collect_variables"]


def _include_targets(path: str, kind: str, name: str) -> list[str]:
    if kind == '"':
        # The file's directory first, then each directory above it:
        # subsystems add their root with -I ("gt/intel_context.h" in
        # drivers/gpu/drm/i915/gt/uc/ is drivers/gpu/drm/i915/gt/...).
        # A path that does not exist is a node without edges.
        dirs = path.split("/")[:-1]
        out = []
        for n in range(len(dirs), 0, -1):
            target = posixpath.normpath(posixpath.join(*dirs[:n], name))
            if target not in out:
                out.append(target)
        return out or [posixpath.normpath(name)]
    out = ["include/" + name, "include/uapi/" + name]
    if name.startswith("asm/"):
        # The file's own arch, else x86 (the default build) and generic.
        arch = path.split("/")[1] if path.startswith("arch/") else "x86"
        out += [f"arch/{arch}/include/{name}",
                f"arch/{arch}/include/uapi/{name}",
                "include/asm-generic/" + name[4:]]
    return out


def add_pointer_variables(variables: dict[str, Variable],
                          files: list[Record], sources: Sources) -> int:
    """Pointers to atomics with allocated storage become variables."""
    n = 0
    for path, d in pointers.find(files, sources):
        key = variable_key(path, {"scope": d.scope, "tag": d.tag,
                                  "name": d.name, "function": None})
        at = f"{path}:{d.line}"
        var = variables.get(key)
        if var is None:
            var = Variable(key, d.type, at, d.scope, {"lexical"},
                           pointer=True)
            variables[key] = var
            n += 1
        elif var.pointer and at not in var.decls:
            var.decls.append(at)
    return n


class _Attributor:
    """Gives evidence to variables, ranking ambiguous candidates."""

    def __init__(self, index: Index, graph: "IncludeGraph",
                 variables: dict[str, Variable],
                 stats: dict[str, int]) -> None:
        self.index = index
        self.graph = graph
        self.variables = variables
        self.stats = stats

    def width_filter(self, op_name: str, keys: list[str],
                     ambiguous: bool) -> tuple[list[str], bool]:
        decoded = atomic_api.decode(op_name)
        if decoded is not None and len(keys) > 1:
            # atomic64_inc() cannot act on an atomic_t member.
            want = _TYPE_OF_WIDTH[decoded.width]
            keys = [k for k in keys if self.variables[k].type == want]
            ambiguous = len(keys) > 1
        return keys, ambiguous

    def give(self, path: str, near: frozenset[str], keys: list[str],
             ambiguous: bool, evs: list[Evidence], escape: bool
             ) -> list[str]:
        """Attach EVS to KEYS; returns the keys that got them."""
        tiers = [lambda: frozenset({path}), lambda: near,
                 lambda: self.graph.sees(path)] if ambiguous else []
        levels = self.index.narrow(keys, tiers) \
            if ambiguous else [(k, "exact") for k in keys]
        if escape:
            # An address of some member of that name is news about this
            # variable only if its declaration is close: the member may
            # well not be atomic at all.
            levels = [(k, lv) for k, lv in levels
                      if self.index.decl_paths[k] & near]
        for key, level in levels:
            self.variables[key].evidence.extend(
                dataclasses.replace(
                    ev, ambiguous=level != "exact" or ev.ambiguous,
                    weak=level == "weak") for ev in evs)
        return [k for k, _lv in levels]


def attribute(files: list[Record], variables: dict[str, Variable],
              tree: Optional[Path], sources: Optional[Sources] = None
              ) -> dict[str, int]:
    """Give each operation to its variables; link helper groups.

    Pointer-held counters are added to VARIABLES first; operations behind
    the tree's macros are expanded at their uses; helper summaries are
    applied at every call site (see summaries.py, macros.py, pointers.py).
    SOURCES: the tree's text, perhaps prefetched while it was scanned.
    """
    sources = sources or Sources(tree)
    stats = {"ops": 0, "resolved": 0, "ambiguous": 0, "unresolved": 0,
             "helper_ops": 0, "helper_calls": 0, "escapes": 0,
             "escapes_unresolved": 0, "pointer_vars": 0, "macro_ops": 0,
             "alias_ops": 0, "local_alias_ops": 0}
    stats["pointer_vars"] = add_pointer_variables(variables, files, sources)
    index = Index(variables)
    graph = IncludeGraph(tree)
    att = _Attributor(index, graph, variables, stats)
    expansion = macros.expand(tree, files, sources)
    summ = summaries.Summaries(files, sources, graph.sees, expansion.names)
    by_path = {f["path"]: f for f in files}
    extra = [{"path": p, "ops": [], "includes": [], "functions": []}
             for p in sorted(expansion.ops) if p not in by_path]
    unresolved: list[tuple[Record, Record, Evidence]] = []
    for f in [*files, *extra]:
        path = f["path"]
        near = frozenset({path, *f.get("includes", [])})
        expanded = expansion.ops.get(path, [])
        stats["macro_ops"] += len(expanded)
        for op in [*f["ops"], *expanded]:
            if (path, op["line"]) in expansion.hidden and \
                    op not in expanded:
                continue        # a macro body: expanded at its uses
            if op["use"] == Use.ESCAPE.value:
                if op.get("callee") in summ.defs or \
                        op.get("callee") in expansion.names:
                    continue    # a helper or macro: attributed at the call
                if not index.may_name(op["counter"]):
                    stats["escapes_unresolved"] += 1
                    continue
            ev = evidence_from_op(op, path)
            escape = ev.use is Use.ESCAPE
            if not escape:
                stats["ops"] += 1
            idx = summ.param_of(path, op["function"], op["counter"])
            if idx is not None and not escape:
                summ.add_direct(path, op["function"], idx, ev)
                stats["helper_ops"] += 1
                continue
            keys, ambiguous = index.resolve(path, op["function"],
                                            op["counter"], op["base_type"])
            keys, ambiguous = att.width_filter(op["op"], keys, ambiguous)
            if not keys and not escape:
                unresolved.append((f, op, ev))
                continue
            if not keys:
                stats["escapes_unresolved"] += 1
                continue
            if not att.give(path, near, keys, ambiguous, [ev], escape):
                stats["unresolved" if not escape else
                      "escapes_unresolved"] += 1
            elif escape:
                stats["escapes"] += 1
            else:
                stats["ambiguous" if ambiguous else "resolved"] += 1
    _retry_unresolved(unresolved, att, sources, files)
    summ.find_edges()
    if tree is not None:
        _apply_summaries(tree, summ, att, sources, by_path)
    stats["wrap_by_design"] = wrap_design.find(variables, files, sources,
                                               tree, index)
    return stats


def _retry_unresolved(unresolved: list[tuple[Record, Record, Evidence]],
                      att: _Attributor, sources: Sources,
                      files: list[Record]) -> None:
    """Counters that named no variable: through a local pointer
    ("p = ip_idents + bucket; atomic_add_return(n, p)"), or through an
    object-like macro ("#define sk_cookie __sk_common.skc_cookie")."""
    stats = att.stats
    names: set[str] = set()
    for _f, op, ev in unresolved:
        m = _MEMBER.search(_bare(op["counter"])) or \
            _PLAIN.match(_bare(op["counter"]))
        if m and ev.use is not Use.ESCAPE and not m.group(1).isupper():
            names.add(m.group(1))
    alias = macros.aliases(files, sources, names) if names else {}
    for f, op, ev in unresolved:
        path = f["path"]
        near = frozenset({path, *f.get("includes", [])})
        escape = op["use"] == "escape"
        keys, ambiguous, how = _through_local(att, sources, f, op)
        if not keys:
            keys, ambiguous = _through_alias(att.index, alias, path, op)
            how = "alias_ops"
        keys, ambiguous = att.width_filter(op["op"], keys, ambiguous)
        if keys and att.give(path, near, keys, ambiguous, [ev], escape):
            stats[how] += 1
            stats["escapes" if escape else
                  ("ambiguous" if ambiguous else "resolved")] += 1
        else:
            stats["unresolved" if not escape else "escapes_unresolved"] += 1


def _bare(counter: str) -> str:
    return _CAST.sub("", counter.strip().lstrip("&").strip()).lstrip("&")


def _through_alias(index: Index, alias: dict[str, str], path: str,
                   op: Record) -> tuple[list[str], bool]:
    expr = _bare(op["counter"])
    m = _MEMBER.search(expr)
    if m and m.group(1) in alias:
        expr = expr[:m.start(1)] + alias[m.group(1)]
    else:
        m = _PLAIN.match(expr)
        if not (m and m.group(1) in alias):
            return [], False
        expr = alias[m.group(1)]
    return index.resolve(path, op["function"], expr, None)


_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_ASSIGNED = r"\s*=(?!=)\s*([^;]+);"


def _through_local(att: _Attributor, sources: Sources, f: Record,
                   op: Record) -> tuple[list[str], bool, str]:
    counter = op["counter"].strip()
    if re.match(r"^&\s*\w+\s*\[", counter):
        counter = counter[1:].strip()   # &p[i] is p + i: an element
    m = _PLAIN.match(counter)
    if not m or not op["function"] or counter.startswith("&"):
        return [], False, "local_alias_ops"
    spans = [(int(s), int(e)) for n, s, e in f.get("functions", [])
             if n == op["function"]]
    keys: set[str] = set()
    ambiguous = False
    for start, end in spans:
        if not start <= op["line"] <= end:
            continue
        body = sources.lines(f["path"], start, end)
        for a in re.finditer(r"(?<![\w.>])" + re.escape(m.group(1)) +
                             _ASSIGNED, body):
            for rhs in re.split(r"[?:]", a.group(1)):
                found, amb = att.index.resolve(f["path"], op["function"],
                                               rhs.strip(), None)
                if not found or len(found) > 1 and amb:
                    continue        # a pointer from elsewhere: unknown
                keys.update(found)
                ambiguous |= amb
    return sorted(keys), ambiguous or len(keys) > 1, "local_alias_ops"


def _apply_summaries(tree: Path, summ: summaries.Summaries,
                     att: _Attributor, sources: Sources,
                     by_path: dict[str, Record]) -> None:
    """Every call of a helper gives the helper's summary to what is
    passed: an address ("&x->users"), or a pointer-held counter."""
    names = sorted(summ.defs)
    wanted = set(names)
    group_members: dict[tuple[str, str, int], set[str]] = {}
    for path, lno in sources.grep_words(names):
        f = by_path.get(path, {})
        spans = [(n, int(s), int(e)) for n, s, e in f.get("functions", [])]
        near = frozenset({path, *f.get("includes", [])})
        fn = summaries.function_at(spans, lno)
        line = sources.lines(path, lno, lno)
        own = {n for n, _s, _e in spans}
        for name in set(_CALLED.findall(line)) & wanted:
            if name in own and not any(d.path == path
                                       for d in summ.defs[name]):
                continue        # this file's own function of that name
            params = _macro_params(line)
            for _at, args in summaries.call_at(sources, path, lno, name):
                defs, amb_def = summ.lookup(name, path)
                for d in defs:
                    if d.position >= len(args):
                        continue
                    arg = re.sub(r"\s+", "", args[d.position])
                    if params and re.search(
                            r"(?<!\w)(" + "|".join(params) + r")(?!\w)", arg):
                        continue    # a macro body: expanded at its uses
                    keys, ambiguous = _call_arg(att.index, path, fn, arg)
                    if not keys:
                        continue
                    evs = summ.effects(d)
                    if not evs:
                        continue
                    att.stats["helper_calls"] += 1
                    via = f"{name}() at {path}:{lno}"
                    got = att.give(path, near, keys, ambiguous, [
                        dataclasses.replace(
                            ev, ambiguous=ev.ambiguous or amb_def,
                            via=via + (", " + ev.via if ev.via else ""))
                        for ev in evs], False)
                    group_members.setdefault((d.path, d.name, d.position),
                                             set()).update(got)
    _apply_macro_helpers(tree, summ, att, sources, by_path, group_members)
    _link_groups(group_members.values(), att.variables)


def _apply_macro_helpers(tree: Path, summ: summaries.Summaries,
                         att: _Attributor, sources: Sources,
                         by_path: dict[str, Record],
                         group_members: dict[tuple[str, str, int],
                                             set[str]]) -> None:
    """Macros that paste a member into a helper call ("#define
    afs_stat_v(vnode, n) __afs_stat(&afs_v2net(vnode)->n)"): at every
    use, the helper's summary goes to the expanded argument."""
    helpers = frozenset(summ.defs)
    defs = [d for f in by_path.values()
            for d in macros.helper_defines_of(f, sources, helpers)]
    for path, lno, mdef, margs in macros.uses_of(tree, sources, defs):
        f = by_path.get(path, {})
        spans = [(n, int(s), int(e)) for n, s, e in f.get("functions", [])]
        near = frozenset({path, *f.get("includes", [])})
        fn = summaries.function_at(spans, lno)
        body = macros.substitute(mdef, margs)
        for name, args in macros.helper_calls(body, helpers):
            defs_of, amb_def = summ.lookup(name, mdef.path)
            for d in defs_of:
                if d.position >= len(args):
                    continue
                arg = re.sub(r"\s+", "", args[d.position])
                if not arg.startswith("&"):
                    continue
                keys, ambiguous = _call_arg(att.index, path, fn, arg)
                evs = summ.effects(d)
                if not keys or not evs:
                    continue
                att.stats["helper_calls"] += 1
                via = f"{name}() in macro {mdef.name}() at {path}:{lno}"
                got = att.give(path, near, keys, ambiguous, [
                    dataclasses.replace(
                        ev, ambiguous=ev.ambiguous or amb_def,
                        via=via + (", " + ev.via if ev.via else ""))
                    for ev in evs], False)
                group_members.setdefault((d.path, d.name, d.position),
                                         set()).update(got)


def _macro_params(line: str) -> list[str]:
    """Parameter names of the function-like macro LINE defines, if any."""
    m = re.match(r"\s*#\s*define\s+\w+\(([^)]*)\)", line)
    if not m:
        return []
    return [re.escape(p.strip()) for p in m.group(1).split(",")
            if re.fullmatch(r"\s*\w+\s*", p)]


def _call_arg(index: Index, path: str, fn: Optional[str],
              arg: str) -> tuple[list[str], bool]:
    """Variables an argument passed as a pointer to an atomic names."""
    if arg.startswith("&"):
        return index.resolve(path, fn, arg, None)
    # A bare name is a pointer: only a pointer-held counter (or an array
    # of this file) is storage; a pointer parameter is a helper level.
    # A bare member ("d->counters->hist") passed as an atomic pointer is
    # an array member, or a pointer-held one: storage either way.
    keys, ambiguous = index.resolve(path, fn, arg, None)
    if re.search(r"(->|\.)\w+$", arg):
        return keys, ambiguous
    keys = [k for k in keys if index.variables[k].pointer
            or k.startswith(path + ":")]
    return keys, ambiguous and len(keys) > 1


def _link_groups(member_sets: Any, variables: dict[str, Variable]) -> None:
    """Union-find over helper parameters; group id is the smallest key."""
    parent: dict[str, str] = {}

    def find(k: str) -> str:
        while parent.setdefault(k, k) != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for members in member_sets:
        ordered = sorted(members)
        for other in ordered[1:]:
            a, b = find(ordered[0]), find(other)
            if a != b:
                parent[max(a, b)] = min(a, b)
    roots: dict[str, list[str]] = {}
    for k in parent:
        roots.setdefault(find(k), []).append(k)
    for root, members in roots.items():
        if len(members) < 2:
            continue
        gid = min(members)
        for k in members:
            variables[k].group = gid
