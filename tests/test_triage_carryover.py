# SPDX-License-Identifier: GPL-2.0-only
"""Decisions carry over to another tree, turn stale, or are gone.

First on two hand-written versions of one driver (a renamed file, moved
lines, one changed variable), then on real trees: decisions made on a
subset of Linux 6.12, re-checked against the same subset of Linux 6.1.
"""

import json
import os
import sqlite3
from pathlib import Path

import pytest

from conftest import FIXTURES, TOP, classify_tree, make_tree
from refsweep import tree, triage_db
from triage_helpers import REVIEWER, refsweep

TRIAGE_FIXTURES = FIXTURES / "triage"


def _scan(conn: sqlite3.Connection, root: Path, files: dict[str, Path]
          ) -> dict[str, triage_db.Entry]:
    tree = make_tree(root, {name: src.read_text(encoding="utf-8")
                            for name, src in files.items()})
    records = classify_tree(tree)
    triage_db.record_scan(conn, tree, list(records.values()))
    return {e.key: e for e in
            triage_db.entries(conn, triage_db.current_scan(conn))}


def test_renamed_file_keeps_struct_decisions(tmp_path: Path) -> None:
    conn = triage_db.connect(tmp_path / "t.db")
    first = _scan(conn, tmp_path / "v1",
                  {"drivers/widget/widget.c": TRIAGE_FIXTURES / "v1/widget.c"})
    decided = {"struct widget.users": "refcount",
               "struct widget.rx_packets": "statistic",
               "struct widget.pending": "usage",
               "drivers/widget/widget.c:widget_serial": "id"}
    assert set(first) == set(decided)
    for key, verdict in decided.items():
        triage_db.decide(conn, key, verdict, "read the fixture", REVIEWER)
    second = _scan(conn, tmp_path / "v2",
                   {"drivers/widget/widget_core.c":
                    TRIAGE_FIXTURES / "v2/widget_core.c"})
    sources = {k: e.source for k, e in second.items()}
    assert sources == {
        "struct widget.users": "human",
        "struct widget.pending": "human",
        "struct widget.rx_packets": "stale",
        "drivers/widget/widget.c:widget_serial": "gone",
        "drivers/widget/widget_core.c:widget_serial": "machine"}
    assert second["struct widget.users"].final == "refcount"
    # The stale decision no longer decides; the old and new evidence are
    # both in the database for 'triage show'.
    stale = second["struct widget.rx_packets"]
    assert stale.decision is not None and stale.record is not None
    assert stale.final == stale.record["verdict"]
    old = triage_db.summary_of(conn, stale.decision.fingerprint)
    new = triage_db.summary_of(conn, stale.record["fingerprint"])
    assert old is not None and new is not None
    assert {tuple(o) for o in new["ops"]} - {tuple(o) for o in old["ops"]}
    assert any(o[1] == "widget_throttled" for o in new["ops"])


# -- real trees -------------------------------------------------------------

SUBSET = ["kernel", "lib"]
# Decisions made on the kernel/ + lib/ subset of Linux 6.12, and what they
# become on the same subset of Linux 6.1.  Each was checked by reading both
# trees (git grep of the variable in each, the enclosing function of every
# use with 'git grep -p'):
CARRIED = {
    # the same uses in the same functions, only line numbers moved
    "kernel/audit.c:audit_lost": "statistic",          # inc, read, xchg
    "kernel/sched/autogroup.c:autogroup_seq_nr": "id",  # autogroup_create
    "kernel/events/core.c:perf_event_id": "id",         # perf_event_alloc
    "struct audit_chunk.refs": "refcount",              # audit_tree.c
    "struct futex_hash_bucket.waiters": "usage",        # futex.h helpers
}
STALE = {
    # 6.12 increments it in __block_task() (sched.h), 6.1 in __schedule()
    "struct rq.nr_iowait": "usage",
    # set in __alloc_workqueue() in 6.12, in alloc_workqueue() in 6.1
    "struct workqueue_struct.nr_pwqs_to_flush": "usage",
    # inc/dec in ftrace_dump_one() in 6.12, in ftrace_dump() in 6.1
    "struct trace_array_cpu.disabled": "usage",
    # kexec_trylock(): atomic_try_cmpxchg_acquire in 6.12,
    # atomic_cmpxchg_acquire(...) == 0 in 6.1
    "kernel/kexec_core.c:__kexec_lock": "state",
}
GONE = {
    "kernel/module/stats.c:modcount": "statistic",      # module stats: 6.4
    "kernel/sched/ext.c:scx_nr_rejected": "statistic",  # sched_ext: 6.12
    "struct pids_cgroup.events_local": "statistic",     # added after 6.1
    "lib/kobject_uevent.c:uevent_seqnum": "id",         # a plain u64 in 6.1
}


