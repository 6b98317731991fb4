# SPDX-License-Identifier: GPL-2.0-only
"""``refsweep triage ...``: record, list, show, decide, export, import."""

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, Optional, TextIO

from refsweep import fingerprint, triage_db, triage_next, triage_text
from refsweep.triage_db import Entry, TriageError

DECISIONS_DIR = triage_db.TOP / "triage" / "decisions"
SOURCES = ("machine", "human", "stale", "gone")


def _db(args: argparse.Namespace) -> Path:
    return Path(args.db) if args.db else triage_db.default_path()


def _reviewer(args: argparse.Namespace) -> str:
    return str(args.reviewer) if args.reviewer else triage_db.git_reviewer()


# -- reading code ---------------------------------------------------------

class Source:
    """Lines of the files of one tree, read once."""

    def __init__(self, tree: Optional[Path]) -> None:
        self.tree = tree
        self.files: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self.files:
            try:
                text = (self.tree / path).read_text(
                    encoding="utf-8", errors="replace") if self.tree else ""
            except OSError:
                text = ""
            self.files[path] = text.splitlines()
        return self.files[path]

    def context(self, at: str, radius: int) -> list[str]:
        """The lines around AT (``PATH:LINE``), the line itself marked."""
        path, lineno = fingerprint.split_at(at)
        lines = self.lines(path)
        if not lines or not 1 <= lineno <= len(lines):
            return ["      (source not available)"]
        lo, hi = max(1, lineno - radius), min(len(lines), lineno + radius)
        return [f"  {'>' if n == lineno else ' '} {n:5} | {lines[n - 1]}"
                for n in range(lo, hi + 1)]


def describe(conn: Any, entry: Entry, src: Source, radius: int,
             out: TextIO) -> None:
    """Everything a reviewer needs to decide ENTRY, uses in context."""
    rec, d = entry.record, entry.decision
    w = out.write
    w(f"{entry.key}\n")
    w(f"  final       {entry.final} ({entry.source})\n")
    if rec is not None:
        w(f"  type        {rec.get('type')}, {rec.get('scope')}\n")
        w(f"  machine     {rec['verdict']} (rule {rec.get('rule')}, "
          f"{rec.get('confidence')})\n")
        if rec.get("wrap_by_design"):
            w(f"  wraps?      {'; '.join(rec.get('wrap_evidence') or [])}\n")
        w(f"  fingerprint {rec['fingerprint']}\n")
    if d is not None:
        w(f"  decision    {d.verdict} by {d.reviewer} at {d.decided_at} "
          f"(fingerprint {d.fingerprint})\n")
        w(f"  reason      {d.reason}\n")
    for c in triage_db.open_conflicts(conn, entry.key):
        w(f"  conflict    {c['verdict']} by {c['reviewer']} at "
          f"{c['decided_at']} from {c['source']}: {c['reason']}\n")
    describe_runtime(conn, entry, out)
    if entry.source == "stale" and d is not None and rec is not None:
        old = triage_db.summary_of(conn, d.fingerprint)
        new = triage_db.summary_of(conn, rec["fingerprint"])
        w("  changed since the decision:\n")
        if old is None or new is None:
            w("    (the evidence decided on is not in this database)\n")
        else:
            for line in fingerprint.diff(old, new):
                w(f"    {line}\n")
    if rec is None:
        w("  gone: no variable of this key in the scan\n")
        return
    for at in [rec.get("decl", "")] + list(rec.get("also_declared") or []):
        w(f"declared at {at}\n")
        for line in src.context(at, radius):
            w(line + "\n")
    evidence = rec.get("evidence") or []
    w(f"uses ({len(evidence)}):\n")
    for e in evidence:
        flags = [f for f in ("ambiguous", "weak") if e.get(f)]
        if e.get("parsed") is False:
            flags.append("unparsed")
        w(f"{e.get('at')} {e.get('function') or '(file scope)'}: "
          f"{e.get('op')} -> {e.get('use')}"
          f"{' [' + ', '.join(flags) + ']' if flags else ''}\n")
        for line in src.context(str(e.get("at", "")), radius):
            w(line + "\n")


