# SPDX-License-Identifier: GPL-2.0-only
"""Read verdict records and say which conversion target each one allows.

A record's decision is its triage ``final`` when there is one, else the
classifier's ``verdict`` (source "machine"); see
Documentation/classification.rst and the interface notes on triage.
"""

import json
from pathlib import Path
from typing import Any, NamedTuple, Optional

from refsweep.classify import DECISIVE_USES

Record = dict[str, Any]

# Final verdicts that allow a counter to wrap (and "wraps": a human said it
# wraps by design).  Everything else stays overflow-checked.
WRAP_SAFE = {"statistic", "id", "state", "wraps"}


class VerdictError(Exception):
    """A verdict file is missing or malformed; the message says where."""


class Decision(NamedTuple):
    """What a record says about one variable, after triage."""
    final: str     # refcount, usage, statistic, id, state, unknown, wraps
    source: str    # machine, human or stale
    why: str       # rule or reviewer's reason


def read(path: Path) -> list[Record]:
    """All records of a JSON-lines verdict file."""
    if not path.is_file():
        raise VerdictError(f"{path}: no such verdict file")
    out: list[Record] = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise VerdictError(f"{path}:{n}: not JSON: {e.msg}") from e
            if not isinstance(rec, dict) or "key" not in rec or \
                    "verdict" not in rec:
                raise VerdictError(f"{path}:{n}: not a verdict record "
                                   "(no key/verdict)")
            out.append(rec)
    return out


def decision(rec: Record) -> Decision:
    """The final verdict of REC, falling back to the machine verdict."""
    final = rec.get("final")
    if final:
        source = str(rec.get("source") or "human")
        why = str(rec.get("reason") or rec.get("rule") or "")
        if source == "human" and rec.get("reviewer"):
            why = f"{why} ({rec['reviewer']})" if why else str(rec["reviewer"])
        return Decision(str(final), source, why)
    return Decision(str(rec["verdict"]), "machine", str(rec.get("rule", "")))


def _human_checked(rec: Record) -> bool:
    """A human decided that REC stays checked (refcount, usage), also
    when the code changed since (a stale decision): the classifier's
    wrap-by-design flag does not overrule a human."""
    return rec.get("decision") in ("refcount", "usage")


def wraps_by_design(rec: Record) -> bool:
    """Flagged by the classifier (unless a human decided it stays
    checked), or decided by a human, as wrapping."""
    return decision(rec).final == "wraps" or (
        bool(rec.get("wrap_by_design")) and not _human_checked(rec))


def may_wrap(rec: Record) -> bool:
    """True when REC may become atomic_unchecked_t (the wrap-safe set)."""
    return decision(rec).final in WRAP_SAFE or (
        bool(rec.get("wrap_by_design")) and not _human_checked(rec))


def decisive_evidence(rec: Record) -> Optional[str]:
    """One short line: the operation that decided the verdict."""
    if rec.get("wrap_evidence"):
        return str(rec["wrap_evidence"][0])
    wanted = DECISIVE_USES.get(str(rec.get("rule")), ())
    strong = [e for e in rec.get("evidence", []) if not e.get("weak")]
    for e in strong:
        if e.get("use") in wanted:
            return _evidence_text(e)
    for e in strong:
        if e.get("use") not in ("mod",):
            return _evidence_text(e)
    return _evidence_text(strong[0]) if strong else None


def _evidence_text(e: Record) -> str:
    detail = f": {e['detail']}" if e.get("detail") else ""
    return f"{e.get('op')} at {e.get('at')}{detail}"
