# SPDX-License-Identifier: GPL-2.0-only
"""The triage store: final verdicts, history, concurrency, crash safety."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import TOP
from refsweep import fingerprint, triage_db, triage_text
from triage_helpers import REVIEWER, make_tree, record, refsweep


@pytest.fixture
def db(tmp_path: Path) -> sqlite3.Connection:
    conn = triage_db.connect(tmp_path / "t.db")
    tree = make_tree(tmp_path / "tree", 10)
    triage_db.record_scan(conn, tree, [record(i) for i in range(10)])
    return conn


def test_new_database_is_wal_at_newest_schema(tmp_path: Path) -> None:
    conn = triage_db.connect(tmp_path / "new.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert triage_db.schema_version(conn) == len(triage_db.migrations())
    assert triage_db.schema_version(conn) >= 1


def test_fingerprint_ignores_lines_and_paths(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "tree", 3)
    rec = record(1)
    moved = json.loads(json.dumps(rec))
    for e in moved["evidence"]:
        e["at"] = "kernel/renamed.c:999"
    moved["evidence"].reverse()
    assert fingerprint.fingerprint(rec, tree) == \
        fingerprint.fingerprint(moved, tree)
    changed = record(1, uses=("mod", "zero-release"))
    assert fingerprint.fingerprint(rec, tree) != \
        fingerprint.fingerprint(changed, tree)
    # The declaration text counts: atomic_t -> atomic_long_t in the header.
    before = fingerprint.fingerprint(rec, tree)
    header = tree / "include/linux/tri.h"
    header.write_text(header.read_text().replace("atomic_t f1;",
                                                 "atomic_long_t f1;"))
    assert fingerprint.fingerprint(rec, tree) != before


def test_decision_overrides_then_turns_stale(db: sqlite3.Connection,
                                             tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    triage_db.decide(db, "struct tri.f1", "statistic", "only printed",
                     REVIEWER)
    triage_db.decide(db, "struct tri.f2", "refcount", "frees at zero",
                     REVIEWER)
    same = triage_db.apply_records(db, [record(1), record(2)], tree)
    assert [(r["final"], r["source"]) for r in same] == \
        [("statistic", "human"), ("refcount", "human")]
    assert same[0]["reviewer"] == REVIEWER
    assert same[0]["reason"] == "only printed"
    assert same[0]["decided_at"]
    # A new use: both stale.  f1 falls back to the machine verdict; f2 was
    # called checked by a human and the machine now says wrap-safe, so it
    # stays checked (unknown) until confirmed.
    new = [record(1, uses=("mod", "zero-wake", "print")),
           record(2, verdict="statistic", uses=("print",))]
    stale = triage_db.apply_records(db, new, tree)
    assert [(r["final"], r["source"]) for r in stale] == \
        [("usage", "stale"), ("unknown", "stale")]
    assert stale[1]["decision"] == "refcount"
    undecided = triage_db.apply_records(db, [record(3)], tree)
    assert (undecided[0]["final"], undecided[0]["source"],
            undecided[0]["reviewer"]) == ("usage", "machine", None)


def test_history_is_never_overwritten(db: sqlite3.Connection) -> None:
    for verdict in ("usage", "refcount", "wraps"):
        triage_db.decide(db, "struct tri.f4", verdict, f"now {verdict}",
                         REVIEWER)
    hist = triage_db.history(db, "struct tri.f4")
    assert [d.verdict for d in hist] == ["usage", "refcount", "wraps"]
    assert triage_db.current_decisions(db)["struct tri.f4"].verdict == \
        "wraps"


def test_decide_refuses_bad_input(db: sqlite3.Connection) -> None:
    with pytest.raises(triage_db.TriageError, match="unknown key"):
        triage_db.decide(db, "struct tri.nope", "usage", "r", REVIEWER)
    with pytest.raises(triage_db.TriageError, match="unknown verdict"):
        triage_db.decide(db, "struct tri.f1", "unknown", "r", REVIEWER)
    with pytest.raises(triage_db.TriageError, match="needs a reason"):
        triage_db.decide(db, "struct tri.f1", "usage", " \t", REVIEWER)
    assert triage_db.history(db) == []


def test_gone_and_counts(db: sqlite3.Connection, tmp_path: Path) -> None:
    for i in range(4):
        triage_db.decide(db, f"struct tri.f{i}", "usage", "waits", REVIEWER)
    # The next tree: f0 unchanged, f1 changed, f2 and f3 gone.
    triage_db.record_scan(db, make_tree(tmp_path / "tree2", 10),
                          [record(0), record(1, uses=("mod",))] +
                          [record(i) for i in range(4, 10)])
    items = triage_db.entries(db, triage_db.current_scan(db))
    assert triage_db.counts(items) == \
        {"human": 1, "stale": 1, "gone": 2, "machine": 6}
    assert {e.key for e in items if e.source == "gone"} == \
        {"struct tri.f2", "struct tri.f3"}


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    triage_db.connect(path).execute("PRAGMA user_version = 99")
    with pytest.raises(triage_db.TriageError, match="schema version 99 is "
                       "newer"):
        triage_db.connect(path)


_WRITER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from refsweep import triage_db
conn = triage_db.connect(Path(sys.argv[2]))
name, other = sys.argv[3], sys.argv[4]
print(time.time(), flush=True)
for i in range(1000):
    triage_db.decide(conn, f"struct tri.f{i % 10}", "usage",
                     f"{name} decision {i}", name)
    # Overlap for certain, however the processes are scheduled: after
    # its first decision each writer waits for one of the other's.
    while i == 0 and not any(d.reviewer == other
                             for d in triage_db.history(conn)):
        time.sleep(0.01)
print(time.time(), flush=True)
"""