def describe_runtime(conn: Any, entry: Entry, out: TextIO) -> None:
    """The runtime evidence of ENTRY (refsweep forecast --triage), newest
    run first, and whether a decision has answered it."""
    rows = triage_db.runtime(conn, entry.key)
    if not rows:
        return
    from refsweep.forecast import human_rate, human_time
    w = out.write
    for r in rows:
        down = f", {r.decreases} down" if r.decreases else ", never down"
        w(f"  runtime     {r.site} at {r.location or '?'} ({r.match}): "
          f"{r.changes} ops{down}, |value| {r.magnitude}, "
          f"{human_rate(r.rate)}/s, {r.bits}-bit overflow at "
          f"{human_time(r.overflow_s)} of uptime "
          f"(forecast {r.run_id}, {r.recorded_at})\n")
    first = min(r.recorded_at for r in rows)
    if triage_db.runtime_answered(entry.decision, first):
        w("  runtime     answered by the decision above\n")
    else:
        w(f"  runtime     not answered: no decision since {first}; "
          "decide to convert (statistic, id, state, wraps) or explain "
          "why it stays checked (refcount, usage)\n")


# -- selection ------------------------------------------------------------

def select(items: list[Entry], args: argparse.Namespace) -> list[Entry]:
    """ITEMS passing the filters of ARGS (verdict, source, area, path)."""
    out = []
    for e in items:
        decl = str((e.record or {}).get("decl", ""))
        area = (e.record or {}).get("area") or \
            (e.decision.area if e.decision else "")
        if args.verdict and e.final != args.verdict:
            continue
        if args.source and e.source != args.source:
            continue
        if args.subsystem and area != args.subsystem:
            continue
        if args.path and not (decl.startswith(args.path) or
                              e.key.startswith(args.path)):
            continue
        out.append(e)
    return out


def _entries(conn: Any, args: argparse.Namespace
             ) -> tuple[triage_db.Scan, list[Entry]]:
    scan = triage_db.current_scan(conn, args.tree)
    return scan, triage_db.entries(conn, scan)


# -- commands -------------------------------------------------------------

