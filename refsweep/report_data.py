# SPDX-License-Identifier: GPL-2.0-only
"""The data behind every report: verdict records grouped for reviewers.

``build()`` turns the verdict records of one tree (``refsweep classify
--json``, with the triage fields where a database was applied) into one
JSON-ready dictionary: totals, one entry per subsystem, and per variable
its final verdict, who decided and its evidence as code excerpts.  The HTML
and text renderers only format this dictionary, so what a mail says and
what a page shows cannot disagree.  Documentation/reports.rst documents
the schema.
"""

import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from refsweep import verdicts
from refsweep.classify import DECISIVE_USES

Record = dict[str, Any]

SCHEMA_VERSION = 1
VERDICTS = ("refcount", "usage", "statistic", "id", "state", "wraps",
            "unknown")
WRAP_SAFE = tuple(v for v in VERDICTS if v in verdicts.WRAP_SAFE)
SOURCES = ("machine", "human", "stale")
TYPES = ("atomic_t", "atomic64_t", "atomic_long_t")
CONTEXT_LINES = 2
MAX_EXCERPTS = 12


def anchor(key: str) -> str:
    """A stable HTML id for a variable key (same key, same anchor)."""
    return "v-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", key).strip("-")


def path_of(at: str) -> str:
    """PATH of a PATH:LINE location."""
    return at.rsplit(":", 1)[0]


def line_of(at: str) -> int:
    tail = at.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def top_dir(path: str) -> str:
    """The top-level directory a path is in (or the file, at top level)."""
    return path.split("/", 1)[0]


def directory_section(path: str) -> tuple[str, str]:
    """Fallback subsystem: the declaration's directory, two levels deep."""
    parts = path.split("/")[:-1]
    depth = 3 if parts[:1] in (["drivers"], ["arch"], ["sound"]) else 2
    name = "/".join(parts[:depth]) or "(top level)"
    return name, slug(name)


def slug(name: str) -> str:
    """A file-name-safe, lower-case form of a section name."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "top"


class SourceLines:
    """Lines of the tree's files, each file read once."""

    def __init__(self, tree: Optional[Path]) -> None:
        self.tree = tree
        self._cache: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self._cache:
            text = ""
            if self.tree is not None:
                try:
                    text = (self.tree / path).read_text(encoding="utf-8",
                                                        errors="replace")
                except OSError:
                    text = ""
            self._cache[path] = text.splitlines()
        return self._cache[path]

    def excerpt(self, at: str, context: int = CONTEXT_LINES
                ) -> list[dict[str, Any]]:
        """The lines around PATH:LINE, as [{no, text, mark}]."""
        lines = self.lines(path_of(at))
        mark = line_of(at)
        if not lines or not 1 <= mark <= len(lines):
            return []
        lo, hi = max(1, mark - context), min(len(lines), mark + context)
        return [{"no": n, "text": lines[n - 1], "mark": n == mark}
                for n in range(lo, hi + 1)]


def excerpts(rec: Record, src: SourceLines) -> tuple[list[Record], int]:
    """The declaration and the uses to show, decisive first; how many left out."""
    decisive = DECISIVE_USES.get(str(rec.get("rule")), ())
    shown: list[Record] = [{"at": rec["decl"], "what": "declaration", "flags": [],
                            "decisive": False,
                            "lines": src.excerpt(rec["decl"])}]
    uses = []
    seen = set()
    for e in rec.get("evidence", []):
        if e["at"] in seen:
            continue
        seen.add(e["at"])
        flags = [f for f in ("ambiguous", "weak") if e.get(f)]
        if e.get("parsed") is False:
            flags.append("text only")
        uses.append({"at": e["at"], "function": e.get("function"),
                     "what": f"{e['op']}: {e['use']}",
                     "flags": flags,
                     "decisive": e["use"] in decisive and not e.get("weak")})
    uses.sort(key=lambda u: not u["decisive"])
    for u in uses[:MAX_EXCERPTS]:
        u["lines"] = src.excerpt(u["at"])
    return shown + uses[:MAX_EXCERPTS], max(0, len(uses) - MAX_EXCERPTS)


def variable_entry(rec: Record, src: SourceLines) -> Record:
    shown, left_out = excerpts(rec, src)
    decision = verdicts.decision(rec)
    return {
        "key": rec["key"], "anchor": anchor(rec["key"]), "type": rec["type"],
        "decl": rec["decl"], "scope": rec.get("scope"),
        "final": decision.final, "verdict": rec["verdict"],
        "rule": rec.get("rule"), "confidence": rec.get("confidence"),
        "source": decision.source, "reviewer": rec.get("reviewer"),
        "reason": rec.get("reason"), "decided_at": rec.get("decided_at"),
        "wrap_by_design": bool(rec.get("wrap_by_design")),
        "wrap_evidence": list(rec.get("wrap_evidence") or []),
        "group": rec.get("group"),
        "uses": len(rec.get("evidence", [])),
        "excerpts": shown, "excerpts_left_out": left_out,
    }