def test_two_writers_lose_nothing(db: sqlite3.Connection,
                                  tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(TOP),
                               str(path), name, other],
                              stdout=subprocess.PIPE, text=True)
             for name, other in (("alice", "bob"), ("bob", "alice"))]
    spans = []
    for p in procs:
        out, _err = p.communicate(timeout=600)
        assert p.returncode == 0
        start, end = (float(x) for x in out.split())
        spans.append((start, end))
    # They really ran at the same time.
    assert spans[0][0] < spans[1][1] and spans[1][0] < spans[0][1]
    hist = triage_db.history(db)
    assert len(hist) == 2000
    for name in ("alice", "bob"):
        reasons = {d.reason for d in hist if d.reviewer == name}
        assert reasons == {f"{name} decision {i}" for i in range(1000)}


def _dump(path: Path) -> list[str]:
    conn = sqlite3.connect(str(path))
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_sigkill_during_import_changes_nothing(db: sqlite3.Connection,
                                               tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    triage_db.decide(db, "struct tri.f1", "wraps", "biased", REVIEWER)
    before = _dump(path)
    big = tmp_path / "big"
    big.mkdir()
    lines = "".join(f"struct big.m{i}\tstatistic\t{i:016x}\t"
                    f"2026-01-01T00:00:00Z\t{REVIEWER}\tprinted only\n"
                    for i in range(40000))
    (big / "big.txt").write_text(triage_text.HEADER + lines)
    wal = Path(str(path) + "-wal")
    base = wal.stat().st_size if wal.exists() else 0
    proc = subprocess.Popen([str(TOP / "bin" / "refsweep"), "triage",
                             "import", "--db", str(path), str(big)],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    # Kill it in the middle of its write transaction: a probe cannot begin
    # one of its own, and uncommitted pages are already spilling to the WAL.
    probe = sqlite3.connect(str(path), timeout=0, isolation_level=None)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
        except sqlite3.OperationalError:
            if wal.exists() and wal.stat().st_size > base + (256 << 10):
                os.kill(proc.pid, signal.SIGKILL)
                break
        time.sleep(0.005)
    probe.close()
    assert proc.wait(timeout=60) == -signal.SIGKILL
    assert _dump(path) == before
    conn = sqlite3.connect(str(path))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    # And the same import then completes.
    res = refsweep("triage", "import", "--db", str(path), str(big))
    assert res.returncode == 0, res.stderr
    assert len(triage_db.history(triage_db.connect(path))) == 40001


def test_record_replaces_same_revision(db: sqlite3.Connection,
                                       tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    triage_db.record_scan(db, tree, [record(1, verdict="refcount")])
    assert len(triage_db.scans(db)) == 1
    recs = triage_db.machine_records(db, triage_db.current_scan(db).id)
    assert list(recs) == ["struct tri.f1"]
    assert recs["struct tri.f1"]["verdict"] == "refcount"


def test_classify_output_from_file(tmp_path: Path) -> None:
    """apply() is what classify --triage uses: a path and records."""
    tree = make_tree(tmp_path / "tree", 3)
    path = tmp_path / "t.db"
    conn = triage_db.connect(path)
    triage_db.record_scan(conn, tree, [record(0)])
    triage_db.decide(conn, "struct tri.f0", "id", "a serial", REVIEWER)
    conn.close()
    out = triage_db.apply(path, [record(0), record(1)], tree)
    assert [(r["final"], r["source"]) for r in out] == \
        [("id", "human"), ("usage", "machine")]


def test_migration_upgrades_an_older_database(tmp_path: Path) -> None:
    """A database made at version 1 gets a later migration, once."""
    path = tmp_path / "old.db"
    conn = triage_db.connect(path)
    triage_db.record_scan(conn, make_tree(tmp_path / "tree", 2), [record(0)])
    triage_db.decide(conn, "struct tri.f0", "usage", "waits", REVIEWER)
    conn.close()
    schema = tmp_path / "schema"
    schema.mkdir()
    for f in triage_db.migrations():
        (schema / f.name).write_text(f.read_text())
    n = len(triage_db.migrations()) + 1
    (schema / f"{n:04d}-note.sql").write_text(
        "-- a later schema\nALTER TABLE decisions ADD COLUMN note TEXT;\n")
    raw = sqlite3.connect(str(path), isolation_level=None)
    assert triage_db.migrate(raw, str(path), schema) == n
    assert triage_db.migrate(raw, str(path), schema) == n
    assert triage_db.schema_version(raw) == n
    cols = [r[1] for r in raw.execute("PRAGMA table_info(decisions)")]
    assert "note" in cols
    assert raw.execute("SELECT reason FROM decisions").fetchall() == \
        [("waits",)]
    # This refsweep does not know version n: refused, not downgraded.
    raw.close()
    with pytest.raises(triage_db.TriageError, match=f"version {n} is newer"):
        triage_db.connect(path)
