# SPDX-License-Identifier: GPL-2.0-only
"""Plan and apply the conversion of whole conversion groups.

A conversion group is every variable that must change type together:
the classifier's helper groups (all variables passed to one atomic_t *
parameter) and the candidates of one ambiguous operation site (refsweep
cannot tell which struct the site belongs to, so they go together or not
at all).  A group converts only when every member may (the target's
``eligible``) and nothing blocks it (an escaping address, an operation
spatch did not parse, an operation without a counterpart in the target
API).  cocci/convert.cocci then applies the plan; what it did is checked
against the plan, and a group that was not rewritten completely is undone
and listed with the reason.
"""

import json
import os
import re
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, NamedTuple, Optional

from refsweep import atomic_api, refcount_contract, scan, spatch, verdicts
from refsweep import workdir
from refsweep.sitetext import Source
from refsweep.sitetext import split_at as split_at
from refsweep.verdicts import Record

COCCI = workdir.TOP / "cocci" / "convert.cocci"
_UNCHECKED_NAME = re.compile(r"^\+((?:atomic|atomic64|atomic_long)_\w+"
                             r"_unchecked)\(", re.M)

# refcount_t counterparts of atomic_t operations that map by name; the
# others map by the use of their result (refcount_contract.site_op).
REFCOUNT_OPS = refcount_contract.RENAMES

# What an operation site becomes: (new operation, form, why not).  The
# form tells convert.cocci how to rewrite the call: "" renames it,
# "zero"/"nonzero" replace a zero test of its result, "first" keeps only
# its first argument (refcount_contract.site_op).
SiteOp = tuple[Optional[str], str, str]


class ConvertError(Exception):
    """The conversion cannot run at all; the message says why."""


class Target(NamedTuple):
    """What a conversion turns variables into."""
    name: str                       # "atomic_unchecked_t" or "refcount_t"
    virtual: str                    # the -D mode of convert.cocci
    types: frozenset[str]           # atomic types it converts
    eligible: Callable[[Record], bool]
    # what the operation of evidence E on counter NAME becomes
    site_op: Callable[[Optional[Source], Record, str], SiteOp]
    init_names: dict[str, str]
    # the refcount_t contract: every member's whole lifetime must fit
    contract: bool = False


def unchecked_ops(core_dir: Optional[Path]) -> set[str]:
    """The *_unchecked operations the core patch series defines."""
    if core_dir is None:
        return set()
    names: set[str] = set()
    for patch in sorted(core_dir.glob("*.patch")):
        names.update(_UNCHECKED_NAME.findall(
            patch.read_text(encoding="utf-8", errors="replace")))
    return names


def unchecked_target(core_dir: Optional[Path]) -> Target:
    """atomic_unchecked_t, with the operations the core series offers."""
    have = unchecked_ops(core_dir)

    def new_op(op: str) -> Optional[str]:
        name = op + "_unchecked"
        if have and name not in have:
            return None
        dec = atomic_api.decode(op)
        if dec is None or op.startswith(("raw_", "arch_")) or \
                dec.base.startswith("dec_and_") and "lock" in dec.base:
            return None
        return name

    def site_op(_src: Optional[Source], e: Record, _name: str) -> SiteOp:
        new = new_op(str(e["op"]))
        if new is None:
            return None, "", (f"{e['op']} at {e.get('at', '?')} has no "
                              "atomic_unchecked_t counterpart")
        return new, "", ""

    return Target("atomic_unchecked_t", "unchecked",
                  frozenset(atomic_api.ATOMIC_TYPES), verdicts.may_wrap,
                  site_op, {"ATOMIC_INIT": "ATOMIC_UNCHECKED_INIT",
                           "ATOMIC64_INIT": "ATOMIC64_UNCHECKED_INIT",
                           "ATOMIC_LONG_INIT": "ATOMIC_LONG_UNCHECKED_INIT"})


def _refcount_eligible(rec: Record) -> bool:
    return verdicts.decision(rec).final == "refcount" and \
        not verdicts.wraps_by_design(rec)


