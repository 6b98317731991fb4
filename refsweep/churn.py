# SPDX-License-Identifier: GPL-2.0-only
"""The convert, series and check commands: arguments and printed counts."""

import argparse
import json
import re
import shlex
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Optional

from refsweep import convert, split, verdicts, workdir


def _targets(core: Optional[Path]) -> dict[str, convert.Target]:
    return {"atomic_unchecked_t": convert.unchecked_target(core),
            "refcount_t": convert.REFCOUNT_TARGET}


# Refusals of the refcount_t contract (refsweep/refcount_contract.py),
# by the words of their reason.
CONTRACT_KINDS = (
    (" starts at or is set to ", "starts at or is set to 0 (or less)"),
    ("a value not shown to be 1 or more", "set to a value not shown >= 1"),
    ("starts at 0 (static storage", "static, starts at 0"),
    ("has no initial value in sight", "no initial value in sight"),
    ("after a zeroing allocation", "taken right after a zeroing allocation"),
    ("it starts at 0 or at garbage", "allocated without a set"),
    ("whose allocations are not followed", "embedded, allocations not followed"),
    ("neither frees nor releases", "reaches 0 without freeing"),
    ("not shown to stay above 0", "plain decrement may reach 0"),
)


def contract_kind(reason: str) -> Optional[str]:
    """The contract rule REASON refuses under, if it is one."""
    for needle, kind in CONTRACT_KINDS:
        if needle in reason:
            return kind
    return None


def reason_kind(reason: str) -> str:
    """A short category for a reason a group stayed unconverted."""
    m = re.search(r" is (refcount|usage|unknown|statistic|id|state|wraps) \(",
                  reason)
    if m:
        return f"a member is {m.group(1)}"
    kind = contract_kind(reason)
    if kind is not None:
        return f"refcount_t contract: {kind}"
    for needle, kind in (("breaks the build", "breaks the whole-churn build"),
                         ("not rewritten", "spatch did not rewrite a site"),
                         ("escapes", "address escapes"),
                         ("debugfs_create_atomic_t", "exported by debugfs"),
                         ("does not parse", "op in unparsed code"),
                         ("counterpart", "op without a counterpart"),
                         ("cannot hold", "type not convertible"),
                         ("not found", "site not found in source"),
                         ("inside macro", "op inside a shared macro"),
                         ("spatch failed", "spatch failed on a file")):
        if needle in reason:
            return kind
    return "other"


def blocked_counts(blocked: list[dict[str, Any]]) -> Counter[str]:
    """Groups left unconverted, by the category of their first reason."""
    return Counter(reason_kind(b["reasons"][0]) for b in blocked)


def contract_refusals(blocked: list[dict[str, Any]]) -> Counter[str]:
    """Variables refused by each rule of the refcount_t contract."""
    out: Counter[str] = Counter()
    for b in blocked:
        seen = set()
        for r in b["reasons"]:
            kind = contract_kind(r)
            key = r.split(" ", 1)[0]
            m = re.search(r"((?:struct|union) \w+\.\w+|[\w./-]+:\w+(?::\w+)?)"
                          r":? (?:starts|is set|has no|reaching|right after|"
                          r"struct )"
                          r"|(?:plain decrement of|takes) ((?:struct|union) "
                          r"\w+\.\w+|[\w./-]+:\w+(?::\w+)?)", r)
            if m:
                key = m.group(1) or m.group(2)
            if kind and (kind, key) not in seen:
                seen.add((kind, key))
                out[kind] += 1
    return out


def blocking_ops(blocked: list[dict[str, Any]]) -> Counter[str]:
    """For refcount_t: the operations that block conversions, counted."""
    out: Counter[str] = Counter()
    for b in blocked:
        for r in b["reasons"]:
            m = re.match(r"^(\w+) at .* has no ", r)
            if m:
                out[m.group(1)] += 1
    return out


