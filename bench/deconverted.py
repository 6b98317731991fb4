#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Correctness benchmark on real refcounts: the de-converted tree.

Builds (or reuses) a copy of the tree in which every refcount_t is an
atomic_t again (bench/deconvert.py), classifies it, and reports the share
of the former refcount_t variables classified refcount/usage, and every one
classified statistic/id/state or flagged wrap-by-design (convert makes
those atomic_unchecked_t): each of those is a safety failure.

    bench/deconverted.py [--tree DIR] [--jobs N]
"""

import argparse
import collections
import subprocess
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP))
sys.path.insert(0, str(TOP / "bench"))

from refsweep import cli, workdir  # noqa: E402
import verdicts  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tree", type=Path,
                   default=workdir.sub("trees") / "linux-6.12")
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    out = workdir.sub("trees") / (args.tree.name + "-deconverted")
    decl_list = workdir.sub("bench") / "deconverted-decls.tsv"
    subprocess.run([sys.executable, str(TOP / "bench" / "deconvert.py"),
                    "--tree", str(args.tree), "--out", str(out),
                    "--list", str(decl_list)], check=True)
    json_out = workdir.sub("verdicts") / (out.name + ".jsonl")
    cli.main(["classify", "--tree", str(out), "--jobs", str(args.jobs),
              "--json", str(json_out)])
    found = verdicts.by_decl(json_out)
    counts: collections.Counter[str] = collections.Counter()
    failures = []
    missing = []
    for line in decl_list.read_text(encoding="utf-8").splitlines():
        at, name = line.split("\t")[:2]
        obj = found.get(at)
        if obj is None:
            missing.append(f"{at} {name}")
            counts["missing"] += 1
            continue
        counts[obj["verdict"]] += 1
        if obj["verdict"] in verdicts.WRAP_SAFE:
            failures.append(f"{obj['key']} ({at}): {obj['verdict']} by "
                            f"rule {obj['rule']}")
        elif obj.get("wrap_by_design"):
            # Flagged: convert makes it atomic_unchecked_t all the same.
            counts["flagged"] += 1
            failures.append(f"{obj['key']} ({at}): {obj['verdict']} by "
                            f"rule {obj['rule']}, flagged wrap-by-design: "
                            f"{(obj.get('wrap_evidence') or ['?'])[0]}")
    total = sum(counts.values())
    checked = counts["refcount"] + counts["usage"]
    print(f"de-converted refcount_t variables: {total}")
    for v in ("refcount", "usage", "unknown", "statistic", "id", "state",
              "missing"):
        print(f"  {v:<10} {counts[v]:>5}")
    print(f"refcount/usage: {checked}/{total} = "
          f"{100 * checked / max(total, 1):.1f}%  (bar: >= 97%)")
    print(f"wrap-safe or flagged wrap-by-design (safety failures): "
          f"{len(failures)}  (bar: <= 1; flagged: {counts['flagged']})")
    for f in failures:
        print(f"  FAIL {f}")
    for m in missing[:20]:
        print(f"  not in output: {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
