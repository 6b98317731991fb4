#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""How strict is the refcount_t contract?  Ask it about real refcount_ts.

The de-converted tree (bench/deconverted.py: every refcount_t of the tree
turned back into atomic_t, the API mapped) holds counters that mainline
already keeps as refcount_t, so they do fit the contract at run time.
For each of them that the classifier calls a refcount, this asks
refsweep's contract (refsweep/refcount_contract.py) and the operation
mapping whether convert --to refcount_t would take it back, and counts the
refusals by rule: each one is a counter the code in sight does not show
to fit (a false refusal, since mainline's is fine, or a rule the
de-conversion itself broke), never a wrong conversion.

    bench/refcount_contract.py [--tree DIR]

Run bench/deconverted.py first (it writes the tree, the declaration list
and the verdicts this reads).
"""

import argparse
import collections
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP))
sys.path.insert(0, str(TOP / "bench"))

from refsweep import churn, convert, refcount_contract  # noqa: E402
from refsweep import verdicts as rverdicts  # noqa: E402
from refsweep import workdir  # noqa: E402
from refsweep.sitetext import Source  # noqa: E402
import verdicts  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tree", type=Path,
                   default=workdir.sub("trees") / "linux-6.12-deconverted")
    args = p.parse_args()
    decl_list = workdir.sub("bench") / "deconverted-decls.tsv"
    json_path = workdir.sub("verdicts") / (args.tree.name + ".jsonl")
    records = rverdicts.read(json_path)
    found = verdicts.by_decl(json_path)
    keys = []
    for line in decl_list.read_text(encoding="utf-8").splitlines():
        at = line.split("\t")[0]
        obj = found.get(at)
        if obj is not None and obj["verdict"] == "refcount" and \
                obj["type"] == "atomic_t":
            keys.append(obj["key"])
    by_key = {r["key"]: r for r in records}
    contract = refcount_contract.Contract(Source(args.tree), records)
    target = convert.REFCOUNT_TARGET
    rules: collections.Counter[str] = collections.Counter()
    first: collections.Counter[str] = collections.Counter()
    admitted = converts = 0
    examples: dict[str, str] = {}
    for key in sorted(set(keys)):
        rec = by_key[key]
        why = convert.blockers(rec, target, contract.src, contract)
        refusals = contract.lifetime(rec, convert.variable_name(key)).refusals
        if not refusals:
            admitted += 1
        if not why:
            converts += 1
            continue
        kinds = {churn.contract_kind(r) for r in refusals} - {None}
        for k in kinds:
            rules[str(k)] += 1
        kind = churn.reason_kind(why[0])
        first[kind] += 1
        examples.setdefault(kind, f"{key}: {why[0]}")
    total = len(set(keys))
    print(f"de-converted refcount_t variables the classifier calls "
          f"refcount (atomic_t): {total}")
    print(f"  the contract admits:       {admitted} "
          f"({100 * admitted / max(total, 1):.1f}%)")
    print(f"  convert would take back:   {converts} "
          f"({100 * converts / max(total, 1):.1f}%)")
    print("  refused, by contract rule (one may break several):")
    for k, n in rules.most_common():
        print(f"    {n:5d}  {k}")
    print("  left unconverted, by first reason:")
    for k, n in first.most_common():
        print(f"    {n:5d}  {k}")
        print(f"           e.g. {examples[k][:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