def print_summary(summary: dict[str, Any], elapsed: float,
                  out: Callable[[str], None] = print) -> None:
    secs = summary["sections"]
    variables = sum(len(s["variables"]) for s in secs)
    groups = sum(s["groups"] for s in secs)
    files = len({f for s in secs for f in s["files"]})
    blocked = summary["blocked"]
    out(f"convert ({summary['target']}): {variables} variables in {groups} "
        f"groups, {files} files, {len(secs)} subsystems, {len(secs)} "
        f"patches in {elapsed:.0f}s")
    out(f"  branches: {split.BRANCH}/*  whole churn: "
        f"{summary['all_branch']['branch']} "
        f"({len(summary['all_branch']['differs'])} files differ from the "
        "one-pass conversion)")
    nvars = sum(len(b["keys"]) for b in blocked)
    out(f"  left unconverted: {len(blocked)} groups ({nvars} variables) "
        "that had a candidate member:")
    for kind, n in blocked_counts(blocked).most_common():
        out(f"    {n:6d}  {kind}")
    refused = contract_refusals(blocked)
    if refused:
        ngroups = sum(1 for b in blocked
                      if any(contract_kind(r) for r in b["reasons"]))
        out(f"  refused by the refcount_t contract: {ngroups} groups; "
            "variables by rule (one may break several):")
        for kind, n in refused.most_common():
            out(f"    {n:6d}  {kind}")
    ops = blocking_ops(blocked)
    if ops and summary["target"] == "refcount_t":
        out("  blocking operations: " + ", ".join(
            f"{op} {n}" for op, n in ops.most_common(8)))
    out(f"  summary: {split.summary_path(Path(summary['worktree']))}")


def mark_build_blocked(records: list[dict[str, Any]],
                       files: list[Path]) -> None:
    """Mark the variables that check --whole's build-blocked.json FILES
    name, so that their groups stay unconverted with the error."""
    by_key = {r["key"]: r for r in records}
    for path in files:
        try:
            blocked = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise convert.ConvertError(f"--blocked {path}: {e}") from e
        if not isinstance(blocked, dict) or not all(
                isinstance(v, str) for v in blocked.values()):
            raise convert.ConvertError(
                f"--blocked {path}: not a JSON object of key: reason "
                "(check --whole's build-blocked.json)")
        for key, reason in blocked.items():
            if key in by_key:
                by_key[key].setdefault("build_blocked", reason)


def cmd_convert(args: argparse.Namespace) -> int:
    start = time.monotonic()
    tree_dir: Path = args.tree
    vpath = Path(args.verdicts) if args.verdicts else \
        workdir.sub("verdicts") / f"{tree_dir.name}.jsonl"
    try:
        records = verdicts.read(vpath)
        mark_build_blocked(records, [Path(b) for b in args.blocked])
        core = split.core_series_dir(tree_dir, Path(args.core).resolve()
                                     if args.core else None)
        target = _targets(core)[args.to]
        wt = Path(args.worktree).resolve() if args.worktree else \
            workdir.sub("convert") / f"{tree_dir.name}-{target.virtual}"
        subsystems = set(args.subsystem)
        paths = [p.rstrip("/") for p in args.paths]

        def select(section: str, decl: str) -> bool:
            if not subsystems and not paths:
                return True
            return section in subsystems or any(
                decl == p or decl.startswith(p + "/") for p in paths)

        command = "refsweep convert --tree " + shlex.quote(tree_dir.name) + \
            f" --verdicts {shlex.quote(vpath.name)}" + \
            (f" --to {args.to}" if args.to != "atomic_unchecked_t" else "") + \
            "".join(f" --subsystem {shlex.quote(s)}"
                    for s in sorted(subsystems)) + \
            "".join(f" --blocked {shlex.quote(Path(b).name)}"
                    for b in args.blocked) + \
            "".join(f" {shlex.quote(p)}" for p in paths)
        summary = split.run(tree_dir, wt, records, target, core, args.jobs,
                            command, select, timeout=args.timeout)
    except (verdicts.VerdictError, split.SplitError,
            convert.ConvertError) as e:
        print(f"refsweep: error: {e}", file=sys.stderr)
        return 1
    print_summary(summary, time.monotonic() - start)
    return 0


