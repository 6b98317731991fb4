#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""How many decisions survive a move to another tree.

Decides every variable of the first tree (its machine verdict as the
decision; ``unknown`` as ``usage``), records the second tree's verdicts in
the same fresh database and counts, as ``triage status`` does, the
decisions that carry over (fingerprint unchanged), turn stale (evidence
changed) and are gone (no variable of that key), split by key kind.

    bench/carryover.py --db /tmp/c.db \\
        work/trees/linux-6.12 work/verdicts/linux-6.12.jsonl \\
        work/trees/linux-6.1 work/verdicts/linux-6.1.jsonl
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from refsweep import triage_db  # noqa: E402
from refsweep.triage_db import Decision  # noqa: E402


def _records(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def kind(key: str) -> str:
    if key.startswith(("struct ", "union ")):
        return "member"
    return "function" if key.count(":") >= 2 else "file"


def decide_all(conn: Any, scan_id: int) -> int:
    """One decision per variable of SCAN_ID, in one transaction."""
    records = triage_db.machine_records(conn, scan_id)
    stamp = triage_db.now()
    with triage_db.transaction(conn):
        for key, rec in records.items():
            verdict = rec["verdict"] if rec["verdict"] in \
                triage_db.HUMAN_VERDICTS else "usage"
            triage_db.insert_decision(conn, Decision(
                key, verdict, rec["fingerprint"], "bench <bench@localhost>",
                stamp, "bench/carryover.py", rec["area"], origin="bench"))
    return len(records)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", required=True, help="a new database file")
    p.add_argument("from_tree")
    p.add_argument("from_verdicts")
    p.add_argument("to_tree")
    p.add_argument("to_verdicts")
    args = p.parse_args()
    if Path(args.db).exists():
        p.error(f"{args.db} exists: give a new file")
    conn = triage_db.connect(Path(args.db))
    first = triage_db.record_scan(conn, Path(args.from_tree),
                                  _records(Path(args.from_verdicts)))
    decided = decide_all(conn, first)
    second = triage_db.record_scan(conn, Path(args.to_tree),
                                   _records(Path(args.to_verdicts)))
    scans = {s.id: s for s in triage_db.scans(conn)}
    items = triage_db.entries(conn, scans[second])
    by_kind: dict[str, dict[str, int]] = {}
    for e in items:
        if e.decision is None:
            continue
        row = by_kind.setdefault(kind(e.key), {"human": 0, "stale": 0,
                                               "gone": 0})
        row[e.source] += 1
    c = triage_db.counts(items)
    print(f"{scans[first].tree_name} ({scans[first].version}) -> "
          f"{scans[second].tree_name} ({scans[second].version}): "
          f"{decided} decisions")
    print(f"  carried over {c['human']} ({100 * c['human'] / decided:.1f}%),"
          f" stale {c['stale']} ({100 * c['stale'] / decided:.1f}%),"
          f" gone {c['gone']} ({100 * c['gone'] / decided:.1f}%);"
          f" {c['machine']} new variables undecided")
    for k in sorted(by_kind):
        r = by_kind[k]
        print(f"  {k:9} carried {r['human']:5}  stale {r['stale']:5}  "
              f"gone {r['gone']:5}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
