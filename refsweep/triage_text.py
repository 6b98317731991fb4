# SPDX-License-Identifier: GPL-2.0-only
"""Decisions as text files for review: export and import.

One file per area (``kernel.txt``, ``net-ipv4.txt``, ``include-linux.txt``),
one line per decision, six tab-separated fields::

    KEY  VERDICT  FINGERPRINT  DECIDED_AT  REVIEWER  REASON

sorted by key, a key's decisions oldest first (its full history), so a
file diffs and merges like source and can be sent as a patch.  Import
parses every line of every file before it writes anything, and writes in
one transaction: a malformed line fails the import with FILE:LINE and the
database is left as it was.

Import merges histories key by key.  When the database's history of a key
is part of the incoming one (or the other way round) the newer decisions
are appended.  When both have decisions the other lacks and their newest
verdicts differ, that is a conflict: reported, kept in the ``conflicts``
table, never applied, until ``triage set`` decides the key again.
"""

import json
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from refsweep import fingerprint, triage_db
from refsweep.triage_db import Decision, TriageError

HEADER = ("# refsweep triage decisions (bin/refsweep triage export); one per "
          "line, oldest first:\n"
          "# KEY<TAB>VERDICT<TAB>FINGERPRINT<TAB>DECIDED_AT<TAB>REVIEWER"
          "<TAB>REASON\n")
FIELDS = 6
_FP = re.compile(r"[0-9a-f]{16}")
_DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_AREA = re.compile(r"[A-Za-z0-9_.+-]+")
# What each decided fingerprint covered, so that a database made by import
# can still show a stale decision's old evidence.  One JSON object a line.
EVIDENCE_FILE = "evidence.jsonl"


@dataclass
class ImportResult:
    added: int = 0
    unchanged: int = 0
    conflicts: list[str] = field(default_factory=list)


def format_line(d: Decision) -> str:
    return "\t".join((d.key, d.verdict, d.fingerprint, d.decided_at,
                      d.reviewer, d.reason)) + "\n"


def render(decisions: list[Decision]) -> dict[str, str]:
    """Area -> file text for DECISIONS (a database's whole history).

    Every decision of a key goes to the file of the key's newest decision.
    """
    by_key: dict[str, list[Decision]] = {}
    for d in decisions:
        by_key.setdefault(d.key, []).append(d)
    files: dict[str, list[str]] = {}
    for key in sorted(by_key):
        hist = sorted(by_key[key], key=lambda d: d.id)
        area = hist[-1].area
        files.setdefault(area, []).extend(format_line(d) for d in hist)
    return {area: HEADER + "".join(lines) for area, lines in files.items()}