def cmd_series(args: argparse.Namespace) -> int:
    from refsweep import series
    try:
        index = series.write_all(args.tree, Path(args.out))
    except (series.SeriesError, split.SplitError) as e:
        print(f"refsweep: error: {e}", file=sys.stderr)
        return 1
    npatches = sum(len(s["patches"]) for s in index)
    print(f"series: {len(index)} series, {npatches} patches -> "
          f"{Path(args.out) / 'index.json'}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from refsweep import check
    build = Path(args.build) if args.build else None
    if args.whole and args.only:
        print("refsweep: error: --whole applies every series; it does not "
              "take --only", file=sys.stderr)
        return 2
    arch = check.ARCHES[args.arch]
    try:
        if args.whole:
            ok = check.whole(Path(args.series), args.jobs, args.config, build,
                             arch=arch)
        else:
            ok = check.run(Path(args.series), args.jobs, args.only,
                           args.config, build, arch=arch)
    except check.CheckError as e:
        print(f"refsweep: error: {e}", file=sys.stderr)
        return 1
    return 0 if ok else 1


def add_parsers(sub: Any, jobs: int,
                tree_arg: Callable[[str], Path]) -> None:
    """The convert, series and check subcommands."""
    s = sub.add_parser("convert", help="convert wrap-safe counters, one "
                       "commit per MAINTAINERS section")
    s.add_argument("--tree", type=tree_arg, required=True)
    s.add_argument("--verdicts", help="verdict JSON lines (default: the "
                   "work dir's verdicts/TREE.jsonl)")
    s.add_argument("--to", choices=["atomic_unchecked_t", "refcount_t"],
                   default="atomic_unchecked_t")
    s.add_argument("--core", help="core patch series directory (default: "
                   "core-patch/atomic/X.Y)")
    s.add_argument("--worktree", help="where to build the branches "
                   "(default: work dir convert/TREE-TARGET)")
    s.add_argument("--subsystem", action="append", default=[],
                   help="MAINTAINERS section name (repeatable)")
    s.add_argument("--jobs", "-j", type=int, default=jobs)
    s.add_argument("--timeout", type=int, default=300,
                   help="spatch seconds per file (a file that times out "
                        "keeps its groups unconverted)")
    s.add_argument("--blocked", action="append", default=[],
                   metavar="FILE",
                   help="keep the variables of check --whole's "
                        "build-blocked.json unconverted (repeatable)")
    s.add_argument("paths", nargs="*", help="declarations under these paths")
    s.set_defaults(func=cmd_convert)

    s = sub.add_parser("series", help="format-patch one series per section")
    s.add_argument("--tree", type=tree_arg, required=True,
                   help="a conversion worktree (refsweep convert)")
    s.add_argument("--out", required=True)
    s.set_defaults(func=cmd_series)

    s = sub.add_parser("check", help="apply, checkpatch, build and sparse "
                       "every patch of the series")
    s.add_argument("--series", required=True, help="refsweep series --out")
    s.add_argument("--only", action="append", default=[],
                   help="check only this series slug (repeatable)")
    s.add_argument("--config", default="allmodconfig",
                   help="allmodconfig (default), defconfig or a config "
                        "fragment file merged into defconfig")
    s.add_argument("--build", help="build directory (default: work dir)")
    s.add_argument("--arch", choices=["x86_64", "arm64"], default="x86_64",
                   help="architecture to build for (arm64: with "
                        "aarch64-linux-gnu-gcc; results in "
                        "check-arm64.json, whole-churn-arm64.json)")
    s.add_argument("--whole", action="store_true",
                   help="instead: apply every series at once and compile "
                        "every touched file once, without sparse "
                        "(DIR/whole-churn.json)")
    s.add_argument("--jobs", "-j", type=int, default=jobs)
    s.set_defaults(func=cmd_check)
