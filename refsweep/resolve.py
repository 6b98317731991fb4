# SPDX-License-Identifier: GPL-2.0-only
"""Attribute scanned operations to variables, and link conversion groups.

See Documentation/classification.rst, "Variables and keys" and
"Attribution".  Checked evidence must never be lost, so an operation whose
target cannot be told apart is given to every candidate, marked ambiguous.
"""

import dataclasses
import json
import posixpath
import re
import subprocess
from pathlib import Path
from typing import Any, Optional

from refsweep import atomic_api, lexical, workdir
from refsweep.records import Evidence, Use, Variable, evidence_from_op

Record = dict[str, Any]
_MEMBER = re.compile(r"(?:->|\.)(\w+)(?:\[[^\]]*\])*\)*$")
_PLAIN = re.compile(r"^\(*(\w+)(?:\[[^\]]*\])*\)*$")
_CAST = re.compile(r"^\((?:const\s+|volatile\s+)*(?:atomic(?:64|_long)?_t"
                   r"|void)\s*\*\)")


def variable_key(path: str, d: Record) -> str:
    if d["scope"] == "member":
        return f"{d['tag'] or 'struct ?'}.{d['name']}"
    if d["scope"] == "function":
        return f"{path}:{d['function']}:{d['name']}"
    return f"{path}:{d['name']}"


def collect_variables(files: list[Record]) -> dict[str, Variable]:
    """Every declared variable, merged by key (#ifdef twins become one)."""
    out: dict[str, Variable] = {}
    for f in files:
        for d in f["decls"]:
            if d.get("extern"):
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
    return out