def totals(entries: Iterable[Record]) -> Record:
    """Counts per final verdict, source and type, and the three classes."""
    by_final: Counter[str] = Counter()
    by_source: Counter[str] = Counter()
    by_type: Counter[str] = Counter()
    n = flagged = 0
    for e in entries:
        n += 1
        by_final[e["final"]] += 1
        by_source[e["source"]] += 1
        by_type[e["type"]] += 1
        flagged += e["wrap_by_design"]
    safe = sum(by_final[v] for v in WRAP_SAFE)
    return {
        "variables": n,
        "by_final": {v: by_final[v] for v in VERDICTS},
        "by_source": {s: by_source[s] for s in SOURCES},
        "by_type": {t: by_type[t] for t in TYPES},
        "wrap_safe": safe, "unknown": by_final["unknown"],
        "checked": n - safe - by_final["unknown"],
        "wrap_by_design": flagged,
    }


Sectioner = Callable[[str], tuple[str, str]]


def build(records: list[Record], tree: Optional[Path],
          section_of: Sectioner = directory_section,
          series: Optional[Record] = None,
          meta: Optional[Record] = None) -> Record:
    """The whole report as one JSON-ready dictionary."""
    src = SourceLines(tree)
    sections: dict[str, Record] = {}
    per_top: dict[str, Counter[str]] = {}
    everything = []
    for rec in sorted(records, key=lambda r: str(r["key"])):
        entry = variable_entry(rec, src)
        everything.append(entry)
        name, sl = section_of(path_of(rec["decl"]))
        entry["subsystem"] = sl
        sec = sections.setdefault(sl, {"slug": sl, "name": name,
                                       "variables": []})
        sec["variables"].append(entry)
        per_top.setdefault(top_dir(path_of(rec["decl"])),
                           Counter())[entry["final"]] += 1
    subsystems = []
    for sec in sorted(sections.values(), key=lambda s: str(s["name"]).lower()):
        sec["totals"] = totals(sec["variables"])
        sec["series"] = (series or {}).get(sec["slug"])
        subsystems.append(sec)
    return {
        "schema": SCHEMA_VERSION,
        "meta": meta or {},
        "totals": totals(everything),
        "by_top_dir": {d: {v: c[v] for v in VERDICTS}
                       for d, c in sorted(per_top.items())},
        "subsystems": subsystems,
    }


def index_by_key(report: Record) -> dict[str, Record]:
    return {v["key"]: v for s in report["subsystems"] for v in s["variables"]}


def compare(old: Record, new: Record) -> Record:
    """What changed from OLD to NEW: the page a linux-next reader reads."""
    before, after = index_by_key(old), index_by_key(new)

    def brief(v: Record) -> Record:
        return {k: v[k] for k in ("key", "anchor", "subsystem", "decl",
                                  "final", "rule", "source")}

    changed, stale = [], []
    for key in sorted(set(before) & set(after)):
        a, b = before[key], after[key]
        if a["final"] != b["final"]:
            changed.append({**brief(b), "was": a["final"],
                            "was_rule": a["rule"], "was_source": a["source"]})
        if b["source"] == "stale" and a["source"] != "stale":
            stale.append({**brief(b), "reviewer": b.get("reviewer"),
                          "reason": b.get("reason")})
    return {
        "old": old.get("meta", {}), "new": new.get("meta", {}),
        "new_variables": [brief(after[k]) for k in sorted(set(after) - set(before))],
        "vanished": [brief(before[k]) for k in sorted(set(before) - set(after))],
        "verdict_changes": changed,
        "turned_stale": stale,
    }


def add_forecast(report: Record, fc: Record) -> Record:
    """Put a forecast (``refsweep forecast --json``) into REPORT: every
    variable a site of the dump moved gets ``runtime`` (its sites, rate,
    projected overflow and status), and REPORT["forecast"] lists the
    counters by status, the sites no counter matched and the counters
    flagged wrap-by-design that the workload did not move (not
    exercised).  Returns REPORT."""
    by_key = index_by_key(report)
    sites = {s["site"]: s for s in fc.get("sites", [])}
    counters = []
    for c in fc.get("counters", []):
        v = by_key.get(c["key"])
        ss = [sites[s] for s in c.get("sites", []) if s in sites]
        first: Record = min(
            ss, key=lambda s: (s["overflow_uptime_s"] is None,
                               s["overflow_uptime_s"] or 0.0), default={})
        row = {"key": c["key"], "anchor": anchor(c["key"]),
               "subsystem": v["subsystem"] if v else None,
               "status": c["status"], "rate": c["rate"],
               "decreased": c["decreased"],
               "overflow_uptime_s": c["overflow_uptime_s"],
               "final": c["final"], "reason": c.get("reason"),
               "site": first.get("site"), "location": first.get("location")}
        counters.append(row)
        if v is not None:
            v["runtime"] = {**row, "sites": ss}
    order = {"FAIL": 0, "ok": 1, "explained": 2, "converted": 3}
    counters.sort(key=lambda r: (order.get(r["status"], 4),
                                 r["overflow_uptime_s"] is None,
                                 r["overflow_uptime_s"] or 0.0, r["key"]))
    not_exercised = []
    for n in fc.get("not_exercised", []):
        v = by_key.get(n["key"])
        not_exercised.append({**n, "anchor": anchor(n["key"]),
                              "subsystem": v["subsystem"] if v else None})
    report["forecast"] = {
        "floor": fc.get("floor"), "start_ns": fc.get("start_ns"),
        "end_ns": fc.get("end_ns"), "horizon_s": fc.get("horizon_s"),
        "counters": counters,
        "failing": list(fc.get("failing", [])),
        "unmapped": [sites[s] for s in fc.get("unmapped", []) if s in sites],
        "unmapped_due": list(fc.get("unmapped_due", [])),
        "not_exercised": not_exercised,
    }
    return report
