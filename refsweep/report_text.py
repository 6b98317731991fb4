# SPDX-License-Identifier: GPL-2.0-only
"""Plain-text reports: a mail per subsystem and a one-screen summary.

Mail text is wrapped at 72 columns, as kernel mail is; code lines that
do not fit are wrapped with a continuation indent rather than cut, so
nothing a reviewer needs is lost.
"""

import re
import textwrap
from typing import Any, Optional

from refsweep.report_data import SOURCES, VERDICTS, WRAP_SAFE

Record = dict[str, Any]
WIDTH = 72


# "struct TAG.FIELD", "union TAG.FIELD": one key, kept on one line.
_KEY_SPACE = re.compile(r"\b(struct|union|enum) (?=[A-Za-z_])")
_NBSP = "\u00a0"


def _wrap(text: str, indent: str = "", cont: str = "") -> list[str]:
    """TEXT wrapped at WIDTH columns, at spaces only: an identifier, a
    path or a key ("struct sock.sk_drops") is never broken across lines;
    one longer than a line gets a line of its own and sticks out."""
    lines = textwrap.wrap(_KEY_SPACE.sub(r"\1" + _NBSP, text), WIDTH,
                          initial_indent=indent,
                          subsequent_indent=cont or indent,
                          break_long_words=False, break_on_hyphens=False)
    return [line.replace(_NBSP, " ") for line in lines] or [indent.rstrip()]


def _totals_lines(t: Record) -> list[str]:
    line = ", ".join(f"{v} {t['by_final'][v]}" for v in VERDICTS
                     if t["by_final"][v])
    out = _wrap(f"{t['variables']} variables: {line}.", "  ", "    ")
    out += _wrap(f"Wrap-safe {t['wrap_safe']}, checked {t['checked']}, "
                 f"unknown {t['unknown']}; decided by a human "
                 f"{t['by_source']['human']}, stale decisions "
                 f"{t['by_source']['stale']}, flagged wraps-by-design "
                 f"{t['wrap_by_design']}.", "  ", "    ")
    return out


def variable_text(v: Record) -> list[str]:
    """One variable: verdict, who decided, why, and the decisive lines."""
    safe = "may wrap" if v["final"] in WRAP_SAFE or v["wrap_by_design"] \
        else "stays checked"
    out = _wrap(f"{v['key']} ({v['type']}), {v['decl']}", "", "    ")
    who = v["source"]
    if v["source"] != "machine" and v.get("reviewer"):
        who += f", {v['reviewer']}"
    out += _wrap(f"{v['final']}: {safe} (rule {v['rule']}, {who})",
                 "  ", "    ")
    if v.get("reason"):
        out += _wrap(f"Reason: {v['reason']}", "  ", "    ")
    for w in v["wrap_evidence"]:
        out += _wrap(f"Wraps by design: {w}", "  ", "    ")
    if v.get("runtime"):
        out += _wrap(f"Runtime: {runtime_line(v['runtime'])}", "  ", "    ")
    for ex in v["excerpts"][1:]:
        tag = " [decisive]" if ex["decisive"] else ""
        flags = f" ({', '.join(ex['flags'])})" if ex.get("flags") else ""
        out += _wrap(f"{ex['at']}: {ex['what']}{flags}{tag}", "  ", "    ")
        for ln in ex["lines"]:
            if ln["mark"]:
                out += _wrap(ln["text"].strip(), "  > ", "  >   ")
    if v["excerpts_left_out"]:
        out.append(f"  ... and {v['excerpts_left_out']} more uses")
    return out


def subsystem_mail(sec: Record, meta: Record) -> str:
    """The text of one subsystem, fit to paste into a mail."""
    out = _wrap(f"refsweep triage report: {sec['name']}")
    if meta.get("tree"):
        out += _wrap(f"Tree: {meta['tree']}")
    out.append("")
    out += _totals_lines(sec["totals"])
    if sec.get("series"):
        s = sec["series"]
        out.append("")
        out += _wrap(f"Series: {len(s.get('patches', []))} patches, check "
                     f"{s.get('check', 'not run')}", "  ", "    ")
        if s.get("to"):
            out += _wrap("To: " + ", ".join(s["to"]), "  ", "    ")
        if s.get("cc"):
            out += _wrap("Cc: " + ", ".join(s["cc"]), "  ", "    ")
    for verdict in VERDICTS:
        group = [v for v in sec["variables"] if v["final"] == verdict]
        if not group:
            continue
        out += ["", f"{verdict} ({len(group)})", "-" * len(f"{verdict} ({len(group)})")]
        for v in group:
            out.append("")
            out += variable_text(v)
    return "\n".join(out) + "\n"