class Index:
    """Lookup tables from names to variable keys."""

    def __init__(self, variables: dict[str, Variable]) -> None:
        self.variables = variables
        self.decl_paths = {k: {d.rsplit(":", 1)[0] for d in v.decls}
                           for k, v in variables.items()}
        self.members: dict[str, list[str]] = {}
        self.globals: dict[str, list[str]] = {}
        for key, var in variables.items():
            if var.scope == "member":
                self.members.setdefault(key.rsplit(".", 1)[1], []).append(key)
            elif var.scope == "file":
                self.globals.setdefault(key.rsplit(":", 1)[1], []).append(key)

    def narrow(self, cands: list[str], tiers: list[frozenset[str]]
               ) -> list[tuple[str, str]]:
        """Candidates as (key, level).

        TIERS are sets of paths, nearest first (the file itself, headers
        it includes directly, headers it sees transitively).  The
        candidates declared in the first tier that has any are close:
        "exact" if alone, else "ambiguous"; the others are "weak".  With
        no close candidate all are "ambiguous".  Weak evidence can only
        block a wrap-safe verdict, so a wrong preference costs a decision,
        never safety.
        """
        everything = frozenset().union(*tiers) if tiers else frozenset()
        # A struct declared only in .c files is visible in those files
        # alone: it cannot be the target of an op elsewhere.
        cands = [k for k in cands
                 if not k.startswith(("struct ", "union "))
                 or self.decl_paths[k] & everything
                 or any(not p.endswith(".c") for p in self.decl_paths[k])]
        if len(cands) == 1:
            return [(cands[0], "exact")]
        for tier in tiers:
            close = [k for k in cands if self.decl_paths[k] & tier]
            if close:
                level = "exact" if len(close) == 1 else "ambiguous"
                return [(k, level if k in close else "weak") for k in cands]
        return [(k, "ambiguous") for k in cands]

    def resolve(self, path: str, function: Optional[str], counter: str,
                base_type: Optional[str]) -> tuple[list[str], bool]:
        """Keys COUNTER may name, and whether that is ambiguous."""
        expr = counter.strip()
        expr = _CAST.sub("", expr.lstrip("&").strip()).lstrip("&")
        expr = expr.strip()
        while expr.startswith("(") and expr.endswith(")"):
            expr = expr[1:-1].strip().lstrip("&")
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
        self.memo: dict[str, frozenset[str]] = {}
        if tree is None:
            return
        head = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"],
                              capture_output=True, text=True,
                              check=False).stdout.strip()
        cache = workdir.sub("cache") / f"includes-{head}.json"
        if head and cache.is_file():
            self.edges = json.loads(cache.read_text(encoding="utf-8"))
            return
        res = _git_grep(tree, ["-n", "-F", "-e", "include"])
        for hit in res.stdout.splitlines():
            path, _sep, rest = hit.partition(":")
            _lno, _sep, code = rest.partition(":")
            m = self._LINE.match(code)
            if m:
                self.edges.setdefault(path, []).extend(
                    _include_targets(path, m.group(1), m.group(2)))
        if head:
            cache.write_text(json.dumps(self.edges), encoding="utf-8")

    def sees(self, path: str) -> frozenset[str]:
        """Every file PATH includes, transitively, and PATH itself."""
        if path in self.memo:
            return self.memo[path]
        seen = {path}
        todo = [path]
        while todo:
            cur = todo.pop()
            for nxt in self.edges.get(cur, ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        out = frozenset(seen)
        self.memo[path] = out
        return out


class ResolveError(Exception):
    """Attribution cannot run; the message names the problem."""


def _git_grep(tree: Path, args: list[str]
              ) -> "subprocess.CompletedProcess[str]":
    """git grep ARGS over TREE's C files; exit 1 (no match) is no error,
    anything else is: a silent empty result would lose evidence."""
    res = subprocess.run(["git", "-C", str(tree), "grep", *args, "--",
                          "*.c", "*.h", ":!tools", ":!Documentation"],
                         capture_output=True, text=True, check=False)
    if res.returncode not in (0, 1):
        msg = (res.stderr.strip().splitlines() or ["no message"])[-1]
        raise ResolveError(f"git grep failed in {tree}: {msg}")
    return res


def _include_targets(path: str, kind: str, name: str) -> list[str]:
    if kind == '"':
        base = path.rsplit("/", 1)[0] if "/" in path else ""
        return [posixpath.normpath(posixpath.join(base, name))]
    out = ["include/" + name, "include/uapi/" + name]
    if name.startswith("asm/"):
        # The file's own arch, else x86 (the default build) and generic.
        arch = path.split("/")[1] if path.startswith("arch/") else "x86"
        out += [f"arch/{arch}/include/{name}",
                f"arch/{arch}/include/uapi/{name}",
                "include/asm-generic/" + name[4:]]
    return out


def attribute(files: list[Record], variables: dict[str, Variable],
              tree: Optional[Path]) -> dict[str, int]:
    """Give each operation to its variables; link helper groups."""
    index = Index(variables)
    graph = IncludeGraph(tree)
    stats = {"ops": 0, "resolved": 0, "ambiguous": 0, "unresolved": 0,
             "helper_ops": 0, "helper_calls": 0, "escapes": 0,
             "escapes_unresolved": 0}
    # helper name -> {param index: [evidence]}
    helper_params: dict[str, dict[int, str]] = {}
    for f in files:
        for h in f.get("helpers", []):
            helper_params.setdefault(h["function"], {})[int(h["index"])] = \
                h["param"]
    helper_evidence: dict[tuple[str, int], list[Evidence]] = {}
    for f in files:
        path = f["path"]
        near = frozenset({path, *f.get("includes", [])})
        tiers: Optional[list[frozenset[str]]] = None
        for op in f["ops"]:
            ev = evidence_from_op(op, path)
            if ev.use is not Use.ESCAPE:
                stats["ops"] += 1
            if ev.use is Use.ESCAPE and op.get("callee") in helper_params:
                continue        # a helper call: attributed one level below
            params = helper_params.get(op["function"] or "", {})
            plain = _PLAIN.match(op["counter"].lstrip("&"))
            if plain and not op["counter"].startswith("&") and \
                    plain.group(1) in params.values():
                idx = [i for i, p in params.items()
                       if p == plain.group(1)][0]
                helper_evidence.setdefault((op["function"], idx),
                                           []).append(ev)
                stats["helper_ops"] += 1
                continue
            keys, ambiguous = index.resolve(path, op["function"],
                                            op["counter"], op["base_type"])
            escape = ev.use is Use.ESCAPE
            decoded = atomic_api.decode(op["op"])
            if decoded is not None and len(keys) > 1:
                # atomic64_inc() cannot act on an atomic_t member.
                want = _TYPE_OF_WIDTH[decoded.width]
                keys = [k for k in keys if variables[k].type == want]
                ambiguous = len(keys) > 1
            if not keys:
                stats["unresolved" if not escape else "escapes_unresolved"] += 1
                continue
            if ambiguous and tiers is None:
                tiers = [frozenset({path}), near, graph.sees(path)]
            levels = index.narrow(keys, tiers or []) \
                if ambiguous else [(k, "exact") for k in keys]
            if not levels:
                stats["unresolved" if not escape else "escapes_unresolved"] += 1
                continue
            if escape:
                # An address of some member of that name is news about
                # this variable only if its declaration is close: the
                # member may well not be atomic at all.
                levels = [(k, lv) for k, lv in levels
                          if index.decl_paths[k] & near]
                stats["escapes"] += 1
            else:
                stats["ambiguous" if ambiguous else "resolved"] += 1
            for key, level in levels:
                variables[key].evidence.append(dataclasses.replace(
                    ev, ambiguous=level != "exact", weak=level == "weak"))
    if helper_evidence and tree is not None:
        _attribute_helper_calls(tree, helper_evidence, index, variables,
                                stats)
    return stats


def _attribute_helper_calls(tree: Path,
                            helper_evidence: dict[tuple[str, int],
                                                  list[Evidence]],
                            index: Index, variables: dict[str, Variable],
                            stats: dict[str, int]) -> None:
    """One call level: a helper's evidence goes to what callers pass."""
    # The atomic API itself is no helper; "foo_atomic_put" is.
    names = sorted({name for name, _i in helper_evidence
                    if atomic_api.decode(name) is None})
    if not names:
        return
    sites: list[tuple[str, int, str, str]] = []
    for i in range(0, len(names), 200):
        chunk = names[i:i + 200]
        pattern = r"\b(" + "|".join(chunk) + r")\s*\("
        fixed = [arg for n in chunk for arg in ("-e", n)]
        res = _git_grep(tree, ["-n", "-w", "-F", *fixed])
        for hit in res.stdout.splitlines():
            path, _sep, rest = hit.partition(":")
            lno_text, _sep, code = rest.partition(":")
            for m in re.finditer(pattern, code):
                sites.append((path, int(lno_text), m.group(1),
                              code[m.end() - 1:]))
    group_members: dict[tuple[str, int], set[str]] = {}
    for path, lno, name, call in sites:
        args = atomic_api.split_args(_call_args(call))
        for (hname, idx), evs in helper_evidence.items():
            if hname != name or idx >= len(args):
                continue
            arg = re.sub(r"\s+", "", args[idx])
            if not arg.startswith("&"):
                continue        # passing a pointer on: not one level
            keys, ambiguous = index.resolve(path, None, arg, None)
            stats["helper_calls"] += 1
            for key in keys:
                variables[key].evidence.extend(
                    dataclasses.replace(
                        ev, ambiguous=ambiguous or ev.ambiguous, weak=False,
                        via=f"{name}() at {path}:{lno}")
                    for ev in evs)
                group_members.setdefault((hname, idx), set()).add(key)
    _link_groups(group_members.values(), variables)


def _call_args(call: str) -> str:
    """"(a, b) rest" -> "a, b"."""
    close = lexical.matching_paren(call, 0)
    return call[1:close] if close > 0 else call[1:]


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