def _tree(version: str) -> Path:
    """The prepared tree: the user's work dir, else work/ (made if need)."""
    for base in (Path(os.environ.get("REFSWEEP_WORK", TOP / "work")),
                 TOP / "work"):
        if (base / "trees" / f"linux-{version}" / ".git").is_dir():
            return base / "trees" / f"linux-{version}"
    return tree.prepare_from_package(
        version, TOP / "work" / "trees" / f"linux-{version}")


@pytest.fixture(scope="module")
def trees() -> dict[str, Path]:
    return {v: _tree(v) for v in ("6.12", "6.1")}


def _classify(tree_dir: Path, out: Path, work: Path) -> Path:
    res = refsweep("classify", "--tree", str(tree_dir), "--json", str(out),
                   "--jobs", "2", *SUBSET,
                   env={"REFSWEEP_WORK": str(work)})
    assert res.returncode == 0, res.stderr
    return out


def test_carry_over_from_6_12_to_6_1(trees: dict[str, Path],
                                     tmp_path: Path) -> None:
    work = Path(os.environ["REFSWEEP_WORK"])
    db = tmp_path / "t.db"
    new = _classify(trees["6.12"], tmp_path / "6.12.jsonl", work)
    res = refsweep("triage", "record", "--db", str(db), "--tree",
                   str(trees["6.12"]), str(new))
    assert res.returncode == 0, res.stderr
    conn = triage_db.connect(db)
    decided = {**CARRIED, **STALE, **GONE}
    for key, verdict in decided.items():
        triage_db.decide(conn, key, verdict, "hand-checked", REVIEWER)
    old = _classify(trees["6.1"], tmp_path / "6.1.jsonl", work)
    res = refsweep("triage", "record", "--db", str(db), "--tree",
                   str(trees["6.1"]), str(old))
    assert res.returncode == 0, res.stderr
    scan = triage_db.current_scan(conn)
    assert scan.version.startswith("6.1.")
    got = {e.key: e.source for e in triage_db.entries(conn, scan)
           if e.key in decided}
    assert {k: got[k] for k in CARRIED} == {k: "human" for k in CARRIED}
    assert {k: got[k] for k in STALE} == {k: "stale" for k in STALE}
    assert {k: got[k] for k in GONE} == {k: "gone" for k in GONE}
    counts = triage_db.counts([e for e in triage_db.entries(conn, scan)
                               if e.key in decided])
    assert counts == {"human": 5, "stale": 4, "gone": 4, "machine": 0}
    # classify --triage on the 6.1 subset: the same, in the records.
    res = refsweep("classify", "--tree", str(trees["6.1"]), "--json",
                   str(tmp_path / "final.jsonl"), "--triage", str(db),
                   *SUBSET, env={"REFSWEEP_WORK": str(work)})
    assert res.returncode == 0, res.stderr
    final = {r["key"]: r for r in map(json.loads, open(
        tmp_path / "final.jsonl", encoding="utf-8"))}
    assert final["kernel/audit.c:audit_lost"]["source"] == "human"
    assert final["kernel/audit.c:audit_lost"]["final"] == "statistic"
    assert final["kernel/audit.c:audit_lost"]["reviewer"] == REVIEWER
    assert final["struct rq.nr_iowait"]["source"] == "stale"
    assert final["struct rq.nr_iowait"]["decision"] == "usage"
