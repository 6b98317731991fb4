# SPDX-License-Identifier: GPL-2.0-only
"""HTML reports: static pages rendered from reports/templates/ with Jinja2.

Autoescaping is on for every template, so code excerpts, keys and
reasons reach the page escaped by the template engine; nothing here builds
HTML by hand.  The pages need no server and load no external asset.
"""

import re
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from refsweep.report_data import SOURCES, VERDICTS
from refsweep.workdir import TOP

Record = dict[str, Any]
TEMPLATES = TOP / "reports" / "templates"


# After these, a long key or path may break on a page: "drivers/net/",
# "struct sock.", "route.c:", "->", "_".
_BREAK_AFTER = re.compile(r"(?<=[/.:_>,])")


def breakable(text: Any) -> Markup:
    """TEXT escaped, with a line-break opportunity (<wbr>) after each
    "/", ".", ":", "_", ">" and ",": a key or path in a table cell wraps
    at a natural point instead of widening the table past the window."""
    return Markup("<wbr>").join(escape(part) for part in
                               _BREAK_AFTER.split(str(text)))


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True)
    env.filters["breakable"] = breakable
    from refsweep.forecast import human_rate, human_time
    env.filters["duration"] = human_time
    env.filters["rate"] = human_rate
    return env


def write_pages(report: Record, out: Path,
                changes: Record | None = None) -> list[Path]:
    """index.html, one page per subsystem and changes.html; the paths."""
    env = environment()
    common = {"meta": report["meta"], "verdicts": VERDICTS,
              "sources": SOURCES, "changes": changes}
    written = []
    page = out / "index.html"
    page.write_text(env.get_template("index.html").render(
        forecast=report.get("forecast"),
        totals=report["totals"], by_top_dir=report["by_top_dir"],
        subsystems=report["subsystems"],
        has_series=any(s.get("series") for s in report["subsystems"]),
        **common), encoding="utf-8")
    written.append(page)
    sub = env.get_template("subsystem.html")
    for sec in report["subsystems"]:
        page = out / f"{sec['slug']}.html"
        page.write_text(sub.render(sec=sec, **common), encoding="utf-8")
        written.append(page)
    if changes is not None:
        page = out / "changes.html"
        page.write_text(env.get_template("changes.html").render(**common),
                        encoding="utf-8")
        written.append(page)
    return written
