# SPDX-License-Identifier: GPL-2.0-only
"""HTML reports: static pages rendered from reports/templates/ with Jinja2.

Autoescaping is on for every template, so code excerpts, keys and
reasons reach the page escaped by the template engine; nothing here builds
HTML by hand.  The pages need no server and load no external asset.
"""

from pathlib import Path
from typing import Any

import jinja2

from refsweep.report_data import SOURCES, VERDICTS
from refsweep.workdir import TOP

Record = dict[str, Any]
TEMPLATES = TOP / "reports" / "templates"


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True)


def write_pages(report: Record, out: Path,
                changes: Record | None = None) -> list[Path]:
    """index.html, one page per subsystem and changes.html; the paths."""
    env = environment()
    common = {"meta": report["meta"], "verdicts": VERDICTS,
              "sources": SOURCES, "changes": changes}
    written = []
    page = out / "index.html"
    page.write_text(env.get_template("index.html").render(
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
