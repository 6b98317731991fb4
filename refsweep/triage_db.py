# SPDX-License-Identifier: GPL-2.0-only
"""The triage store: SQLite schema, migrations, machine verdicts, decisions.

The schema lives in ``triage/schema/NNNN-*.sql``; ``PRAGMA user_version``
says how many of those files a database has applied.  A database from a
newer refsweep (a higher version than the files here) is refused, never
downgraded.  The database runs in WAL mode with a busy timeout, so several
processes may record at once; every write is one transaction.

Decisions are never updated: a new row supersedes the older rows of the
same key, and ``history`` lists them all.  The final verdict of a variable
is computed, not stored (see ``final_of``).
"""

import dataclasses
import json
import sqlite3
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from refsweep import fingerprint, workdir

TOP = Path(__file__).resolve().parent.parent
SCHEMA_DIR = TOP / "triage" / "schema"

# What a human may decide.  "wraps": wraps by design, must be unchecked
# although it may count references (percpu_ref's biased count).
HUMAN_VERDICTS = ("refcount", "usage", "statistic", "id", "state", "wraps")
CHECKED = ("refcount", "usage", "unknown")
WRAP_SAFE = ("statistic", "id", "state", "wraps")
BUSY_TIMEOUT_S = 60.0
# Top-level directories split one level further in the export files.
_SPLIT_DIRS = ("arch", "drivers", "fs", "include", "net", "sound")


class TriageError(Exception):
    """A triage operation was refused; the message says why (one line)."""


@dataclass(frozen=True)
class Decision:
    """One human decision as stored (and as exported, minus id/origin)."""
    key: str
    verdict: str
    fingerprint: str
    reviewer: str
    decided_at: str
    reason: str
    area: str
    id: int = 0
    origin: str = ""

    def same(self, other: "Decision") -> bool:
        """Whether OTHER is the same decision (ids and origins aside)."""
        return (self.key, self.verdict, self.fingerprint, self.reviewer,
                self.decided_at, self.reason) == \
            (other.key, other.verdict, other.fingerprint, other.reviewer,
             other.decided_at, other.reason)


@dataclass(frozen=True)
class Scan:
    id: int
    tree_name: str
    tree_path: str
    revision: str
    version: str
    recorded_at: str


