#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The hand-labelled benchmark: classifier verdicts vs bench/labels.tsv.

    bench/labelled.py VERDICTS.jsonl

Prints the confusion table (label rows, verdict columns) and the bars:
no refcount/usage label gets a wrap-safe verdict; at least 80% get a
verdict other than unknown; of those, at least 95% agree with the label on
checked vs wrap-safe.  Also the whole-tree shares.
"""

import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import verdicts  # noqa: E402

ORDER = ("refcount", "usage", "statistic", "id", "state", "unknown")
LABELS = Path(__file__).resolve().parent / "labels.tsv"


def side(v: str) -> str:
    return "wrap-safe" if v in verdicts.WRAP_SAFE else "checked"


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = verdicts.by_decl(Path(sys.argv[1]))
    table: collections.Counter[tuple[str, str]] = collections.Counter()
    unsafe, decided, agree, rows = [], 0, 0, 0
    disagreements = []
    for line in LABELS.read_text(encoding="utf-8").splitlines()[1:]:
        if not line.strip() or line.startswith("#"):
            continue
        decl, key, label, _why = line.split("\t", 3)
        obj = found.get(decl)
        got = obj["verdict"] if obj else "missing"
        rows += 1
        table[(label, got)] += 1
        if label in ("refcount", "usage") and got in verdicts.WRAP_SAFE:
            unsafe.append(f"{key}: {got} ({obj['rule'] if obj else ''})")
        if got not in ("unknown", "missing"):
            decided += 1
            if label != "unknown" and side(label) == side(got):
                agree += 1
            else:
                disagreements.append(f"{key}: label {label}, got {got} "
                                     f"({obj['rule'] if obj else ''})")
    cols = ORDER + ("missing",)
    print("label \\ verdict " + "".join(f"{c[:9]:>10}" for c in cols))
    for label in ORDER:
        print(f"{label:<16}" + "".join(f"{table[(label, c)]:>10}"
                                       for c in cols))
    print(f"labelled variables: {rows}")
    print(f"refcount/usage labels given a wrap-safe verdict: {len(unsafe)} "
          "(bar: 0)")
    for u in unsafe:
        print(f"  UNSAFE {u}")
    print(f"decided (not unknown): {decided}/{rows} = "
          f"{100 * decided / max(rows, 1):.1f}% (bar: >= 80%)")
    print(f"agree on checked vs wrap-safe among decided: {agree}/{decided} = "
          f"{100 * agree / max(decided, 1):.1f}% (bar: >= 95%)")
    for d in disagreements:
        print(f"  differs: {d}")
    whole: collections.Counter[str] = collections.Counter()
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            whole[json.loads(line)["verdict"]] += 1
    total = sum(whole.values()) or 1
    safe = sum(whole[v] for v in verdicts.WRAP_SAFE)
    print(f"whole tree: {total} variables, wrap-safe {100 * safe / total:.1f}%"
          f", checked {100 * (total - safe - whole['unknown']) / total:.1f}%"
          f", unknown {100 * whole['unknown'] / total:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
