# SPDX-License-Identifier: GPL-2.0-only
"""One commit per MAINTAINERS section, each on its own branch.

Every section's commit is made from the same starting point (the base
commit plus the core patch series), so each subsystem's series applies
and builds on its own, as a maintainer would take it.  A conversion group
belongs to the section owning its declaration; a group whose users lie
in other sections still goes in that one commit (a type cannot change in
halves), and those sections' maintainers get a copy from
get_maintainer.pl.  The "all" branch stacks every section's commit.

Commits carry fixed dates (the base commit's) and the identity from git
config, so regenerating gives the same commits, byte for byte.
"""

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any, Callable, Optional

from refsweep import convert, maintainers, refcount_contract, verdicts
from refsweep import workdir
from refsweep import tree as tree_mod
from refsweep.convert import Group, Target
from refsweep.sitetext import Source
from refsweep.verdicts import Record

BRANCH = "refsweep"


class SplitError(Exception):
    """The series cannot be built; the message says why."""


def identity() -> tuple[str, str]:
    """The submitter from git config (never a placeholder)."""
    def get(key: str) -> str:
        res = subprocess.run(["git", "-C", str(workdir.TOP), "config", key],
                             capture_output=True, text=True, check=False)
        return res.stdout.strip()
    name, email = get("user.name"), get("user.email")
    if not name or not email:
        raise SplitError("git config user.name/user.email are not set: the "
                         "patches need the submitter's identity")
    return name, email


def git(tree: Path, *args: str, env: Optional[dict[str, str]] = None,
        check: bool = True) -> str:
    res = subprocess.run(["git", "-C", str(tree), *args], capture_output=True,
                         text=True, env=env, check=False)
    if check and res.returncode != 0:
        raise SplitError(f"git {' '.join(args[:3])} in {tree}: "
                         f"{res.stderr.strip()[:300]}")
    return res.stdout


def fixed_env(tree: Path, base: str) -> dict[str, str]:
    """Author and committer: from git config; dates: the base commit's."""
    name, email = identity()
    date = git(tree, "log", "-1", "--format=%aD", base).strip()
    return dict(os.environ, GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email,
                GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email,
                GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)


def core_series_dir(tree: Path, given: Optional[Path]) -> Optional[Path]:
    """The core series directory: GIVEN, else core-patch/atomic/X.Y/, else
    the single core-patch/series of revision 2 (6.12 only)."""
    if given is not None:
        if not (given / "series").is_file():
            raise SplitError(f"{given}: no 'series' file: not a core patch "
                             "series directory")
        return given
    version = ".".join(_tree_version(tree).split(".")[:2])
    for cand in (workdir.TOP / "core-patch" / "atomic" / version,
                 workdir.TOP / "core-patch" if version == "6.12" else None):
        if cand is not None and (cand / "series").is_file():
            return cand
    return None


def _tree_version(tree: Path) -> str:
    if not (tree / "Makefile").is_file():
        return "?"
    return tree_mod.kernel_version(tree)


def prepare_worktree(tree: Path, wt: Path, core: Optional[Path]) -> str:
    """WT: a worktree of TREE's base with the core series applied (with
    fixed dates); return the commit the sections start from."""
    base = git(tree, "rev-list", "--max-parents=0", "HEAD").split()[-1]
    if not (wt / ".git").exists():
        git(tree, "worktree", "prune")
        wt.parent.mkdir(parents=True, exist_ok=True)
        git(tree, "worktree", "add", "-q", "--detach", str(wt), base)
    git(wt, "am", "--abort", check=False)
    git(wt, "checkout", "-q", "--detach", base)
    git(wt, "reset", "-q", "--hard", base)
    git(wt, "clean", "-q", "-fdx")
    env = fixed_env(wt, base)
    if core is not None:
        for line in (core / "series").read_text().splitlines():
            name = line.strip()
            if not name or name.startswith("#"):
                continue
            res = subprocess.run(["git", "-C", str(wt), "am", "-q",
                                  "--committer-date-is-author-date",
                                  str(core / name)], capture_output=True,
                                 text=True, env=env, check=False)
            if res.returncode != 0:
                git(wt, "am", "--abort", check=False)
                raise SplitError(f"core patch {core / name} does not apply "
                                 f"to {tree}: {res.stderr.strip()[:200]}")
    return git(wt, "rev-parse", "HEAD").strip()


# ---------------------------------------------------------------------
# Commit messages
# ---------------------------------------------------------------------

