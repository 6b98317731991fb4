# SPDX-License-Identifier: GPL-2.0-only
"""``refsweep forecast``: read a workload log's forecast dumps, map them
to counters, project overflows, record them for triage.

    refsweep forecast --vmlinux VMLINUX --verdicts VERDICTS.jsonl \\
        [--tree TREE] [--triage DB] [--json OUT] LOG

Exit status 0 when every counter projected to overflow within the
horizon is converted or explained, 3 when one is not (FAIL), 1 on an
error.  See Documentation/forecast.rst.
"""

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

from refsweep import forecast, triage_db, verdicts
from refsweep.forecast import ForecastError

EXIT_FAIL = 3


def _tree_of(verdicts_path: Path) -> Optional[Path]:
    """The tree a verdicts file was classified from (its inputs.json)."""
    inputs = verdicts_path.with_name(verdicts_path.name + ".inputs.json")
    try:
        tree = json.loads(inputs.read_text(encoding="utf-8")).get("tree")
    except (OSError, json.JSONDecodeError):
        return None
    return Path(tree) if tree else None


def _explained(conn: Any, records: list[dict[str, Any]],
               keys: set[str]) -> dict[str, str]:
    """Key -> reason, for the KEYS a human decided on (the decision in
    force, not stale) since their runtime evidence was first recorded."""
    decisions = triage_db.current_decisions(conn)
    seen = triage_db.runtime_first_seen(conn)
    now = triage_db.now()
    by_key = {r["key"]: r for r in records}
    out = {}
    for key in keys:
        d = decisions.get(key)
        rec = by_key.get(key, {})
        if d is None or rec.get("source") != "human":
            continue
        if triage_db.runtime_answered(d, seen.get(key, now)):
            out[key] = d.reason
    return out


def cmd_forecast(args: argparse.Namespace) -> int:
    log = Path(args.log)
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise ForecastError(f"{log}: cannot read the log: {e}") from e
    start, end = forecast.start_and_end(forecast.parse_log(text))
    vpath = Path(args.verdicts)
    try:
        records = verdicts.read(vpath)
    except verdicts.VerdictError as e:
        raise ForecastError(str(e)) from e
    tree = Path(args.tree) if args.tree else _tree_of(vpath)
    faddr2line = Path(args.faddr2line) if args.faddr2line else (
        tree / "scripts" / "faddr2line" if tree else None)
    if faddr2line is None or not faddr2line.is_file():
        raise ForecastError("no scripts/faddr2line: pass --tree or "
                            "--faddr2line")
    vmlinux = Path(args.vmlinux)
    if not vmlinux.is_file():
        raise ForecastError(f"{vmlinux}: no such file")
    conn = None
    if args.triage:
        conn = triage_db.connect(Path(args.triage))
        # Decisions are fingerprinted on the declarations of the tree the
        # verdicts were made on; --tree may be a worktree with the series
        # (and churn) applied, whose declarations differ: every decision
        # on a changed header would look stale there.
        records = triage_db.apply_records(conn, records,
                                          _tree_of(vpath) or tree)
    index = forecast.OpIndex(records)
    mapping = forecast.map_sites(
        end, index, vmlinux, faddr2line,
        Path(args.module_dir) if args.module_dir else None,
        adjust=not args.exact_address, jobs=args.jobs)
    horizon = args.horizon_days * 86400.0
    fc = forecast.make(start, end, mapping, records, None, horizon)
    if conn is not None:
        keys = {c.key for c in fc.counters}
        explained = _explained(conn, records, keys)
        fc = forecast.make(start, end, mapping, records, explained, horizon)
        rows = [{"key": c.key, "site": s.site, "location": s.location,
                 "match": s.match, "bits": s.bits, "magnitude": s.magnitude,
                 "changes": s.changes, "decreases": s.decreases,
                 "rate": s.rate, "overflow_s": s.overflow_uptime_s}
                for c in fc.counters for s in c.sites]
        triage_db.record_runtime(
            conn, str(log.resolve()), str(vmlinux.resolve()),
            (tree.name if tree else vpath.stem),
            (end.now_ns - start.now_ns) / 1e9 if start else None,
            end.now_ns / 1e9, rows)
        conn.close()
    sys.stdout.write(forecast.text(fc, args.show_not_exercised))
    if args.json:
        Path(args.json).write_text(
            json.dumps(forecast.to_json(fc), indent=1) + "\n",
            encoding="utf-8")
        print(f"forecast: {args.json}")
    return EXIT_FAIL if fc.failing or fc.unmapped_due else 0


def add_parser(sub: Any) -> None:
    s = sub.add_parser("forecast", help="overflow forecast from a workload "
                       "log's runtime dumps")
    s.add_argument("log", help="console log with refsweep-forecast-begin/"
                   "-end blocks")
    s.add_argument("--vmlinux", required=True,
                   help="the vmlinux (with debug info) that ran")
    s.add_argument("--verdicts", required=True,
                   help="classify --json output of the tree it was built "
                        "from")
    s.add_argument("--tree", help="that tree (default: the verdicts' "
                   "inputs.json); its scripts/faddr2line maps the sites")
    s.add_argument("--faddr2line", help="faddr2line to use (default "
                   "TREE/scripts/faddr2line)")
    s.add_argument("--module-dir", help="where the .ko files of module "
                   "sites ('sym+off [mod]') are")
    s.add_argument("--triage", metavar="DB", help="apply its decisions, "
                   "record the runtime evidence for triage")
    s.add_argument("--json", help="also write the forecast as JSON (for "
                   "refsweep report --forecast)")
    s.add_argument("--horizon-days", type=float, default=365.0,
                   help="FAIL on an unexplained overflow projected within "
                        "this much uptime (default 365)")
    s.add_argument("--exact-address", action="store_true",
                   help="the sites are not return addresses: look them up "
                        "as they are (default: the byte before, as %%pB)")
    s.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                   help="faddr2line runs at once (default: the cores)")
    s.add_argument("--show-not-exercised", type=int, default=0, metavar="N",
                   help="list at most N counters not exercised (default "
                        "all)")
    s.set_defaults(func=cmd_forecast)
