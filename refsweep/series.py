# SPDX-License-Identifier: GPL-2.0-only
"""Mailable series: one git format-patch --cover-letter per section.

To and Cc come from the kernel's own scripts/get_maintainer.pl the way b4
asks it: maintainers (and reviewers) To, mailing lists Cc.  Everything
written is a function of the conversion worktree's commits, so the same
tree and verdicts give the same bytes (--zero-commit, fixed dates).
"""

import json
import re
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

from refsweep import split

_GM_COMMON = ["--nogit", "--nogit-fallback", "--nogit-chief-penguins",
              "--norolestats"]


class SeriesError(Exception):
    """The series cannot be written; the message says why."""


def get_maintainer(wt: Path, patch: str, lists: bool) -> list[str]:
    """Addresses for PATCH (text): maintainers, or with LISTS the lists."""
    script = wt / "scripts" / "get_maintainer.pl"
    if not script.is_file():
        return []
    flags = _GM_COMMON + (["--nom", "--nor"] if lists else ["--nol"])
    res = subprocess.run(["perl", str(script), *flags], cwd=wt, input=patch,
                         capture_output=True, text=True, check=False)
    return [ln.strip() for ln in res.stdout.splitlines() if "@" in ln]


def cover_text(sec: dict[str, Any], summary: dict[str, Any],
               core_subjects: list[str]) -> tuple[str, str]:
    """(subject, blurb) of a section's cover letter."""
    n = len(sec["variables"])
    unchecked = summary["target"] != "refcount_t"
    if unchecked:
        subject = f"{sec['subject_prefix']}atomic_unchecked_t for " \
                  f"{n} counter{'s' if n != 1 else ''} that may wrap"
        what = ("This series switches counters that are allowed to wrap "
                "to atomic_unchecked_t, so that CONFIG_HARDENED_ATOMIC "
                "(PAX_REFCOUNT revived) can trap signed overflow of the "
                "remaining atomic_t, atomic64_t and atomic_long_t reference "
                "counts without false positives on statistics, IDs, "
                "sequence numbers and state values.")
        dep = ["It depends on the core series adding atomic_unchecked_t "
               "and CONFIG_HARDENED_ATOMIC (see the prerequisite-patch-id "
               "lines below):", ""] + [f"  {s}" for s in core_subjects] \
            if core_subjects else [
                "It depends on the core series adding atomic_unchecked_t "
                "and CONFIG_HARDENED_ATOMIC, which this tree lacks."]
    else:
        subject = f"{sec['subject_prefix']}convert {n} counter" \
                  f"{'s' if n != 1 else ''} from atomic_t to refcount_t"
        what = ("This series converts reference counts whose every "
                "operation maps onto the refcount_t API, the conversion "
                "mainline has been doing by hand since 2017.")
        dep = ["It applies to the base tree as is."]
    lines = [what, "",
             f"{n} variable{'s' if n != 1 else ''} in {sec['groups']} "
             f"conversion group{'s' if sec['groups'] != 1 else ''}, "
             f"{len(sec['files'])} file{'s' if len(sec['files']) != 1 else ''}"
             "; each patch lists every variable with the evidence that "
             "decided it and whether a human or the classifier did.", ""]
    lines += dep + ["", "Generated, not written by hand; to regenerate:", "",
                    f"  {summary['command']}",
                    "  refsweep series --tree WORKTREE --out DIR", "",
                    "Every patch was checked with 'refsweep check' "
                    "(git am, checkpatch, an x86_64 allmodconfig build and "
                    "sparse against the unpatched tree)."]
    return subject, "\n".join(lines)


def _fill_cover(path: Path, first: Path, subject: str, blurb: str) -> None:
    """Fill in the template; its Date (format-patch uses the time of the
    run) becomes the first patch's, which is fixed."""
    text = path.read_text(encoding="utf-8")
    date = re.search(r"^Date: .*$", first.read_text(encoding="utf-8"), re.M)
    if date:
        text = re.sub(r"^Date: .*$", date.group(0), text, count=1,
                      flags=re.M)
    text = text.replace("*** SUBJECT HERE ***", subject, 1)
    text = text.replace("*** BLURB HERE ***", _paragraphs(blurb), 1)
    path.write_text(text, encoding="utf-8")


def _paragraphs(text: str) -> str:
    """Wrap at 72 columns; indented lines stay as they are."""
    out = []
    for line in text.split("\n"):
        if line.startswith(" ") or not line:
            out.append(line)
        else:
            out.append(textwrap.fill(line, 72, break_long_words=False,
                                     break_on_hyphens=False))
    return "\n".join(out)


def write_section(wt: Path, sec: dict[str, Any], summary: dict[str, Any],
                  out: Path, base: str, core_subjects: list[str]
                  ) -> dict[str, Any]:
    """format-patch one section into OUT/<slug>/; its index entry."""
    start = summary["start"]
    diff = split.git(wt, "format-patch", "--stdout", f"{start}..{sec['commit']}")
    to = get_maintainer(wt, diff, lists=False)
    cc = [a for a in get_maintainer(wt, diff, lists=True) if a not in to]
    dest = out / sec["slug"]
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    args = ["format-patch", "-q", "--cover-letter", "--zero-commit",
            "--no-signature", f"--base={base}", "-o", str(dest)]
    args += [f"--to={a}" for a in to] + [f"--cc={a}" for a in cc]
    split.git(wt, *args, f"{start}..{sec['commit']}")
    patches = sorted(p.name for p in dest.glob("*.patch"))
    subject, blurb = cover_text(sec, summary, core_subjects)
    _fill_cover(dest / patches[0], dest / patches[1], subject, blurb)
    return {"slug": sec["slug"], "section": sec["section"],
            "subject_prefix": sec["subject_prefix"], "patches": patches,
            "to": to, "cc": cc, "variables": sec["variables"]}


def write_all(wt: Path, out: Path) -> list[dict[str, Any]]:
    """Every section's series, index.json, series.json, unconverted.txt."""
    spath = split.summary_path(wt)
    if not spath.is_file():
        raise SeriesError(f"{wt}: not a conversion worktree (no {spath}; "
                          "run 'refsweep convert' first)")
    summary = json.loads(spath.read_text(encoding="utf-8"))
    # git runs in the worktree: a relative OUT must not land there.
    out = out.resolve()
    base = split.git(wt, "rev-list", "--max-parents=0",
                     summary["start"]).split()[-1]
    core_subjects = split.git(wt, "log", "--reverse", "--format=%s",
                              f"{base}..{summary['start']}").splitlines()
    out.mkdir(parents=True, exist_ok=True)
    index = [write_section(wt, sec, summary, out, base, core_subjects)
             for sec in summary["sections"]]
    (out / "index.json").write_text(json.dumps(index, indent=1) + "\n",
                                    encoding="utf-8")
    meta = {"tree": summary["tree"], "worktree": str(wt),
            "target": summary["target"], "base": base,
            "start": summary["start"], "core": summary["core"]}
    (out / "series.json").write_text(json.dumps(meta, indent=1) + "\n",
                                     encoding="utf-8")
    lines = [f"{b['section']}: {', '.join(b['keys'])}\n"
             + "".join(f"    {r}\n" for r in b["reasons"])
             for b in summary["blocked"]]
    (out / "unconverted.txt").write_text("".join(lines), encoding="utf-8")
    keep = {sec["slug"] for sec in summary["sections"]}
    for d in out.iterdir():
        if d.is_dir() and d.name not in keep and \
                re.fullmatch(r"[a-z0-9-]+", d.name) and \
                any(d.glob("0000-cover-letter.patch")):
            shutil.rmtree(d)
    return index