def summary(report: Record) -> str:
    """The one-screen terminal summary: totals and the busiest subsystems."""
    t = report["totals"]
    n = t["variables"] or 1
    out = [f"refsweep report: {t['variables']} variables in "
           f"{len(report['subsystems'])} subsystems"]
    out.append("  final       count  share")
    for v in VERDICTS:
        out.append(f"  {v:<10} {t['by_final'][v]:>6}  "
                   f"{100 * t['by_final'][v] / n:5.1f}%")
    out.append("  source: " + ", ".join(f"{s} {t['by_source'][s]}"
                                        for s in SOURCES))
    out.append("  type:   " + ", ".join(f"{k} {c}" for k, c in
                                        t["by_type"].items()))
    fc = report.get("forecast")
    if fc is not None:
        failing = sum(1 for c in fc["counters"] if c["status"] == "FAIL")
        out.append(f"  forecast: {len(fc['counters'])} counters moved, "
                   f"{failing} failing, {len(fc['unmapped'])} sites "
                   f"unmapped, {len(fc['not_exercised'])} flagged not "
                   "exercised (forecast.txt)")
    busiest = sorted(report["subsystems"],
                     key=lambda s: (-s["totals"]["unknown"], s["name"]))[:8]
    out.append("  most unknown:")
    for s in busiest:
        st = s["totals"]
        out.append(f"    {s['name'][:44]:<44} {st['unknown']:>4} of "
                   f"{st['variables']}")
    return "\n".join(out) + "\n"


def changes_text(changes: Record) -> str:
    """What changed between two runs, for a daily linux-next mail."""
    out = _wrap(f"refsweep: what changed from {changes['old'].get('tree', '?')}"
                f" to {changes['new'].get('tree', '?')}")
    parts = (("New variables", "new_variables"), ("Vanished", "vanished"),
             ("Verdict changes", "verdict_changes"),
             ("Decisions turned stale", "turned_stale"))
    for title, field in parts:
        rows = changes[field]
        out += ["", f"{title} ({len(rows)})"]
        for r in rows:
            text = f"{r['key']}: {r['final']} ({r['rule']}, {r['source']})"
            if "was" in r:
                text = f"{r['key']}: {r['was']} -> {r['final']} ({r['rule']})"
            out += _wrap(text, "  ", "    ")
            out += _wrap(r["decl"], "    ")
    return "\n".join(out) + "\n"


def _duration(seconds: Optional[float]) -> str:
    from refsweep.forecast import human_time
    return human_time(seconds)


def runtime_line(r: Record) -> str:
    """One counter of a forecast, in words."""
    from refsweep.forecast import human_rate
    down = "counted down too" if r["decreased"] else "never counted down"
    return (f"{r['status']}: {human_rate(r['rate'])}/s at {r['site']} "
            f"({r.get('location') or 'no source line'}), {down}, overflow "
            f"at {_duration(r['overflow_uptime_s'])} of uptime")


def forecast_text(fc: Record) -> str:
    """The forecast part of a report: counters by status, sites no
    counter matched, counters flagged wrap-by-design that the workload
    did not move."""
    out = _wrap("refsweep overflow forecast: counters a workload drove "
                "towards 2^31 (2^63) and what answers for them")
    failing = [c for c in fc["counters"] if c["status"] == "FAIL"]
    out += [""] + _wrap(f"Projected to overflow within "
                        f"{_duration(fc.get('horizon_s'))} of uptime, "
                        f"neither converted nor explained ({len(failing)})")
    for c in failing:
        out += _wrap(f"{c['key']} ({c['final']})", "  ", "    ")
        out += _wrap(runtime_line(c), "    ", "      ")
    rest = [c for c in fc["counters"] if c["status"] != "FAIL"]
    out += [""] + _wrap(f"Other counters the workload moved ({len(rest)})")
    for c in rest:
        out += _wrap(f"{c['key']} ({c['final']})", "  ", "    ")
        out += _wrap(runtime_line(c) + (f"; reason: {c['reason']}"
                                        if c.get("reason") else ""),
                     "    ", "      ")
    if fc.get("unmapped"):
        out += [""] + _wrap(f"Call sites no scanned operation matches "
                            f"({len(fc['unmapped'])})")
        for s in fc["unmapped"]:
            out += _wrap(f"{s['site']} ({s.get('location') or '?'}), "
                         f"overflow at {_duration(s['overflow_uptime_s'])} "
                         "of uptime", "  ", "    ")
    out += [""] + _wrap(f"Not exercised: flagged wrap-by-design, not moved "
                        f"by the workload ({len(fc['not_exercised'])})")
    for n in fc["not_exercised"]:
        out += _wrap(f"{n['key']} ({n['final']}), {n.get('decl')}", "  ",
                     "    ")
    return "\n".join(out) + "\n"