_WHY_UNCHECKED = """\
With CONFIG_HARDENED_ATOMIC (PAX_REFCOUNT from PaX, revived), a signed
overflow of atomic_t, atomic64_t or atomic_long_t is caught, reported and
the counter saturated, so that an overflowed reference count can no longer
lead to a use-after-free. Counters that are allowed to wrap (statistics,
identifiers, sequence and generation numbers, state values) must not be
checked: they are switched to atomic_unchecked_t and the *_unchecked()
operations, which behave exactly like the plain atomics do today.

No functional change without CONFIG_HARDENED_ATOMIC."""

_WHY_REFCOUNT = """\
refcount_t saturates instead of wrapping on overflow and underflow and
warns, which turns a reference count overflow into a leak instead of a
use-after-free. Each operation on these counters maps onto the refcount_t
API: by name, or, where the result is used, onto the refcount_t operation
that returns what the code tests (atomic_dec_return() == 0 becomes
refcount_dec_and_test(), atomic_add_unless(v, 1, 0) refcount_inc_not_zero()).

refcount_t also has a contract atomic_t does not: refcount_inc() on 0
WARNs ("addition on 0; use-after-free") and a refcount_dec() that reaches
0 WARNs ("decrement hit 0; leaking memory"). Each counter below starts at
1 or more, is taken from 0 only by inc_not_zero, and reaches 0 only in a
put that tests for it and then frees; the code that shows it is named."""

_CREDIT = """\
PAX_REFCOUNT and atomic_unchecked_t are the work of the PaX Team; the
HARDENED_ATOMIC RFC (2016, Elena Reshetova, Hans Liljestrand, David
Windsor, Kees Cook) proposed them for mainline."""


def _wrap(text: str, indent: str = "  ", sub: str = "    ") -> list[str]:
    return textwrap.wrap(text, 72, initial_indent=indent,
                         subsequent_indent=sub, break_long_words=False,
                         break_on_hyphens=False)


def variable_line(rec: Record) -> str:
    """One line per variable: verdict, who decided, decisive evidence."""
    d = verdicts.decision(rec)
    who = "human" if d.source == "human" else "machine"
    what = d.final
    if rec.get("wrap_by_design") and d.final not in verdicts.WRAP_SAFE:
        what = f"wraps by design (rule verdict {d.final})"
    ev = verdicts.decisive_evidence(rec) or "no operations"
    reason = f"; {d.why}" if d.why else ""
    return f"{rec['key']}: {what} ({who}{reason}): {ev}"


def _listed(items: list[str], most: int = 4) -> list[str]:
    if len(items) <= most:
        return items
    return items[:most] + [f"and {len(items) - most} more"]


def lifetime_lines(rec: Record, life: refcount_contract.Lifetime
                   ) -> list[str]:
    """Why REC meets refcount_t's contract, in the words a maintainer
    checks first: where it starts, who takes references, where the last
    put frees, what each plain decrement gives back."""
    out = _wrap(f"{rec['key']}:")
    for v in life.starts:
        out += _wrap(f"starts at {v.n}: {v.how} at {v.at}", "    ",
                     "      ")
    takes = _listed(life.takes)
    out += _wrap("references taken: " + (", ".join(takes) if takes
                                          else "none in sight"),
                 "    ", "      ")
    for put in _listed(life.puts):
        out += _wrap(f"last put: {put}", "    ", "      ")
    if not life.puts:
        out += _wrap("last put: none in sight (the count never reaches 0 "
                     "here)", "    ", "      ")
    for back in life.given_back:
        out += _wrap(f"plain decrement: {back}", "    ", "      ")
    return out


