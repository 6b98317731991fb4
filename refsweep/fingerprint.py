# SPDX-License-Identifier: GPL-2.0-only
"""The evidence fingerprint of a classified variable.

A human decision holds while the code it was based on is unchanged.  The
fingerprint is a hash of what a reviewer looked at: the variable's type,
the text of its declaration(s) and the set of (operation, function, use)
of its evidence.  Paths and line numbers are left out, so an unrelated
edit above a use, or a renamed file, does not disturb it; a new use, a use
in another function or a changed declaration does.

Only the documented verdict record (``refsweep classify --json``) is read,
never the classifier's internals.
"""

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Optional

_COMMENT = re.compile(r"/\*.*?\*/|//.*$")
_SPACE = re.compile(r"\s+")


def split_at(at: str) -> tuple[str, int]:
    """``PATH:LINE`` -> (PATH, LINE); LINE 0 when there is none."""
    path, _sep, line = at.rpartition(":")
    if not path or not line.isdigit():
        return at, 0
    return path, int(line)


def _line(tree: Path, at: str) -> str:
    path, lineno = split_at(at)
    if lineno <= 0:
        return ""
    try:
        with open(tree / path, encoding="utf-8", errors="replace") as f:
            for i, text in enumerate(f, 1):
                if i == lineno:
                    return text
    except OSError:
        return ""
    return ""


def decl_text(tree: Optional[Path], at: str) -> str:
    """The declaration line at AT, comments dropped, spaces collapsed."""
    if tree is None:
        return ""
    text = _COMMENT.sub(" ", _line(tree, at))
    return _SPACE.sub(" ", text).strip()


def summarize(record: dict[str, Any], tree: Optional[Path]) -> dict[str, Any]:
    """What the fingerprint covers, as a JSON-able dict.

    ``decls`` is the sorted set of declaration texts (``#ifdef`` twins
    included); ``ops`` the sorted set of [op, function, use] of every piece
    of evidence that is not weak.
    """
    decls = {decl_text(tree, at)
             for at in [record.get("decl", "")] + list(
                 record.get("also_declared") or [])}
    ops = {(str(e.get("op", "")), str(e.get("function") or ""),
            str(e.get("use", "")))
           for e in record.get("evidence") or [] if not e.get("weak")}
    return {"type": record.get("type", ""),
            "decls": sorted(decls),
            "ops": [list(op) for op in sorted(ops)]}


def of_summary(summary: dict[str, Any]) -> str:
    """The fingerprint: 16 hex digits of the SHA-256 of SUMMARY."""
    blob = json.dumps(summary, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def fingerprint(record: dict[str, Any], tree: Optional[Path]) -> str:
    """The fingerprint of one verdict RECORD read against TREE."""
    return of_summary(summarize(record, tree))


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Lines saying how summary NEW differs from OLD (for stale decisions)."""
    out = []
    if old.get("type") != new.get("type"):
        out.append(f"- type {old.get('type')}")
        out.append(f"+ type {new.get('type')}")
    for d in old.get("decls", []):
        if d not in new.get("decls", []):
            out.append(f"- decl {d}")
    for d in new.get("decls", []):
        if d not in old.get("decls", []):
            out.append(f"+ decl {d}")
    old_ops = {tuple(o) for o in old.get("ops", [])}
    new_ops = {tuple(o) for o in new.get("ops", [])}
    for sign, ops in (("-", old_ops - new_ops), ("+", new_ops - old_ops)):
        for op, func, use in sorted(ops):
            out.append(f"{sign} {op} in {func or '(file scope)'}: {use}")
    return out
