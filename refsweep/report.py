# SPDX-License-Identifier: GPL-2.0-only
"""``refsweep report``: write the HTML site, the mail texts and the JSON.

OUT/report.json holds the data (Documentation/reports.rst), OUT/*.html the
pages, OUT/text/SLUG.txt one mail-ready text per subsystem and
OUT/summary.txt the terminal summary.  With an older report.json to compare
with, OUT/changes.{json,html,txt} say what changed.
"""

import json
from pathlib import Path
from typing import Any, Optional

from refsweep import report_data, report_html, report_text

Record = dict[str, Any]


class ReportError(Exception):
    """A report could not be written; the message says why."""


def load_series(series_dir: Path) -> dict[str, Record]:
    """Per section slug: the series ``refsweep series`` wrote, with check status."""
    index = series_dir / "index.json"
    try:
        entries = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ReportError(f"{index}: not a series index: {e}") from e
    out = {}
    for s in entries:
        check_path = series_dir / s["slug"] / "check.json"
        status = "not run"
        if check_path.is_file():
            check = json.loads(check_path.read_text(encoding="utf-8"))
            status = "passed" if check.get("ok") else "failed"
        out[s["slug"]] = {**s, "check": status}
    return out


def load_report(path: Path) -> Record:
    try:
        data: Record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ReportError(f"{path}: not a refsweep report.json: {e}") from e
    if data.get("schema") != report_data.SCHEMA_VERSION:
        raise ReportError(f"{path}: report schema {data.get('schema')!r}, "
                          f"this refsweep reads {report_data.SCHEMA_VERSION}")
    return data


def write(records: list[Record], tree: Optional[Path], out: Path,
          meta: Record, section_of: report_data.Sectioner,
          series_dir: Optional[Path] = None,
          compare_with: Optional[Path] = None) -> Record:
    """Build the report and write every form of it below OUT."""
    series = load_series(series_dir) if series_dir else None
    old = load_report(compare_with) if compare_with else None
    report = report_data.build(records, tree, section_of, series, meta)
    changes = report_data.compare(old, report) if old else None
    (out / "text").mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n",
                                     encoding="utf-8")
    report_html.write_pages(report, out, changes)
    for sec in report["subsystems"]:
        (out / "text" / f"{sec['slug']}.txt").write_text(
            report_text.subsystem_mail(sec, meta), encoding="utf-8")
    (out / "summary.txt").write_text(report_text.summary(report),
                                     encoding="utf-8")
    if changes is not None:
        (out / "changes.json").write_text(json.dumps(changes, indent=1) + "\n",
                                          encoding="utf-8")
        (out / "changes.txt").write_text(report_text.changes_text(changes),
                                         encoding="utf-8")
    return report