def _refcount_site_op(src: Optional[Source], e: Record,
                      name: str) -> SiteOp:
    if src is None:
        raise ConvertError("the refcount_t target reads the source")
    return refcount_contract.site_op(src, e, name)


REFCOUNT_TARGET = Target("refcount_t", "refcount", frozenset({"atomic_t"}),
                         _refcount_eligible, _refcount_site_op,
                         {"ATOMIC_INIT": "REFCOUNT_INIT"}, contract=True)


class Group(NamedTuple):
    """Variables that convert together, and why they may not."""
    gid: str
    keys: list[str]
    blockers: list[str]


class Plan(NamedTuple):
    """Everything convert.cocci needs, and what to verify afterwards."""
    cocci: dict[str, Any]
    files: list[str]
    decl_sites: dict[str, list[tuple[str, int]]]    # key -> (file, line)
    op_sites: dict[str, list[tuple[str, int, str]]]  # key -> (f, l, op)
    params: dict[str, list[tuple[str, str]]]         # key -> (fn, param)
    group_files: dict[str, list[str]]                # gid -> files
    # key -> (file, fn, local): the local pointers a key's operations
    # reach it through ("p_id = ip_idents + bucket"), which change type
    # with it in whichever section's pass rewrites the key
    locals: dict[str, list[tuple[str, str, str]]]


# ---------------------------------------------------------------------
# Groups and blockers
# ---------------------------------------------------------------------

