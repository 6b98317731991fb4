# SPDX-License-Identifier: GPL-2.0-only
"""``refsweep report``: write the HTML site, the mail texts and the JSON.

OUT/report.json holds the data (Documentation/reports.rst), OUT/*.html the
pages, OUT/text/SLUG.txt one mail-ready text per subsystem and
OUT/summary.txt the terminal summary.  With an older report.json to compare
with, OUT/changes.{json,html,txt} say what changed.
"""

import argparse
import json
import time
from pathlib import Path
from typing import Any, Callable, Optional

from refsweep import maintainers, report_data, report_text
from refsweep import tree as trees
from refsweep import triage_db, verdicts, workdir

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


def load_forecast(path: Path) -> Record:
    try:
        data: Record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ReportError(f"{path}: not a refsweep forecast --json "
                          f"file: {e}") from e
    if data.get("schema") != 1 or "counters" not in data:
        raise ReportError(f"{path}: not a refsweep forecast --json file")
    return data


def write(records: list[Record], tree: Optional[Path], out: Path,
          meta: Record, section_of: report_data.Sectioner,
          series_dir: Optional[Path] = None,
          compare_with: Optional[Path] = None,
          forecast_path: Optional[Path] = None) -> Record:
    """Build the report and write every form of it below OUT."""
    series = load_series(series_dir) if series_dir else None
    old = load_report(compare_with) if compare_with else None
    report = report_data.build(records, tree, section_of, series, meta)
    if forecast_path is not None:
        report_data.add_forecast(report, load_forecast(forecast_path))
    changes = report_data.compare(old, report) if old else None
    (out / "text").mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n",
                                     encoding="utf-8")
    # Jinja2 comes with "refsweep setup": importing it here, not at the
    # top, keeps "refsweep setup" runnable on a machine without it.
    from refsweep import report_html
    report_html.write_pages(report, out, changes)
    for sec in report["subsystems"]:
        (out / "text" / f"{sec['slug']}.txt").write_text(
            report_text.subsystem_mail(sec, meta), encoding="utf-8")
    (out / "summary.txt").write_text(report_text.summary(report),
                                     encoding="utf-8")
    if report.get("forecast") is not None:
        (out / "forecast.txt").write_text(
            report_text.forecast_text(report["forecast"]), encoding="utf-8")
    if changes is not None:
        (out / "changes.json").write_text(json.dumps(changes, indent=1) + "\n",
                                          encoding="utf-8")
        (out / "changes.txt").write_text(report_text.changes_text(changes),
                                         encoding="utf-8")
    return report


def sections_of(tree: Path) -> report_data.Sectioner:
    """MAINTAINERS sections where the tree has the file, else directories.

    The slugs are those ``refsweep series`` names its directories by, so a
    subsystem page finds its series.
    """
    if not (tree / "MAINTAINERS").is_file():
        return report_data.directory_section
    owners = maintainers.Owners(tree)

    def section(path: str) -> tuple[str, str]:
        name = owners.owner(path).name
        return name, maintainers.slug(name)
    return section


def cmd_report(args: argparse.Namespace) -> int:
    """Write the HTML, text and JSON triage reports of one tree."""
    start = time.monotonic()
    path = Path(args.verdicts) if args.verdicts else \
        workdir.sub("verdicts") / f"{args.tree.name}.jsonl"
    if not path.is_file():
        raise ReportError(f"{path}: no verdicts; run 'refsweep classify "
                          f"--tree {args.tree} --json {path}' first")
    try:
        records = verdicts.read(path)
    except verdicts.VerdictError as e:
        raise ReportError(str(e)) from e
    # Decisions as they are now: an explicit database always; the default
    # one where the records were written without triage.
    db = Path(args.triage) if args.triage else triage_db.default_path()
    if args.triage or (db.is_file() and
                       not all("final" in r for r in records)):
        records = triage_db.apply(db, records, args.tree)
    meta = {"tree": f"Linux {trees.kernel_version(args.tree)}"
                    if trees.is_kernel_tree(args.tree) else str(args.tree),
            "verdicts": str(path)}
    out = Path(args.out)
    data = write(records, args.tree, out, meta, sections_of(args.tree),
                 Path(args.series) if args.series else None,
                 Path(args.compare) if args.compare else None,
                 Path(args.forecast) if args.forecast else None)
    print((out / "summary.txt").read_text(encoding="utf-8"), end="")
    print(f"report: {len(data['subsystems'])} subsystems -> "
          f"{out / 'index.html'} ({time.monotonic() - start:.1f}s)")
    return 0


def add_parser(sub: Any, tree_arg: Callable[[str], Path]) -> None:
    """The ``report`` subcommand."""
    s = sub.add_parser("report", help="HTML, text and JSON triage reports")
    s.add_argument("--tree", type=tree_arg, required=True)
    s.add_argument("--out", required=True, help="output directory")
    s.add_argument("--verdicts", help="verdict records (default: the work "
                   "dir's verdicts of the tree)")
    s.add_argument("--triage", metavar="DB", help="apply this triage "
                   "database's decisions where the records have none "
                   "(default $REFSWEEP_WORK/triage.db when it exists)")
    s.add_argument("--series", help="a 'refsweep series' output directory")
    s.add_argument("--compare", help="an older report.json: also write "
                   "what changed")
    s.add_argument("--forecast", help="a 'refsweep forecast --json' file: "
                   "show the runtime forecast and what it did not exercise")
    s.set_defaults(func=cmd_report)