def cmd_record(conn: Any, args: argparse.Namespace) -> int:
    tree = Path(args.tree)
    with open(args.verdicts, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    scan_id = triage_db.record_scan(conn, tree, records, args.name)
    scan = triage_db.current_scan(conn)
    c = triage_db.counts(triage_db.entries(conn, scan))
    print(f"recorded {len(records)} verdicts of {scan.tree_name} "
          f"({scan.version}) as scan {scan_id}: {_counts_text(c)}")
    return 0


def _counts_text(c: dict[str, int]) -> str:
    return (f"{c['human']} decided, {c['stale']} stale, {c['gone']} gone, "
            f"{c['machine']} undecided")


def cmd_status(conn: Any, args: argparse.Namespace) -> int:
    scan, items = _entries(conn, args)
    c = triage_db.counts(items)
    conflicts = len({r["key"] for r in triage_db.open_conflicts(conn)})
    print(f"{scan.tree_name} ({scan.version}, scan {scan.id}): "
          f"{_counts_text(c)}, {conflicts} with open conflicts")
    return 0


def cmd_list(conn: Any, args: argparse.Namespace) -> int:
    _scan, items = _entries(conn, args)
    if args.stale:
        args.source = "stale"
    if args.undecided:
        args.source = "machine"
    chosen = select(items, args)
    if args.conflicts:
        keys = {r["key"] for r in triage_db.open_conflicts(conn)}
        chosen = [e for e in chosen if e.key in keys]
    if args.runtime:
        seen = triage_db.runtime_first_seen(conn)
        chosen = [e for e in chosen if e.key in seen]
    for e in chosen:
        machine = e.record["verdict"] if e.record else "-"
        decl = e.record.get("decl", "") if e.record else "-"
        print(f"{e.source:7} {e.final:9} {machine:9} {e.key}  {decl}")
    return 0


def _find(items: list[Entry], key: str) -> Entry:
    for e in items:
        if e.key == key:
            return e
    raise TriageError(f"unknown key {key!r}: not in the scan and never "
                      "decided")


def cmd_show(conn: Any, args: argparse.Namespace) -> int:
    scan, items = _entries(conn, args)
    describe(conn, _find(items, args.key), Source(Path(scan.tree_path)),
             args.context, sys.stdout)
    return 0


def cmd_set(conn: Any, args: argparse.Namespace) -> int:
    triage_db.check_verdict(args.verdict)
    scan_id = triage_db.current_scan(conn, args.tree).id if args.tree \
        else None
    d = triage_db.decide(conn, args.key, args.verdict, args.reason,
                         _reviewer(args), "set", scan_id)
    print(f"{d.key}: {d.verdict} (fingerprint {d.fingerprint})")
    return 0


def cmd_history(conn: Any, args: argparse.Namespace) -> int:
    decisions = triage_db.history(conn, args.key)
    machine = triage_db.machine_history(conn, args.key)
    if not decisions and not machine:
        raise TriageError(f"unknown key {args.key!r}: never scanned or "
                          "decided")
    for scan, verdict, rule, fp in machine:
        print(f"machine  {scan.recorded_at}  {verdict:9} {fp}  "
              f"{scan.tree_name} ({scan.version}) rule {rule}")
    for i, d in enumerate(decisions):
        state = "current" if i == len(decisions) - 1 else "superseded"
        print(f"{state:10} {d.decided_at}  {d.verdict:9} {d.fingerprint}  "
              f"{d.reviewer} ({d.origin}): {d.reason}")
    for c in triage_db.open_conflicts(conn, args.key):
        print(f"conflict   {c['decided_at']}  {c['verdict']:9} "
              f"{c['fingerprint']}  {c['reviewer']} ({c['source']}): "
              f"{c['reason']}")
    return 0


def cmd_next(conn: Any, args: argparse.Namespace) -> int:
    scan, items = _entries(conn, args)
    conflicted = {r["key"] for r in triage_db.open_conflicts(conn)}
    todo = triage_next.queue(select(items, args), conflicted,
                             triage_db.runtime_open(conn))
    reviewer = _reviewer(args)
    src = Source(Path(scan.tree_path))

    def record(entry: Entry, verdict: str, reason: str) -> None:
        triage_db.decide(conn, entry.key, verdict, reason, reviewer, "next",
                         scan.id)

    def show(entry: Entry, out: TextIO) -> None:
        describe(conn, entry, src, args.context, out)

    done = triage_next.run(todo, show, record, sys.stdin, sys.stdout,
                           args.limit)
    print(f"next: {done} decision(s) recorded, "
          f"{len(todo) - done} left in this queue")
    return 0


def cmd_export(conn: Any, args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else DECISIONS_DIR
    written = triage_text.export(conn, out)
    print(f"exported {sum(written.values())} decisions in {len(written)} "
          f"files to {out}")
    return 0


def cmd_import(conn: Any, args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.paths] or [DECISIONS_DIR]
    result = triage_text.import_paths(conn, paths)
    for line in result.conflicts:
        print(line, file=sys.stderr)
    print(f"imported {result.added} decisions ({result.unchanged} already "
          f"present, {len(result.conflicts)} conflicts)")
    return 3 if result.conflicts else 0


def annotate_file(db: Path, tree: Path, json_path: Path) -> dict[str, int]:
    """Record JSON_PATH's verdicts of TREE in DB; add the final verdicts.

    For ``refsweep classify --triage DB``.  Returns the counts by source.
    """
    with open(json_path, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    conn = triage_db.connect(db)
    try:
        triage_db.record_scan(conn, tree, records)
        out = triage_db.apply_records(conn, records, tree)
        c = triage_db.counts(triage_db.entries(
            conn, triage_db.current_scan(conn)))
    finally:
        conn.close()
    tmp = json_path.with_suffix(json_path.suffix + ".partial")
    with open(tmp, "w", encoding="utf-8") as f:
        for rec in out:
            f.write(json.dumps(rec) + "\n")
    tmp.replace(json_path)
    return c


def counts_line(c: dict[str, int]) -> str:
    return "triage: " + _counts_text(c)


# -- parser ---------------------------------------------------------------

def _filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("--verdict", help="final verdict")
    p.add_argument("--source", choices=SOURCES)
    p.add_argument("--subsystem", help="area, as the export file name "
                   "(kernel, net-ipv4, include-linux)")
    p.add_argument("--path", help="declaration path or key prefix")


def add_parser(sub: Any) -> None:
    """Register ``triage`` and its subcommands on the SUB of cli.py."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", help="triage database (default "
                        "$REFSWEEP_WORK/triage.db)")
    common.add_argument("--tree", dest="tree", default=None,
                        help="tree name of the scan to use (default: the "
                        "newest recorded)")
    t = sub.add_parser("triage", help="human decisions over verdicts")
    tsub = t.add_subparsers(dest="triage_command", required=True)

    def cmd(name: str, func: Callable[[Any, argparse.Namespace], int],
            help_: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = tsub.add_parser(
            name, help=help_, parents=[common])
        p.set_defaults(func=run, triage_func=func)
        return p

    p = cmd("record", cmd_record, "record a verdict file of a tree")
    p.add_argument("verdicts", help="refsweep classify --json output")
    p.add_argument("--name", help="tree name (default: the directory's)")
    p = cmd("status", cmd_status, "decided/stale/gone/undecided counts")
    p = cmd("list", cmd_list, "list variables and decisions")
    _filters(p)
    p.add_argument("--stale", action="store_true")
    p.add_argument("--undecided", action="store_true")
    p.add_argument("--conflicts", action="store_true",
                   help="only keys with open import conflicts")
    p.add_argument("--runtime", action="store_true",
                   help="only keys with runtime evidence (refsweep "
                        "forecast)")
    p = cmd("show", cmd_show, "one variable: evidence in context")
    p.add_argument("key")
    p.add_argument("--context", type=int, default=2, help="lines around")
    p = cmd("set", cmd_set, "record a decision")
    p.add_argument("key")
    p.add_argument("verdict", help=", ".join(triage_db.HUMAN_VERDICTS))
    p.add_argument("--reason", required=True)
    p.add_argument("--reviewer", help="default: git config user.name/email")
    p = cmd("history", cmd_history, "every decision and verdict of a key")
    p.add_argument("key")
    p = cmd("next", cmd_next, "decide stale and undecided variables, "
            "one key per answer")
    _filters(p)
    p.add_argument("--context", type=int, default=1)
    p.add_argument("--limit", type=int, default=0, help="stop after N")
    p.add_argument("--reviewer", help="default: git config user.name/email")
    p = cmd("export", cmd_export, "write decisions as text files")
    p.add_argument("--out", help=f"directory (default {DECISIONS_DIR})")
    p = cmd("import", cmd_import, "merge decision text files")
    p.add_argument("paths", nargs="*", help="files or directories "
                   "(default triage/decisions)")


def run(args: argparse.Namespace) -> int:
    """Open the database, run the chosen subcommand, close."""
    conn = triage_db.connect(_db(args))
    try:
        if args.triage_command == "record":
            # --tree is the tree directory here, not a scan name.
            if not args.tree or not Path(args.tree).is_dir():
                raise TriageError("record needs --tree DIR, the tree the "
                                  "verdicts were made on")
        code: int = args.triage_func(conn, args)
        return code
    finally:
        conn.close()