def now() -> str:
    """The current time, ISO 8601 UTC to the second."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def default_path() -> Path:
    return workdir.work_dir() / "triage.db"


def area_of(path: str) -> str:
    """The export file a variable declared in PATH belongs to.

    ``kernel/fork.c`` -> ``kernel``, ``net/ipv4/route.c`` -> ``net-ipv4``,
    ``include/linux/percpu-refcount.h`` -> ``include-linux``.
    """
    parts = [p for p in path.split("/") if p]
    if len(parts) > 2 and parts[0] in _SPLIT_DIRS:
        return f"{parts[0]}-{parts[1]}"
    if len(parts) > 1:
        return parts[0]
    return "top"


def migrations(schema_dir: Path = SCHEMA_DIR) -> list[Path]:
    """The schema files in order; file N (1-based) makes version N."""
    files = sorted(schema_dir.glob("[0-9][0-9][0-9][0-9]-*.sql"))
    for n, f in enumerate(files, 1):
        if int(f.name[:4]) != n:
            raise TriageError(f"{f}: expected migration number {n:04d}")
    return files


def _statements(sql: str) -> Iterator[str]:
    stmt = ""
    for line in sql.splitlines(keepends=True):
        if not stmt and (not line.strip() or line.lstrip().startswith("--")):
            continue
        stmt += line
        if sqlite3.complete_statement(stmt):
            yield stmt
            stmt = ""
    if stmt.strip():
        raise TriageError(f"unterminated SQL statement: {stmt.strip()[:60]}")


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, db: str,
            schema_dir: Path = SCHEMA_DIR) -> int:
    """Bring CONN to the newest schema; refuse a newer one; the version."""
    files = migrations(schema_dir)
    have = schema_version(conn)
    if have > len(files):
        raise TriageError(
            f"{db}: schema version {have} is newer than this refsweep "
            f"knows ({len(files)}); use a newer refsweep")
    for n, path in enumerate(files, 1):
        if n <= have:
            continue
        with transaction(conn):
            # Another process may have migrated while we waited.
            if schema_version(conn) >= n:
                continue
            for stmt in _statements(path.read_text(encoding="utf-8")):
                conn.execute(stmt)
            conn.execute(f"PRAGMA user_version = {n}")
    return len(files)


class transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any exception."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating and migrating as needed) the database at PATH."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S,
                               isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        migrate(conn, str(path))
    except sqlite3.DatabaseError as e:
        raise TriageError(f"{path}: not a usable triage database: {e}") \
            from e
    return conn


def git_reviewer(cwd: Optional[Path] = None) -> str:
    """``Name <email>`` from git config, or an error saying how to set it."""
    def get(item: str) -> str:
        res = subprocess.run(["git", "config", item], capture_output=True,
                             text=True, check=False,
                             cwd=str(cwd) if cwd else None)
        return res.stdout.strip()
    name, email = get("user.name"), get("user.email")
    if not name or not email:
        raise TriageError("no reviewer: set git config user.name and "
                          "user.email, or pass --reviewer")
    return f"{name} <{email}>"


def one_line(text: str) -> str:
    """TEXT with every run of white space (tabs, newlines) one space."""
    return " ".join(text.split())


# -- machine verdicts -----------------------------------------------------

def _tree_identity(tree: Path) -> tuple[str, str]:
    from refsweep import tree as tree_mod
    version = tree_mod.kernel_version(tree) \
        if (tree / "Makefile").is_file() else ""
    res = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"],
                         capture_output=True, text=True, check=False)
    return (res.stdout.strip() if res.returncode == 0 else ""), version


def record_scan(conn: sqlite3.Connection, tree: Path,
                records: Iterable[dict[str, Any]],
                tree_name: Optional[str] = None) -> int:
    """Record the machine verdicts RECORDS of TREE; the scan id.

    A re-record of the same tree path and revision replaces the earlier
    one (the classifier may have changed), in one transaction.
    """
    tree = tree.resolve()
    revision, version = _tree_identity(tree)
    rows = []
    summaries = {}
    for rec in records:
        summary = fingerprint.summarize(rec, tree)
        fp = fingerprint.of_summary(summary)
        summaries[fp] = summary
        decl = str(rec.get("decl", ""))
        rows.append((rec["key"], rec["verdict"], rec.get("rule", ""), fp,
                     decl, area_of(fingerprint.split_at(decl)[0]),
                     json.dumps(rec, sort_keys=True)))
    with transaction(conn):
        conn.execute("DELETE FROM scans WHERE tree_path = ? AND revision = ?",
                     (str(tree), revision))
        cur = conn.execute(
            "INSERT INTO scans (tree_name, tree_path, revision, version, "
            "recorded_at) VALUES (?, ?, ?, ?, ?)",
            (tree_name or tree.name, str(tree), revision, version, now()))
        scan_id = int(cur.lastrowid or 0)
        conn.executemany(
            "INSERT OR IGNORE INTO evidence (fingerprint, summary) "
            "VALUES (?, ?)",
            [(fp, json.dumps(s, sort_keys=True))
             for fp, s in summaries.items()])
        conn.executemany(
            "INSERT INTO machine (scan_id, key, verdict, rule, fingerprint, "
            "decl, area, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(scan_id, *row) for row in rows])
    return scan_id


def _scan(row: sqlite3.Row) -> Scan:
    return Scan(row["id"], row["tree_name"], row["tree_path"],
                row["revision"], row["version"], row["recorded_at"])


def scans(conn: sqlite3.Connection) -> list[Scan]:
    return [_scan(r) for r in conn.execute("SELECT * FROM scans ORDER BY id")]


def current_scan(conn: sqlite3.Connection,
                 tree_name: Optional[str] = None) -> Scan:
    """The newest recorded scan (of TREE_NAME when given)."""
    if tree_name:
        row = conn.execute("SELECT * FROM scans WHERE tree_name = ? "
                           "ORDER BY id DESC LIMIT 1", (tree_name,)).fetchone()
    else:
        row = conn.execute("SELECT * FROM scans ORDER BY id DESC LIMIT 1"
                           ).fetchone()
    if row is None:
        raise TriageError(
            "no scan recorded" + (f" for tree {tree_name}" if tree_name
                                  else "") +
            ": run 'refsweep classify --tree T --json F --triage DB' or "
            "'refsweep triage record --tree T F'")
    return _scan(row)


def machine_records(conn: sqlite3.Connection, scan_id: int
                    ) -> dict[str, dict[str, Any]]:
    """Key -> verdict record (with its ``fingerprint``) of one scan."""
    out = {}
    for row in conn.execute("SELECT key, record, fingerprint, area FROM "
                            "machine WHERE scan_id = ? ORDER BY key",
                            (scan_id,)):
        rec = json.loads(row["record"])
        rec["fingerprint"] = row["fingerprint"]
        rec["area"] = row["area"]
        out[row["key"]] = rec
    return out


def summary_of(conn: sqlite3.Connection, fp: str) -> Optional[dict[str, Any]]:
    row = conn.execute("SELECT summary FROM evidence WHERE fingerprint = ?",
                       (fp,)).fetchone()
    return None if row is None else dict(json.loads(row["summary"]))


def machine_history(conn: sqlite3.Connection, key: str
                    ) -> list[tuple[Scan, str, str, str]]:
    """(scan, verdict, rule, fingerprint) of KEY in every recorded scan."""
    return [(_scan(r), r["verdict"], r["rule"], r["fingerprint"])
            for r in conn.execute(
                "SELECT s.*, m.verdict, m.rule, m.fingerprint FROM machine m "
                "JOIN scans s ON s.id = m.scan_id WHERE m.key = ? "
                "ORDER BY s.id", (key,))]


# -- decisions ------------------------------------------------------------

def _decision(row: sqlite3.Row) -> Decision:
    return Decision(row["key"], row["verdict"], row["fingerprint"],
                    row["reviewer"], row["decided_at"], row["reason"],
                    row["area"], row["id"], row["origin"])


def check_verdict(verdict: str) -> str:
    if verdict not in HUMAN_VERDICTS:
        raise TriageError(f"unknown verdict {verdict!r} (choose from "
                          f"{', '.join(HUMAN_VERDICTS)})")
    return verdict


def latest_machine(conn: sqlite3.Connection, key: str
                   ) -> Optional[tuple[str, str]]:
    """(fingerprint, area) of KEY in the newest scan that has it."""
    row = conn.execute("SELECT fingerprint, area FROM machine WHERE key = ? "
                       "ORDER BY scan_id DESC LIMIT 1", (key,)).fetchone()
    return None if row is None else (row["fingerprint"], row["area"])


def insert_decision(conn: sqlite3.Connection, d: Decision) -> int:
    cur = conn.execute(
        "INSERT INTO decisions (key, verdict, fingerprint, reviewer, "
        "decided_at, reason, area, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (d.key, d.verdict, d.fingerprint, d.reviewer, d.decided_at,
         d.reason, d.area, d.origin))
    return int(cur.lastrowid or 0)


def decide(conn: sqlite3.Connection, key: str, verdict: str, reason: str,
           reviewer: str, origin: str = "set",
           scan_id: Optional[int] = None) -> Decision:
    """Record a human decision on KEY against its evidence in a scan.

    The evidence is that of SCAN_ID, or of the newest scan holding KEY.
    The decision resolves any open import conflict of KEY.
    """
    check_verdict(verdict)
    reason = one_line(reason)
    if not reason:
        raise TriageError(f"{key}: a decision needs a reason")
    reviewer = one_line(reviewer)
    with transaction(conn):
        if scan_id is None:
            found = latest_machine(conn, key)
        else:
            row = conn.execute("SELECT fingerprint, area FROM machine "
                               "WHERE scan_id = ? AND key = ?",
                               (scan_id, key)).fetchone()
            found = None if row is None else (row[0], row[1])
        if found is None:
            raise TriageError(f"unknown key {key!r}: no recorded scan has "
                              "this variable")
        d = Decision(key, verdict, found[0], reviewer, now(), reason,
                     found[1], origin=origin)
        did = insert_decision(conn, d)
        conn.execute("UPDATE conflicts SET resolved_by = ? WHERE key = ? "
                     "AND resolved_by IS NULL", (did, key))
    return dataclasses.replace(d, id=did)


def current_decisions(conn: sqlite3.Connection) -> dict[str, Decision]:
    """Key -> the decision in force (the newest of its history)."""
    return {r["key"]: _decision(r) for r in conn.execute(
        "SELECT * FROM decisions WHERE id IN "
        "(SELECT max(id) FROM decisions GROUP BY key) ORDER BY key")}


def history(conn: sqlite3.Connection, key: Optional[str] = None
            ) -> list[Decision]:
    """Every decision (of KEY), oldest first."""
    if key is None:
        rows = conn.execute("SELECT * FROM decisions ORDER BY key, id")
    else:
        rows = conn.execute("SELECT * FROM decisions WHERE key = ? "
                            "ORDER BY id", (key,))
    return [_decision(r) for r in rows]


def open_conflicts(conn: sqlite3.Connection,
                   key: Optional[str] = None) -> list[dict[str, Any]]:
    sql = "SELECT * FROM conflicts WHERE resolved_by IS NULL"
    args: tuple[str, ...] = ()
    if key is not None:
        sql += " AND key = ?"
        args = (key,)
    return [dict(r) for r in conn.execute(sql + " ORDER BY key, id", args)]


# -- final verdicts -------------------------------------------------------

def disputed(conn: sqlite3.Connection) -> set[str]:
    """Keys whose open import conflicts pit checked against wrap-safe.

    Until someone decides again, such a key is uncertain, and uncertain
    stays checked (see ``final_of``).
    """
    current = current_decisions(conn)
    verdicts: dict[str, set[str]] = {}
    for c in open_conflicts(conn):
        verdicts.setdefault(c["key"], set()).add(c["verdict"])
    out = set()
    for key, vs in verdicts.items():
        if key in current:
            vs.add(current[key].verdict)
        if vs & set(CHECKED) and vs & set(WRAP_SAFE):
            out.add(key)
    return out


def final_of(machine_verdict: str, fp: str, decision: Optional[Decision],
             is_disputed: bool = False) -> tuple[str, str]:
    """(final, source) of a variable with MACHINE_VERDICT and evidence FP.

    A decision holds while its fingerprint matches.  A stale one gives way
    to the machine verdict, except that a variable a human called checked
    never becomes wrap-safe on the machine's word alone: it is ``unknown``
    (checked) until someone confirms.  Likewise a decision disputed by an
    open import conflict (IS_DISPUTED) never makes a variable wrap-safe.
    """
    if decision is None:
        return machine_verdict, "machine"
    if decision.fingerprint == fp:
        if is_disputed and decision.verdict in WRAP_SAFE:
            return "unknown", "human"
        return decision.verdict, "human"
    if (decision.verdict in CHECKED or is_disputed) and \
            machine_verdict in WRAP_SAFE:
        return "unknown", "stale"
    return machine_verdict, "stale"


def annotate(record: dict[str, Any], fp: str, decision: Optional[Decision],
             is_disputed: bool = False) -> dict[str, Any]:
    """RECORD with the triage fields (documented in triage.rst)."""
    final, source = final_of(record["verdict"], fp, decision, is_disputed)
    out = dict(record)
    out.update(final=final, source=source, fingerprint=fp,
               reviewer=decision.reviewer if decision else None,
               reason=decision.reason if decision else None,
               decided_at=decision.decided_at if decision else None,
               decision=decision.verdict if decision else None)
    return out


def apply_records(conn: sqlite3.Connection, records: list[dict[str, Any]],
                  tree: Optional[Path]) -> list[dict[str, Any]]:
    decisions = current_decisions(conn)
    disputes = disputed(conn)
    return [annotate(rec, fingerprint.fingerprint(rec, tree),
                     decisions.get(rec["key"]), rec["key"] in disputes)
            for rec in records]


def apply(db_path: Path, records: list[dict[str, Any]],
          tree: Optional[Path]) -> list[dict[str, Any]]:
    """Verdict RECORDS of TREE with ``final``, ``source``, ``reviewer``,
    ``reason``, ``decided_at`` (and ``decision``, ``fingerprint``) added
    from the database at DB_PATH.  TREE is needed to read declarations;
    without it every decision made with one looks stale."""
    conn = connect(db_path)
    try:
        return apply_records(conn, records, tree)
    finally:
        conn.close()


@dataclass
class Entry:
    """A variable of the current scan, or a decision whose variable is gone."""
    key: str
    record: Optional[dict[str, Any]]
    decision: Optional[Decision]
    final: str
    source: str          # machine, human, stale, gone


def entries(conn: sqlite3.Connection, scan: Scan) -> list[Entry]:
    """Every variable of SCAN with its final verdict, then the gone ones."""
    decisions = current_decisions(conn)
    disputes = disputed(conn)
    records = machine_records(conn, scan.id)
    out = []
    for key, rec in records.items():
        d = decisions.get(key)
        final, source = final_of(rec["verdict"], rec["fingerprint"], d,
                                 key in disputes)
        out.append(Entry(key, rec, d, final, source))
    for key, d in decisions.items():
        if key not in records:
            out.append(Entry(key, None, d, d.verdict, "gone"))
    return sorted(out, key=lambda e: e.key)


def counts(items: list[Entry]) -> dict[str, int]:
    out = {"human": 0, "stale": 0, "gone": 0, "machine": 0}
    for e in items:
        out[e.source] += 1
    return out


# -- runtime evidence (schema 0002) -------------------------------------

@dataclass(frozen=True)
class Runtime:
    """One counter at one call site in one recorded forecast."""
    key: str
    site: str
    location: str
    match: str
    bits: int
    magnitude: int
    changes: int
    decreases: int
    rate: float
    overflow_s: Optional[float]
    run_id: int
    log: str
    recorded_at: str
    seconds: Optional[float]


def record_runtime(conn: sqlite3.Connection, log: str, vmlinux: str,
                   tree_name: str, seconds: Optional[float],
                   uptime_s: float, rows: Iterable[dict[str, Any]]) -> int:
    """Record one forecast's counters (ROWS: key, site, location, match,
    bits, magnitude, changes, decreases, rate, overflow_s); the run id."""
    with transaction(conn):
        cur = conn.execute(
            "INSERT INTO runtime_runs (log, vmlinux, tree_name, seconds, "
            "uptime_s, recorded_at) VALUES (?, ?, ?, ?, ?, ?)",
            (log, vmlinux, tree_name, seconds, uptime_s, now()))
        run_id = int(cur.lastrowid or 0)
        conn.executemany(
            "INSERT OR REPLACE INTO runtime (run_id, key, site, location, "
            "match, bits, magnitude, changes, decreases, rate, overflow_s) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(run_id, r["key"], r["site"], r.get("location") or "",
              r.get("match") or "exact", int(r["bits"]), int(r["magnitude"]),
              int(r["changes"]), int(r["decreases"]), float(r["rate"]),
              r.get("overflow_s")) for r in rows])
    return run_id


def runtime(conn: sqlite3.Connection, key: Optional[str] = None
            ) -> list[Runtime]:
    """Runtime evidence (of KEY), newest run first."""
    sql = ("SELECT r.*, u.log, u.recorded_at, u.seconds FROM runtime r "
           "JOIN runtime_runs u ON u.id = r.run_id")
    args: tuple[str, ...] = ()
    if key is not None:
        sql += " WHERE r.key = ?"
        args = (key,)
    rows = conn.execute(sql + " ORDER BY r.run_id DESC, r.key, r.site", args)
    return [Runtime(r["key"], r["site"], r["location"], r["match"],
                    r["bits"], r["magnitude"], r["changes"], r["decreases"],
                    r["rate"], r["overflow_s"], r["run_id"], r["log"],
                    r["recorded_at"], r["seconds"]) for r in rows]


def runtime_first_seen(conn: sqlite3.Connection) -> dict[str, str]:
    """Key -> when runtime evidence of it was first recorded."""
    return {r[0]: r[1] for r in conn.execute(
        "SELECT r.key, min(u.recorded_at) FROM runtime r JOIN runtime_runs "
        "u ON u.id = r.run_id GROUP BY r.key")}


def runtime_answered(decision: Optional[Decision], first_seen: str) -> bool:
    """Has a human decided on the counter since its runtime evidence was
    first recorded?  (Before that, the decision did not see it.)"""
    return decision is not None and decision.decided_at >= first_seen


def runtime_open(conn: sqlite3.Connection) -> set[str]:
    """Keys with runtime evidence that no decision has answered yet."""
    decisions = current_decisions(conn)
    return {k for k, seen in runtime_first_seen(conn).items()
            if not runtime_answered(decisions.get(k), seen)}
