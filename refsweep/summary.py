# SPDX-License-Identifier: GPL-2.0-only
"""The one-screen summary printed after classification."""

from collections import Counter
from typing import Any

from refsweep.classify import VERDICTS, Decision
from refsweep.records import WRAP_SAFE, Verdict, Variable


def render(variables: dict[str, Variable], verdicts: dict[str, Decision],
           files: list[dict[str, Any]], stats: dict[str, int]) -> str:
    by_verdict = Counter(v.verdict for v in verdicts.values())
    by_type: dict[str, Counter[str]] = {}
    for key, var in variables.items():
        by_type.setdefault(var.type, Counter())[verdicts[key].verdict] += 1
    total = len(variables) or 1
    lines = [f"refsweep: {len(variables)} variables in {len(files)} files"]
    lines.append("  verdict       count  share")
    for v in VERDICTS:
        lines.append(f"  {v:<12} {by_verdict[v]:>6}  "
                     f"{100 * by_verdict[v] / total:5.1f}%")
    safe = sum(by_verdict[v] for v in WRAP_SAFE)
    lines.append(f"  wrap-safe {safe} ({100 * safe / total:.1f}%), "
                 f"checked {total - safe - by_verdict[Verdict.UNKNOWN]}, "
                 f"unknown {by_verdict[Verdict.UNKNOWN]}")
    flagged = Counter(verdicts[k].verdict for k, var in variables.items()
                      if var.wrap_by_design)
    if flagged:
        # A flagged counter converts whatever its verdict: say how many
        # of the checked and unknown ones that takes out of the checked
        # set, so that none is left silent.
        lines.append(f"  wrap-by-design {sum(flagged.values())}: " +
                     ", ".join(f"{v} {flagged[v]}" for v in VERDICTS
                               if flagged[v]))
    lines.append("  type          " + " ".join(f"{v[:6]:>7}" for v in VERDICTS))
    for t in sorted(by_type):
        lines.append(f"  {t:<13} " + " ".join(f"{by_type[t][v]:>7}"
                                               for v in VERDICTS))
    failed = [f for f in files if f.get("trouble")]
    partial = [f for f in files if not f.get("trouble")
               and f.get("unparsed_ops")]
    lines.append(f"  ops: {stats.get('ops', 0)} ({stats.get('resolved', 0)} "
                 f"exact, {stats.get('ambiguous', 0)} ambiguous, "
                 f"{stats.get('unresolved', 0)} unresolved, "
                 f"{stats.get('helper_ops', 0)} in helpers); "
                 f"{stats.get('escapes', 0)} addresses taken")
    lines.append(f"  parse failures: {len(failed)} files failed "
                 f"(timeout/error), {len(partial)} files partly unparsed")
    for f in failed[:5]:
        lines.append(f"    {f['path']}: {f['trouble']}")
    if len(failed) > 5:
        lines.append(f"    ... {len(failed) - 5} more")
    return "\n".join(lines)


def failures(files: list[dict[str, Any]]) -> str:
    """Every file spatch failed on or left partly unparsed, one a line."""
    out = []
    for f in files:
        if f.get("trouble"):
            out.append(f"{f['path']}\tfailed\t{f['trouble']}")
        elif f.get("unparsed_ops"):
            out.append(f"{f['path']}\tpartly unparsed\t"
                       f"{f['unparsed_ops']} operations seen by text only")
    return "".join(line + "\n" for line in out)
