#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The hand-labelled benchmarks: classifier verdicts vs a labels file.

    bench/labelled.py [--labels FILE] [--strict] VERDICTS.jsonl

FILE (default bench/labels.tsv) is tab-separated: '#' lines are comments,
the first other line names the columns.  Required columns: decl
(PATH:LINE), key, label (refcount, usage, statistic, id, state; unknown), and a
last free-text column; optional: type, wraps ("wraps" or "-").

A row's expected side is "wrap-safe" when it is labelled statistic, id or
state or marked wraps, "checked" otherwise.  A verdict's side is
"wrap-safe" when the verdict is statistic/id/state or the record is flagged
wrap_by_design, "checked" for refcount/usage; unknown is undecided (and
stays checked).  Prints the confusion table and the bars: no
refcount/usage label (not marked wraps) gets a wrap-safe side; at least
88% decided; at least 95% agreement on checked vs wrap-safe among the
decided; every disagreement is listed with its direction.  --strict exits 1
when a bar is missed.
"""

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import Any, NamedTuple, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
import verdicts  # noqa: E402

# "unknown" (the labeller could not decide) is allowed in a labels file;
# such a row never counts as agreeing.
LABELS = ("refcount", "usage", "statistic", "id", "state", "unknown")
ORDER = LABELS
DEFAULT_LABELS = Path(__file__).resolve().parent / "labels.tsv"
REQUIRED = ("decl", "key", "label")
BAR_DECIDED = 88.0
BAR_AGREE = 95.0


class LabelError(Exception):
    """A labels file is malformed; the message names the line."""


class Label(NamedTuple):
    """One hand-labelled variable."""
    decl: str
    key: str
    label: str
    wraps: bool
    type: str
    rationale: str


def read_labels(path: Path) -> list[Label]:
    """The rows of a labels file, checked."""
    rows: list[Label] = []
    header: Optional[list[str]] = None
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise LabelError(f"{path}: cannot read: {e.strerror}") from e
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise LabelError(f"{path}:{n}: header lacks column(s) "
                                 f"{', '.join(missing)}")
            continue
        if len(cells) != len(header):
            raise LabelError(f"{path}:{n}: {len(cells)} columns, header "
                             f"has {len(header)}")
        row = dict(zip(header, cells))
        if row["label"] not in LABELS:
            raise LabelError(f"{path}:{n}: unknown label {row['label']!r} "
                             f"(one of {', '.join(LABELS)})")
        wraps = row.get("wraps", "-")
        if wraps not in ("-", "wraps"):
            raise LabelError(f"{path}:{n}: wraps column is {wraps!r}, "
                             "not 'wraps' or '-'")
        rows.append(Label(row["decl"], row["key"], row["label"],
                          wraps == "wraps", row.get("type", "atomic_t"),
                          cells[-1]))
    if header is None:
        raise LabelError(f"{path}: no header line")
    return rows


def label_side(row: Label) -> Optional[str]:
    """wrap-safe, checked, or None for a row labelled unknown."""
    if row.wraps or row.label in verdicts.WRAP_SAFE:
        return "wrap-safe"
    if row.label == "unknown":
        return None
    return "checked"


def verdict_side(obj: Optional[dict[str, Any]]) -> Optional[str]:
    """wrap-safe, checked, or None when undecided (unknown or missing)."""
    if obj is None:
        return None
    if obj.get("wrap_by_design") or obj["verdict"] in verdicts.WRAP_SAFE:
        return "wrap-safe"
    if obj["verdict"] == "unknown":
        return None
    return "checked"


class Score(NamedTuple):
    """What one labels file scores against one verdicts file."""
    rows: int
    decided: int
    agree: int
    unsafe: list[str]
    disagreements: list[str]
    missing: list[str]
    table: dict[tuple[str, str], int]
    wraps_rows: int
    wraps_caught: int


def _describe(obj: Optional[dict[str, Any]]) -> str:
    if obj is None:
        return "missing"
    flag = ", wrap_by_design" if obj.get("wrap_by_design") else ""
    return f"{obj['verdict']} ({obj.get('rule', '')}{flag})"


def score(labels: list[Label], found: dict[str, dict[str, Any]]) -> Score:
    table: collections.Counter[tuple[str, str]] = collections.Counter()
    unsafe: list[str] = []
    disagreements: list[str] = []
    missing: list[str] = []
    decided = agree = wraps_rows = wraps_caught = 0
    for row in labels:
        obj = found.get(row.decl)
        got = obj["verdict"] if obj else "missing"
        table[(row.label, got)] += 1
        side = verdict_side(obj)
        want = label_side(row)
        what = f"{row.key} ({row.decl}): label {row.label}" + \
            (" wraps" if row.wraps else "") + f", got {_describe(obj)}"
        if obj is None:
            missing.append(f"{row.key} ({row.decl})")
        if row.wraps:
            wraps_rows += 1
            wraps_caught += side == "wrap-safe"
        if want == "checked" and side == "wrap-safe":
            unsafe.append(what)
        if side is None:
            continue
        decided += 1
        if side == want:
            agree += 1
        else:
            direction = {"checked": "UNSAFE", "wrap-safe": "safe side",
                         None: "label unknown"}[want]
            disagreements.append(f"{direction}: {what}")
    return Score(len(labels), decided, agree, unsafe, disagreements,
                 missing, dict(table), wraps_rows, wraps_caught)


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} = {100 * a / max(b, 1):.1f}%"


def report(name: str, s: Score) -> list[str]:
    cols = ORDER + ("missing",)
    out = [f"== {name}",
           "label \\ verdict " + "".join(f"{c[:9]:>10}" for c in cols)]
    for label in LABELS:
        out.append(f"{label:<16}" + "".join(
            f"{s.table.get((label, c), 0):>10}" for c in cols))
    out.append(f"labelled variables: {s.rows}")
    out.append("refcount/usage labels given a wrap-safe verdict or flag: "
               f"{len(s.unsafe)} (bar: 0)")
    out.extend(f"  UNSAFE {u}" for u in s.unsafe)
    out.append(f"decided (not unknown): {_pct(s.decided, s.rows)} "
               f"(bar: >= {BAR_DECIDED:.0f}%)")
    out.append("agree on checked vs wrap-safe among decided: "
               f"{_pct(s.agree, s.decided)} (bar: >= {BAR_AGREE:.0f}%)")
    out.extend(f"  differs, {d}" for d in s.disagreements)
    if s.wraps_rows:
        out.append(f"labelled wraps-by-design kept unchecked (wrap-safe "
                   f"verdict or flag): {_pct(s.wraps_caught, s.wraps_rows)}")
    if s.missing:
        out.append(f"labelled declarations not in the verdicts: "
                   f"{len(s.missing)}")
        out.extend(f"  missing {m}" for m in s.missing)
    return out


def passes(s: Score) -> bool:
    return not s.unsafe and \
        100 * s.decided >= BAR_DECIDED * max(s.rows, 1) and \
        100 * s.agree >= BAR_AGREE * max(s.decided, 1)


def whole_tree(path: Path) -> str:
    whole: collections.Counter[str] = collections.Counter()
    flagged = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            obj = json.loads(line)
            whole[obj["verdict"]] += 1
            flagged += bool(obj.get("wrap_by_design"))
    total = sum(whole.values()) or 1
    safe = sum(whole[v] for v in verdicts.WRAP_SAFE)
    return (f"whole tree: {total} variables, wrap-safe "
            f"{100 * safe / total:.1f}%, checked "
            f"{100 * (total - safe - whole['unknown']) / total:.1f}%, "
            f"unknown {100 * whole['unknown'] / total:.1f}%, "
            f"flagged wrap-by-design {flagged}")


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("verdicts", type=Path, help="verdicts (JSON lines)")
    p.add_argument("--labels", type=Path, default=DEFAULT_LABELS)
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when a bar is missed")
    args = p.parse_args(argv)
    try:
        labels = read_labels(args.labels)
        found = verdicts.by_decl(args.verdicts)
    except LabelError as e:
        print(f"labelled.py: {e}", file=sys.stderr)
        return 2
    except (OSError, ValueError, KeyError) as e:
        print(f"labelled.py: {args.verdicts}: not a verdicts file: {e}",
              file=sys.stderr)
        return 2
    s = score(labels, found)
    print("\n".join(report(f"{args.labels.name} vs {args.verdicts}", s)))
    print(whole_tree(args.verdicts))
    return 1 if args.strict and not passes(s) else 0


if __name__ == "__main__":
    sys.exit(main())