def groups(records: list[Record]) -> dict[str, list[str]]:
    """Union of helper groups and ambiguous-site candidates: gid -> keys."""
    parent: dict[str, str] = {r["key"]: r["key"] for r in records}

    def find(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    by_group: dict[str, list[str]] = {}
    by_site: dict[tuple[str, str], list[str]] = {}
    for r in records:
        if r.get("group"):
            by_group.setdefault(r["group"], []).append(r["key"])
        for e in r.get("evidence", []):
            if e.get("ambiguous") and not e.get("weak"):
                by_site.setdefault((e["at"], e["op"]), []).append(r["key"])
    for keys in list(by_group.values()) + list(by_site.values()):
        for k in keys[1:]:
            if k in parent and keys[0] in parent:
                union(keys[0], k)
    out: dict[str, list[str]] = {}
    for k in sorted(parent):
        out.setdefault(find(k), []).append(k)
    return out


def blockers(rec: Record, target: Target, src: Optional[Source] = None,
             contract: Optional[refcount_contract.Contract] = None
             ) -> list[str]:
    """Why REC cannot convert to TARGET (empty: it can).  SRC, the tree's
    text, and CONTRACT are needed by the refcount_t target."""
    key = rec["key"]
    d = verdicts.decision(rec)
    out: list[str] = []
    if not target.eligible(rec):
        out.append(f"{key} is {d.final} ({d.source}: {d.why})")
        return out
    if rec.get("build_blocked"):
        # check --whole found the group does not compile converted.
        out.append(f"{key}: {rec['build_blocked']}")
    if rec["type"] not in target.types:
        out.append(f"{key} is {rec['type']}, which {target.name} cannot hold")
        return out
    parts = _key_parts(key)
    if not parts:
        out.append(f"{key}: unrecognised key")
        return out
    if target.contract:
        if contract is None:
            raise ConvertError(f"{target.name}: no contract to judge {key}")
        out += contract.lifetime(rec, parts[3]).refusals
    for e in rec.get("evidence", []):
        if e.get("weak"):
            continue
        at = e.get("at", "?")
        if e.get("use") == "escape":
            out.append(f"address of {key} escapes at {at} "
                       f"({e.get('detail', 'address taken')})")
            continue
        if "debugfs_create_atomic_t" in str(e.get("detail", "")):
            out.append(f"{key} is exported by debugfs_create_atomic_t() at "
                       f"{at}, which takes atomic_t *")
        if not e.get("parsed", True):
            out.append(f"{e.get('op')} on {key} at {at} is in code spatch "
                       "does not parse")
            continue
        if atomic_api.decode(str(e.get("op"))) is None:
            continue
        new, _form, why = target.site_op(src, e, parts[3])
        if new is None:
            out.append(why)
    return out


def _key_parts(key: str) -> Optional[tuple[str, ...]]:
    """("member", kind, tag, field) or ("var", path, func, name)."""
    m = re.match(r"^(struct|union) (\w+)\.(\w+)$", key)
    if m:
        return ("member", m.group(1), m.group(2), m.group(3))
    parts = key.split(":")
    if len(parts) == 2:
        return ("var", parts[0], "", parts[1])
    if len(parts) == 3:
        return ("var", parts[0], parts[1], parts[2])
    return None


def variable_name(key: str) -> str:
    parts = _key_parts(key)
    return parts[3] if parts else key


def decide_groups(records: list[Record], target: Target,
                  src: Optional[Source] = None,
                  contract: Optional[refcount_contract.Contract] = None
                  ) -> tuple[list[Group], list[Group]]:
    """(convertible groups, blocked groups) among the target's candidates.

    A group is a candidate when some member is eligible for the target;
    groups of only checked variables are simply not conversion material.
    SRC is the tree's text (the refcount_t target reads it), CONTRACT
    the refcount_t contract's judge of it (made when not given).
    """
    by_key = {r["key"]: r for r in records}
    if contract is None and target.contract and src is not None:
        contract = refcount_contract.Contract(src, records)
    if contract is not None:
        src = contract.src
    ok: list[Group] = []
    blocked: list[Group] = []
    for gid, keys in sorted(groups(records).items()):
        if not any(target.eligible(by_key[k]) for k in keys):
            continue
        why = [b for k in keys
               for b in blockers(by_key[k], target, src, contract)]
        (blocked if why else ok).append(Group(gid, keys, why))
    return ok, blocked


# ---------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------

def call_sites(lines: list[str], line: int, op: str
               ) -> list[tuple[int, str]]:
    """(column, counter argument) of every call of OP starting on LINE
    (1-based); the column counts bytes from 0, as spatch's positions do."""
    if not 0 < line <= len(lines):
        return []
    text = "\n".join(lines[line - 1:line + 15])
    first_nl = text.find("\n")
    first_nl = len(text) if first_nl < 0 else first_nl
    dec = atomic_api.decode(op)
    if dec is None:
        return []
    out = []
    for m in re.finditer(r"\b" + re.escape(op) + r"\s*\(", text):
        if m.start() > first_nl:
            break
        depth, i = 0, m.end() - 1
        while i < len(text):
            if text[i] == "(":
                depth += 1
            elif text[i] == ")":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        args = atomic_api.split_args(text[m.end():i])
        counter = atomic_api.counter_arg(dec, args)
        if counter:
            col = len(text[:m.start()].encode("utf-8"))
            out.append((col, re.sub(r"\s+", "", counter)))
    return out


def counters_at(lines: list[str], line: int, op: str) -> list[str]:
    """Counter arguments of every call of OP starting on LINE (1-based)."""
    return [c for _col, c in call_sites(lines, line, op)]


def local_pointer_decl(lines: list[str], line: int, local: str
                       ) -> Optional[int]:
    """The line (1-based) declaring LOCAL as a pointer to an atomic type,
    the nearest one above LINE: the local an operation at LINE reaches a
    counter through ("p_id = ip_idents + bucket; atomic_add_return(n,
    p_id)").  A declaration in another function, or one spatch cannot
    rewrite, leaves the line unchanged, and verify() undoes the group."""
    decl = re.compile(r"\batomic(?:64|_long)?_t\s*\*\s*" + re.escape(local) +
                      r"\s*[;=]")
    for i in range(min(line, len(lines)) - 1, -1, -1):
        if decl.search(lines[i]):
            return i + 1
    return None


def _local_alias(counters: list[str], e: Record, path: str,
                 lines: list[str]) -> Optional[tuple[str, int]]:
    """(local, declaration line) when the counter of evidence E is one
    plain local pointer of its function (resolve's local_alias_ops)."""
    plain = sorted({c for c in counters if re.fullmatch(r"[A-Za-z_]\w*", c)})
    if len(plain) != 1 or len(counters) != 1 or not e.get("function"):
        return None
    _path, line = split_at(e["at"])
    decl = local_pointer_decl(lines, line, plain[0])
    return None if decl is None else (plain[0], decl)


def build_plan(tree: Path, records: list[Record], convert: list[Group],
               target: Target,
               contract: Optional[refcount_contract.Contract] = None
               ) -> tuple[Plan, list[Group]]:
    """The cocci plan for CONVERT; groups whose sites cannot be read move
    to the returned blocked list.  CONTRACT: as for decide_groups."""
    by_key = {r["key"]: r for r in records}
    if contract is None and target.contract:
        contract = refcount_contract.Contract(Source(tree), records)
    src = contract.src if contract is not None else Source(tree)
    members: set[tuple[str, str, str]] = set()
    variables: dict[str, set[tuple[str, str]]] = {}
    ops: dict[str, set[tuple[int, int, str, str, str, str]]] = {}
    params: set[tuple[str, str]] = set()
    files: set[str] = set()
    decl_sites: dict[str, list[tuple[str, int]]] = {}
    op_sites: dict[str, list[tuple[str, int, str]]] = {}
    key_params: dict[str, list[tuple[str, str]]] = {}
    key_locals: dict[str, list[tuple[str, str, str]]] = {}
    blocked: list[Group] = []
    kept: list[Group] = []
    group_files: dict[str, list[str]] = {}
    for g in convert:
        why: list[str] = []
        g_members, g_vars, g_ops, g_params = set(), set(), set(), set()
        g_locals: set[tuple[str, str, str]] = set()
        g_files: set[str] = set()
        for key in g.keys:
            rec = by_key[key]
            parts = _key_parts(key)
            assert parts is not None
            name = parts[3]
            for at in [rec["decl"], *rec.get("also_declared", [])]:
                path, line = split_at(at)
                g_files.add(path)
                decl_sites.setdefault(key, []).append((path, line))
            if parts[0] == "member":
                g_members.add((parts[1], parts[2], parts[3]))
                if contract is not None:
                    # the files of the designated initializers of its
                    # struct the contract read (convert.cocci rewrites
                    # those of a planned member's type)
                    for at in contract.initializers(rec, name):
                        g_files.add(split_at(at)[0])
            else:
                g_vars.add((parts[1], parts[2], parts[3]))
                # and its other declarations ("extern atomic64_t x;" in
                # a header), which must change with the definition
                for path, _line in decl_sites[key]:
                    g_vars.add((path, parts[2], parts[3]))
            for e in rec.get("evidence", []):
                if e.get("weak") or e.get("use") == "escape" or \
                        atomic_api.decode(str(e["op"])) is None:
                    continue
                path, line = split_at(e["at"])
                macro = re.search(r"\(macro (\w+)\(\)\)", str(e["detail"]))
                if macro:
                    # Expanded from a macro at this use: the operation is
                    # in the macro's body, shared with its other uses.
                    why.append(f"{e['op']} at {e['at']}: inside macro "
                               f"{macro.group(1)}(), used for other "
                               "counters too")
                    continue
                new, form, _why = target.site_op(src, e, name)
                assert new is not None
                lines = src.lines(path)
                sites = call_sites(lines, line, e["op"])
                counters = [c for _col, c in sites]
                if e.get("via"):
                    plain = [c for c in counters if re.fullmatch(r"\w+", c)]
                    if len(plain) != 1:
                        why.append(f"{e['op']} at {e['at']}: helper "
                                   "parameter not found")
                        continue
                    g_params.add((e["function"], plain[0]))
                    key_params.setdefault(key, []).append(
                        (e["function"], plain[0]))
                    counters = plain
                else:
                    named = [c for c in counters
                             if refcount_contract.names_var(c, name)]
                    if not named:
                        # reached through a local pointer: it converts too
                        local = _local_alias(counters, e, path, lines)
                        if local is not None:
                            g_locals.add((path, e["function"], local[0]))
                            key_locals.setdefault(key, []).append(
                                (path, e["function"], local[0]))
                            decl_sites.setdefault(key, []).append(
                                (path, local[1]))
                            named = [local[0]]
                    counters = named
                if not counters:
                    why.append(f"{e['op']} at {e['at']}: counter {name} "
                               "not found in the source line")
                    continue
                for col, c in sites:
                    if c in counters:
                        g_ops.add((path, line, col, e["op"], c, new, form))
                op_sites.setdefault(key, []).append((path, line, e["op"]))
                g_files.add(path)
        if why:
            blocked.append(Group(g.gid, g.keys, why))
            continue
        kept.append(g)
        group_files[g.gid] = sorted(g_files)
        members |= g_members
        for path, fn, name in g_vars | g_locals:
            variables.setdefault(path, set()).add((fn, name))
        for path, line, col, op, c, new, form in g_ops:
            ops.setdefault(path, set()).add((line, col, op, c, new, form))
        params |= g_params
        files |= g_files
        for key in g.keys:
            key_params.setdefault(key, [])
    converted_fields = {m[2] for m in members}
    converted_keys = {f"{k} {t}.{x}" for k, t, x in members}
    checked_fields = {variable_name(r["key"]) for r in records
                      if r["scope"] == "member"
                      and r["key"] not in converted_keys}
    cocci = {
        "members": sorted(members),
        "vars": {p: sorted(v) for p, v in sorted(variables.items())},
        "ops": {p: sorted(v) for p, v in sorted(ops.items())},
        "params": sorted(params),
        "inits": sorted(converted_fields - checked_fields),
        "init_names": target.init_names,
    }
    return Plan(cocci, sorted(files), decl_sites, op_sites,
                {k: key_params.get(k, []) for g in kept for k in g.keys},
                group_files,
                {k: sorted(set(key_locals.get(k, [])))
                 for g in kept for k in g.keys}), blocked


def restrict(plan: Plan, keys: set[str], target: Target) -> dict[str, Any]:
    """The cocci plan of PLAN limited to the variables KEYS (and their
    helpers): for rewriting a file one section at a time."""
    members = [m for m in plan.cocci["members"]
               if f"{m[0]} {m[1]}.{m[2]}" in keys]
    local_ptrs = {tuple(fl) for k in keys for fl in plan.locals.get(k, [])}
    variables = {p: [v for v in rows if
                     (f"{p}:{v[0]}:{v[1]}" if v[0] else f"{p}:{v[1]}")
                     in keys or (p, v[0], v[1]) in local_ptrs]
                 for p, rows in plan.cocci["vars"].items()}
    sites = {(f, line, op) for k in keys for f, line, op in
             plan.op_sites.get(k, [])}
    ops = {p: [r for r in rows if (p, r[0], r[2]) in sites]
           for p, rows in plan.cocci["ops"].items()}
    params = sorted({tuple(fp) for k in keys
                     for fp in plan.params.get(k, [])})
    fields = {m[2] for m in members}
    return dict(plan.cocci, members=members,
                vars={p: v for p, v in variables.items() if v},
                ops={p: v for p, v in ops.items() if v},
                params=[list(p) for p in params],
                inits=[f for f in plan.cocci["inits"] if f in fields])


def helper_prototype_files(tree: Path, params: list[tuple[str, str]]
                           ) -> dict[str, list[str]]:
    """Headers that may declare a converted helper's prototype, by helper."""
    names = sorted({fn for fn, _ in params})
    out: dict[str, set[str]] = {n: set() for n in names}
    for i in range(0, len(names), 200):
        pattern = r"\b(" + "|".join(names[i:i + 200]) + r")\s*\("
        res = subprocess.run(["git", "-C", str(tree), "grep", "-oE", pattern,
                              "--", "*.h"], capture_output=True, text=True,
                             check=False)
        for line in res.stdout.splitlines():
            path, _, call = line.partition(":")
            fn = call.rstrip("( \t")
            if fn in out:
                out[fn].add(path)
    return {n: sorted(f) for n, f in out.items()}


# ---------------------------------------------------------------------
# Applying the plan
# ---------------------------------------------------------------------

def run_spatch(tree: Path, plan: dict[str, Any], files: list[str],
               target: Target, jobs: int, timeout: int = 300
               ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Rewrite FILES in place; return (RSDONE records, troubles)."""
    tmp = workdir.sub("tmp")
    plan_path = tmp / f"convert-plan.{os.getpid()}.json"
    plan_path.write_text(json.dumps(plan), encoding="utf-8")
    env = dict(spatch._CLEAN_ENV, REFSWEEP_PLAN=str(plan_path))
    batches = [files[i::max(1, jobs)] for i in range(max(1, jobs))]
    progress = scan.Progress(len(files), label="convert")
    lock = threading.Lock()

    def one(batch: list[str]) -> tuple[list[dict[str, Any]], dict[str, str]]:
        done: list[dict[str, Any]] = []
        troubles: dict[str, str] = {}
        for i in range(0, len(batch), 20):
            chunk = batch[i:i + 20]
            groups_file = tmp / f"convert-groups.{os.getpid()}.{id(chunk)}"
            groups_file.write_text("".join(f"{f}\n\n" for f in chunk),
                                   encoding="utf-8")
            cmd = ["spatch", "--sp-file", str(COCCI), "-D", target.virtual,
                   "--no-includes", "--include-headers", "--in-place",
                   "--timeout", str(timeout), "--very-quiet",
                   "--file-groups", str(groups_file)]
            try:
                res = subprocess.run(cmd, cwd=tree, capture_output=True,
                                     text=True, env=env, check=False,
                                     timeout=timeout * len(chunk) + 60)
                out, err = res.stdout, res.stderr
            except subprocess.TimeoutExpired as e:
                out = spatch._text(e.stdout)
                err = "spatch killed"
            finally:
                groups_file.unlink(missing_ok=True)
            with lock:
                progress.step(len(chunk))
            for line in out.splitlines():
                if line.startswith("RSDONE "):
                    done.append(json.loads(line[7:]))
            # --very-quiet names no file it starts; each exception
            # (timeouts included) comes as "EXN: <exception> in <file>".
            for line in err.splitlines():
                m = spatch._EXN.match(line.strip())
                if m and m.group(2) in chunk:
                    troubles[m.group(2)] = m.group(1)
                elif line == "spatch killed":
                    for f in chunk:
                        troubles.setdefault(f, "batch killed")
        return done, troubles

    results: list[dict[str, Any]] = []
    troubles: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for done, trouble in pool.map(one, [b for b in batches if b]):
            results.extend(done)
            troubles.update(trouble)
    progress.close()
    plan_path.unlink(missing_ok=True)
    return results, troubles


def removed_lines(tree: Path, files: list[str]) -> dict[str, set[int]]:
    """Old line numbers each file's uncommitted changes remove."""
    out: dict[str, set[int]] = {f: set() for f in files}
    if not files:
        return out
    res = subprocess.run(["git", "-C", str(tree), "diff", "-U0", "--",
                          *files], capture_output=True, text=True,
                         check=False)
    current = None
    for line in res.stdout.splitlines():
        if line.startswith("--- a/"):
            current = line[6:]
        elif line.startswith("@@") and current is not None:
            m = re.match(r"@@ -(\d+)(?:,(\d+))?", line)
            if m:
                start, count = int(m.group(1)), int(m.group(2) or "1")
                out.setdefault(current, set()).update(
                    range(start, start + count))
    return out


def verify(tree: Path, plan: Plan, kept: list[Group],
           done: list[dict[str, Any]], troubles: dict[str, str]
           ) -> list[Group]:
    """Groups that were not converted completely, with the reason."""
    removed = removed_lines(tree, plan.files)
    ops_done = {(d["file"], d["line"], d["name"]) for d in done
                if d["kind"] == "op"}
    params_done = {d["name"] for d in done if d["kind"] in ("param",)}
    failed: list[Group] = []
    for g in kept:
        why: list[str] = []
        for key in g.keys:
            for path, line in plan.decl_sites.get(key, []):
                if path in troubles:
                    why.append(f"spatch failed on {path}: {troubles[path]}")
                elif line not in removed.get(path, set()):
                    why.append(f"declaration of {key} at {path}:{line} was "
                               "not rewritten (a declarator list, a nested "
                               "anonymous struct or code spatch does not "
                               "parse)")
            for path, line, op in plan.op_sites.get(key, []):
                if (path, line, op) not in ops_done:
                    why.append(f"{op} at {path}:{line} was not rewritten")
            for fn, param in plan.params.get(key, []):
                if f"{fn}:{param}" not in params_done:
                    why.append(f"helper parameter {fn}({param}) was not "
                               "rewritten")
        if why:
            failed.append(Group(g.gid, g.keys, sorted(set(why))))
    return failed


class Result(NamedTuple):
    """What a conversion did."""
    converted: list[Group]
    blocked: list[Group]
    files: list[str]
    troubles: dict[str, str]


def convert(tree: Path, records: list[Record], target: Target, jobs: int,
            select: Optional[Callable[[Group], bool]] = None,
            rounds: int = 3, timeout: int = 300,
            contract: Optional[refcount_contract.Contract] = None
            ) -> Result:
    """Convert every convertible group (that SELECT accepts) in TREE's
    working copy, which must be clean; groups spatch could not rewrite
    completely are undone and returned as blocked.  CONTRACT: the
    refcount_t contract's judge of TREE's text, when one was made."""
    if contract is None and target.contract:
        contract = refcount_contract.Contract(Source(tree), records)
    ok, blocked = decide_groups(records, target, contract=contract)
    if select is not None:
        ok = [g for g in ok if select(g)]
        blocked = [g for g in blocked if select(g)]
    # Later rounds restore and redo only the files of the groups that
    # failed: every other file keeps its rewrite.
    rerun: Optional[set[str]] = None
    done_all: list[dict[str, Any]] = []
    troubles_all: dict[str, str] = {}
    for _ in range(rounds):
        plan, unreadable = build_plan(tree, records, ok, target, contract)
        blocked += unreadable
        unreadable_ids = {g.gid for g in unreadable}
        ok = [g for g in ok if g.gid not in unreadable_ids]
        protos = helper_prototype_files(
            tree, [p for ps in plan.params.values() for p in ps])
        files = sorted(set(plan.files) |
                       {f for fs in protos.values() for f in fs})
        plan = plan._replace(files=files)
        todo = files if rerun is None else sorted(set(files) & rerun)
        done, troubles = run_spatch(tree, plan.cocci, todo, target, jobs,
                                    timeout)
        done_all = [d for d in done_all if d["file"] not in todo] + done
        troubles_all = {f: t for f, t in troubles_all.items()
                        if f not in todo}
        troubles_all.update(troubles)
        failed = verify(tree, plan, ok, done_all, troubles_all)
        if not failed:
            return Result(ok, blocked, _changed_files(tree), troubles_all)
        failed_ids = {g.gid for g in failed}
        rerun = set()
        for g in failed:
            rerun.update(plan.group_files.get(g.gid, []))
            for k in g.keys:
                for fn, _param in plan.params.get(k, []):
                    rerun.update(protos.get(fn, []))
        subprocess.run(["git", "-C", str(tree), "checkout", "-q", "--",
                        *sorted(rerun)], check=True)
        blocked += failed
        ok = [g for g in ok if g.gid not in failed_ids]
    raise ConvertError(f"conversion did not settle after {rounds} rounds")


def _changed_files(tree: Path) -> list[str]:
    res = subprocess.run(["git", "-C", str(tree), "diff", "--name-only"],
                         capture_output=True, text=True, check=True)
    return sorted(res.stdout.split())


def _reset(tree: Path) -> None:
    subprocess.run(["git", "-C", str(tree), "checkout", "-q", "--", "."],
                   check=True)
