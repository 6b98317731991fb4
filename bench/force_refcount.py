#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""A test branch: convert the named counters to refcount_t regardless.

    bench/force_refcount.py --tree TREE --verdicts FILE --out DIR KEY...

Builds the plan for KEY... as convert does, but without asking the
classifier's verdict or the refcount_t contract, runs cocci/convert.cocci
with it in a worktree of TREE's base, commits the result and writes it as
a series directory (DIR/series and the patch) that core-patch/workload/run
applies with --extra.  For proving that the runtime check catches what the
contract refuses (struct cgroup_subsys_state.online_cnt counts from 0:
every css that comes online is an "addition on 0").  Never for mailing.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from refsweep import convert, split, verdicts, workdir  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--verdicts", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("keys", nargs="+")
    args = ap.parse_args()
    records = verdicts.read(args.verdicts)
    have = {r["key"] for r in records}
    missing = [k for k in args.keys if k not in have]
    if missing:
        print(f"force_refcount: no such variable: {', '.join(missing)}",
              file=sys.stderr)
        return 2
    target = convert.REFCOUNT_TARGET
    wt = workdir.sub("force") / f"{args.tree.resolve().name}-refcount"
    start = split.prepare_worktree(args.tree.resolve(), wt, None)
    groups = [convert.Group(k, [k], []) for k in args.keys]
    plan, unreadable = convert.build_plan(wt, records, groups, target)
    if unreadable:
        for g in unreadable:
            print(f"force_refcount: {g.keys[0]}: {'; '.join(g.blockers)}",
                  file=sys.stderr)
        return 1
    done, troubles = convert.run_spatch(wt, plan.cocci, plan.files, target,
                                        1)
    failed = convert.verify(wt, plan, groups, done, troubles)
    if failed:
        for g in failed:
            print(f"force_refcount: {g.keys[0]}: {'; '.join(g.blockers)}",
                  file=sys.stderr)
        return 1
    files = split.git(wt, "diff", "--name-only").split()
    split.git(wt, "add", "--", *files)
    msg = ("TEST ONLY: force " + ", ".join(args.keys) + " to refcount_t\n\n"
           "Converted regardless of the classifier and of the refcount_t\n"
           "contract (bench/force_refcount.py), to prove that the runtime\n"
           "check catches a counter that does not fit refcount_t.  Never\n"
           "for mailing.\n")
    split.git(wt, "-c", "user.name=refsweep", "-c",
              "user.email=refsweep@localhost", "commit", "-q", "-m", msg,
              env=split.fixed_env(wt, start))
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.patch"):
        old.unlink()
    split.git(wt, "format-patch", "-q", "--no-signature", "-o", str(out),
              f"{start}..HEAD")
    names = sorted(p.name for p in out.glob("*.patch"))
    (out / "series").write_text("".join(f"{n}\n" for n in names),
                                encoding="utf-8")
    print(f"force_refcount: {len(files)} files, {out / names[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
