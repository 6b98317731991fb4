# SPDX-License-Identifier: GPL-2.0-only
"""Decisions carry over to another tree, turn stale, or are gone.

First on two hand-written versions of one driver (a renamed file, moved
lines, one changed variable), then on real trees: decisions made on a
subset of Linux 6.12, re-checked against the same subset of Linux 6.1.
"""

import sqlite3
from pathlib import Path

from conftest import FIXTURES, classify_tree, make_tree
from refsweep import triage_db
from triage_helpers import REVIEWER

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