def message(subject_prefix: str, section: str, recs: list[Record],
            target: Target, command: str, cocci_rev: str,
            cross: list[str], sob: tuple[str, str],
            lifetimes: Optional[dict[str, refcount_contract.Lifetime]]
            = None) -> str:
    """The commit message of one section's conversion."""
    n = len(recs)
    what = "counter" if n == 1 else f"{n} counters"
    if target.name == "refcount_t":
        subject = f"{subject_prefix}convert {what} from atomic_t to " \
                  "refcount_t"
        body = [_WHY_REFCOUNT]
    else:
        subject = f"{subject_prefix}use atomic_unchecked_t for {what} " \
                  "that may wrap"
        body = [_WHY_UNCHECKED]
    lines = ["Converted (verdict, who decided, decisive evidence):", ""]
    for rec in recs:
        lines += _wrap(variable_line(rec))
    body.append("\n".join(lines))
    if lifetimes:
        lines = ["Why each counter meets the refcount_t contract:", ""]
        for rec in recs:
            if rec["key"] in lifetimes:
                lines += lifetime_lines(rec, lifetimes[rec["key"]])
        body.append("\n".join(lines))
    flagged = [r for r in recs if r.get("wrap_by_design")]
    if flagged:
        body.append("\n".join(
            ["Wraps by design although it may count references: a "
             "checked counter", "would break it, but it needs a human "
             "look:", ""] +
            [ln for r in flagged for ln in _wrap(
                f"{r['key']}: {'; '.join(r.get('wrap_evidence', []))}")]))
    if cross:
        body.append("\n".join(
            ["Users outside this section, changed with the type:", ""] +
            [ln for f in cross for ln in _wrap(f)]))
    body.append("\n".join(
        ["Generated with refsweep's cocci/convert.cocci "
         f"(refsweep {cocci_rev}):", ""] + _wrap(command)))
    if target.name != "refcount_t":
        body.append(_CREDIT)
    body.append(f"Signed-off-by: {sob[0]} <{sob[1]}>")
    return subject + "\n\n" + "\n\n".join(body) + "\n"


# ---------------------------------------------------------------------
# The whole run
# ---------------------------------------------------------------------

def refsweep_revision() -> str:
    res = subprocess.run(["git", "-C", str(workdir.TOP), "rev-parse",
                          "--short=12", "HEAD"], capture_output=True,
                         text=True, check=False)
    return res.stdout.strip() or "unknown"


def section_of(owners: maintainers.Owners, recs: dict[str, Record],
               g: Group) -> maintainers.Section:
    decls = sorted(convert.split_at(recs[k]["decl"])[0] for k in g.keys)
    return owners.owner(decls[0])


def run(tree: Path, wt: Path, records: list[Record], target: Target,
        core: Optional[Path], jobs: int, command: str,
        select: Optional[Callable[[str, str], bool]] = None,
        log: Callable[[str], None] = print,
        timeout: int = 300) -> dict[str, Any]:
    """Convert, one commit per section; return (and store) the summary.

    SELECT(section name, declaration path) limits the run.
    """
    start = prepare_worktree(tree, wt, core if target.virtual ==
                             "unchecked" else None)
    # An earlier run's sections that this one does not make again must
    # not be mistaken for its own (the branches are the repository's).
    stale = git(wt, "branch", "--list", f"{BRANCH}/{target.virtual}/*",
                "--format=%(refname:short)").split()
    if stale:
        git(wt, "branch", "-D", *stale)
    env = fixed_env(wt, start)
    sob = identity()
    owners = maintainers.Owners(wt)
    by_key = {r["key"]: r for r in records}
    src = Source(wt)
    contract = refcount_contract.Contract(src, records) \
        if target.contract else None
    ok, blocked = convert.decide_groups(records, target, src, contract)
    by_section: dict[str, list[Group]] = {}
    sections: dict[str, maintainers.Section] = {}
    for g in ok + blocked:
        sec = section_of(owners, by_key, g)
        decl = convert.split_at(by_key[g.keys[0]]["decl"])[0]
        if select is not None and not select(sec.name, decl):
            continue
        sections[sec.name] = sec
        by_section.setdefault(sec.name, []).append(g)
    summary: dict[str, Any] = {
        "tree": str(tree), "worktree": str(wt), "target": target.name,
        "start": start, "core": str(core) if core else None,
        "command": command, "sections": [], "blocked": []}
    rev = refsweep_revision()
    # One pass over every file for the whole selection: each file is
    # parsed once, and groups spatch cannot rewrite completely drop out.
    wanted = {g.gid for gs in by_section.values() for g in gs}
    git(wt, "checkout", "-q", "-f", "--detach", start)
    res = convert.convert(wt, records, target, jobs,
                          select=lambda g: g.gid in wanted, timeout=timeout,
                          contract=contract)
    converted = {f: (wt / f).read_bytes() for f in res.files}
    convert._reset(wt)
    gsection = {g.gid: name for name, gs in by_section.items() for g in gs}
    for g in res.blocked:
        summary["blocked"].append({"section": gsection.get(g.gid, "?"),
                                   "keys": g.keys, "reasons": g.blockers})
    plan, _ = convert.build_plan(wt, records, res.converted, target,
                                 contract)
    protos = convert.helper_prototype_files(
        wt, [p for ps in plan.params.values() for p in ps])
    sec_groups: dict[str, list[Group]] = {}
    sec_files: dict[str, set[str]] = {}
    for g in res.converted:
        name = gsection[g.gid]
        sec_groups.setdefault(name, []).append(g)
        gfiles = set(plan.group_files.get(g.gid, []))
        for k in g.keys:
            for fn, _param in plan.params.get(k, []):
                gfiles.update(protos.get(fn, []))
        sec_files.setdefault(name, set()).update(
            f for f in gfiles if f in converted)
    touching: dict[str, set[str]] = {}
    for name, fset in sec_files.items():
        for f in fset:
            touching.setdefault(f, set()).add(name)
    for name in sorted(sec_groups, key=maintainers.slug):
        sec = sections[name]
        slug = maintainers.slug(name)
        branch = f"{BRANCH}/{target.virtual}/{slug}"
        git(wt, "checkout", "-q", "-f", "-B", branch, start)
        keys = sorted(k for g in sec_groups[name] for k in g.keys)
        shared = sorted(f for f in sec_files[name] if len(touching[f]) > 1)
        for f in sorted(sec_files[name]):
            if f not in shared:
                (wt / f).write_bytes(converted[f])
        if shared:
            convert.run_spatch(wt, convert.restrict(plan, set(keys), target),
                               shared, target, jobs, timeout)
        files = git(wt, "diff", "--name-only").split()
        if not files:
            git(wt, "checkout", "-q", "-f", "--detach", start)
            git(wt, "branch", "-D", branch)
            continue
        cross = sorted(f for f in files if owners.owner(f).name != name)
        prefix = maintainers.subject_prefix(
            wt, [f for f in files if f not in cross] or files)
        lifetimes = {k: contract.lifetime(by_key[k], convert.variable_name(k))
                     for k in keys} if contract else None
        msg = message(prefix, name, [by_key[k] for k in keys], target,
                      command, rev, cross, sob, lifetimes)
        git(wt, "add", "-A", "--", *files)
        subprocess.run(["git", "-C", str(wt), "commit", "-q", "-F", "-"],
                       input=msg, text=True, env=env, check=True,
                       capture_output=True)
        commit = git(wt, "rev-parse", "HEAD").strip()
        summary["sections"].append({
            "section": name, "slug": slug, "subject_prefix": prefix,
            "branch": branch, "commit": commit, "variables": keys,
            "groups": len(sec_groups[name]), "files": files,
            "shared_files": shared, "cross_section_files": cross,
            "lists": sec.lists})
        log(f"convert: {name}: {len(keys)} variables, {len(files)} files")
    git(wt, "checkout", "-q", "-f", "--detach", start)
    summary["all_branch"] = stack_all(wt, start, summary, env, target, plan,
                                      converted, jobs)
    summary_path(wt).write_text(json.dumps(summary, indent=1) + "\n",
                                encoding="utf-8")
    return summary