def export(conn: sqlite3.Connection, out_dir: Path) -> dict[str, int]:
    """Write every decision under OUT_DIR; area -> lines written.

    Decision files there from an earlier export that have no decisions
    now are removed, so the directory mirrors the database.
    """
    texts = render(triage_db.history(conn))
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.txt"):
        if old.stem not in texts and _is_decision_file(old):
            old.unlink()
    texts = {f"{area}.txt": text for area, text in texts.items()}
    evidence = render_evidence(conn)
    if evidence:
        texts[EVIDENCE_FILE] = evidence
    elif (out_dir / EVIDENCE_FILE).exists():
        (out_dir / EVIDENCE_FILE).unlink()
    for name, text in texts.items():
        path = out_dir / name
        tmp = path.with_name(name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return {n[:-4]: t.count("\n") - HEADER.count("\n")
            for n, t in texts.items() if n.endswith(".txt")}


def render_evidence(conn: sqlite3.Connection) -> str:
    """The evidence summaries of every decided fingerprint, sorted."""
    lines = []
    for fp in sorted({d.fingerprint for d in triage_db.history(conn)}):
        summary = triage_db.summary_of(conn, fp)
        if summary is not None:
            lines.append(json.dumps({"fingerprint": fp, **summary},
                                    sort_keys=True, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def parse_evidence(path: Path) -> dict[str, dict[str, Any]]:
    """Fingerprint -> summary from an evidence file; each line checked."""
    out = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TriageError(f"{path}: cannot read: {e}") from e
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(line)
            fp = obj.pop("fingerprint")
            ok = isinstance(obj.get("decls"), list) and \
                isinstance(obj.get("ops"), list) and "type" in obj
        except (ValueError, AttributeError, KeyError):
            ok = False
        if not ok:
            raise TriageError(f"{where}: expected a JSON object with "
                              "fingerprint, type, decls and ops")
        if fingerprint.of_summary(obj) != fp:
            raise TriageError(f"{where}: fingerprint {fp} does not match "
                              "the evidence on the line")
        out[fp] = obj
    return out


def _is_decision_file(path: Path) -> bool:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.readline() == HEADER.splitlines(keepends=True)[0]


def parse_line(line: str, where: str, area: str) -> Decision:
    """One decision line; TriageError naming WHERE (FILE:LINE) if bad."""
    parts = line.rstrip("\n").split("\t")
    if len(parts) != FIELDS:
        raise TriageError(f"{where}: expected {FIELDS} tab-separated fields "
                          f"(key, verdict, fingerprint, decided_at, "
                          f"reviewer, reason), found {len(parts)}")
    key, verdict, fp, decided_at, reviewer, reason = parts
    if not key.strip() or key != key.strip():
        raise TriageError(f"{where}: empty key or key with surrounding "
                          "spaces")
    if verdict not in triage_db.HUMAN_VERDICTS:
        raise TriageError(f"{where}: unknown verdict {verdict!r} (choose "
                          f"from {', '.join(triage_db.HUMAN_VERDICTS)})")
    if not _FP.fullmatch(fp):
        raise TriageError(f"{where}: fingerprint {fp!r} is not 16 "
                          "lower-case hex digits")
    if not _DATE.fullmatch(decided_at):
        raise TriageError(f"{where}: decided_at {decided_at!r} is not "
                          "YYYY-MM-DDTHH:MM:SSZ")
    if not reviewer.strip() or not reason.strip():
        raise TriageError(f"{where}: empty reviewer or reason")
    return Decision(key, verdict, fp, reviewer, decided_at, reason, area,
                    origin="import")


def parse_file(path: Path) -> list[tuple[Decision, str]]:
    """(decision, FILE:LINE) of every line of the decision file PATH."""
    area = path.stem
    if not _AREA.fullmatch(area):
        raise TriageError(f"{path}: file name must be AREA.txt with AREA "
                          "made of letters, digits and -_.+")
    out = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TriageError(f"{path}: cannot read: {e}") from e
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        where = f"{path}:{lineno}"
        out.append((parse_line(line, where, area), where))
    return out


def decision_files(paths: list[Path]) -> list[Path]:
    """PATHS with directories replaced by their ``*.txt`` files (and
    evidence file), sorted."""
    out = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted(p.glob("*.txt")))
            if (p / EVIDENCE_FILE).is_file():
                out.append(p / EVIDENCE_FILE)
        elif p.is_file():
            out.append(p)
        else:
            raise TriageError(f"{p}: no such file or directory")
    return out


def _same_conflict(row: dict[str, object], d: Decision) -> bool:
    return (row["verdict"], row["fingerprint"], row["reviewer"],
            row["decided_at"], row["reason"]) == \
        (d.verdict, d.fingerprint, d.reviewer, d.decided_at, d.reason)


def _merge_key(conn: sqlite3.Connection, key: str,
               incoming: list[tuple[Decision, str]], have: list[Decision],
               result: ImportResult) -> None:
    new = [(d, where) for d, where in incoming
           if not any(d.same(h) for h in have)]
    result.unchanged += len(incoming) - len(new)
    if not new:
        return
    fast_forward = all(any(h.same(d) for d, _w in incoming) for h in have)
    if have and not fast_forward and new[-1][0].verdict != have[-1].verdict:
        known = triage_db.open_conflicts(conn, key)
        for d, where in new:
            if any(_same_conflict(c, d) for c in known):
                continue
            conn.execute(
                "INSERT INTO conflicts (key, verdict, fingerprint, reviewer, "
                "decided_at, reason, area, source) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?)",
                (d.key, d.verdict, d.fingerprint, d.reviewer, d.decided_at,
                 d.reason, d.area, where))
        d, where = new[-1]
        h = have[-1]
        result.conflicts.append(
            f"conflict: {key}: database has {h.verdict} ({h.reviewer}, "
            f"{h.decided_at}), {where} has {d.verdict} ({d.reviewer}, "
            f"{d.decided_at}); kept {h.verdict}, decide with 'triage set'")
        return
    for d, _where in new:
        triage_db.insert_decision(conn, d)
        result.added += 1


def import_paths(conn: sqlite3.Connection, paths: list[Path]
                 ) -> ImportResult:
    """Merge the decision files at PATHS into CONN in one transaction."""
    incoming: dict[str, list[tuple[Decision, str]]] = {}
    evidence: dict[str, dict[str, Any]] = {}
    for path in decision_files(paths):
        if path.name == EVIDENCE_FILE:
            evidence.update(parse_evidence(path))
            continue
        for d, where in parse_file(path):
            incoming.setdefault(d.key, []).append((d, where))
    result = ImportResult()
    with triage_db.transaction(conn):
        conn.executemany(
            "INSERT OR IGNORE INTO evidence (fingerprint, summary) "
            "VALUES (?, ?)", [(fp, json.dumps(s, sort_keys=True))
                              for fp, s in sorted(evidence.items())])
        histories: dict[str, list[Decision]] = {}
        for d in triage_db.history(conn):
            histories.setdefault(d.key, []).append(d)
        for key in sorted(incoming):
            _merge_key(conn, key, incoming[key], histories.get(key, []),
                       result)
    return result