def stack_all(wt: Path, start: str, summary: dict[str, Any],
              env: dict[str, str], target: Target, plan: convert.Plan,
              converted: dict[str, bytes], jobs: int) -> dict[str, Any]:
    """Every section's commit, stacked on one branch: the whole churn.

    Cherry-picking would conflict where two sections change neighbouring
    lines of one file; instead a shared file is rewritten from its
    unconverted text with every section so far, so that the branch ends
    exactly at the one-pass conversion.
    """
    branch = f"{BRANCH}/{target.virtual}/all"
    git(wt, "checkout", "-q", "-f", "-B", branch, start)
    done: set[str] = set()
    for sec in summary["sections"]:
        done |= set(sec["variables"])
        for f in sec["files"]:
            if f not in sec["shared_files"]:
                (wt / f).write_bytes(converted[f])
        if sec["shared_files"]:
            git(wt, "checkout", start, "--", *sec["shared_files"])
            convert.run_spatch(wt, convert.restrict(plan, done, target),
                               sec["shared_files"], target, jobs)
        msg = git(wt, "log", "-1", "--format=%B", sec["commit"])
        git(wt, "add", "-A", "--", *sec["files"])
        subprocess.run(["git", "-C", str(wt), "commit", "-q",
                        "--allow-empty", "-F", "-"], input=msg, text=True,
                       env=env, check=True, capture_output=True)
    head = git(wt, "rev-parse", "HEAD").strip()
    differs = [f for f, data in converted.items()
               if (wt / f).read_bytes() != data]
    git(wt, "checkout", "-q", "-f", "--detach", start)
    return {"branch": branch, "commit": head, "differs": sorted(differs)}


def summary_path(wt: Path) -> Path:
    """Where a conversion worktree's summary lives (next to it)."""
    return wt.parent / f"{wt.name}.convert.json"
