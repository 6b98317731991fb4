# SPDX-License-Identifier: GPL-2.0-only
"""The refsweep command line: a thin layer over the modules."""

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional

from refsweep import churn, classify, forecast, forecast_cli, report
from refsweep import resolve, scan, setup, spatch
from refsweep import summary, tree, triage_cli, triage_db, workdir
from refsweep.sources import Sources


def _default_scan_path(tree_dir: Path) -> Path:
    return workdir.sub("scans") / f"{tree_dir.name}.jsonl"


def _parse_shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError as e:
        raise argparse.ArgumentTypeError(
            f"--shard wants I/N such as 2/8, not {text!r}") from e
    if not 1 <= i <= n:
        raise argparse.ArgumentTypeError(f"--shard {text}: need 1 <= I <= N")
    return i, n


def _tree_arg(text: str) -> Path:
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: no such directory")
    return path.resolve()


def cmd_setup(_args: argparse.Namespace) -> int:
    done = setup.install()
    print("installed: " + " ".join(done) if done else
          "all packages present")
    return 0


def cmd_tree(args: argparse.Namespace) -> int:
    print(tree.prepare(args.source))
    return 0


# Files for spatch from which on the scan prefetches the resolve stage's
# text (at about 15 files a second on 2 cores, a scan of 7 s or more).
PREFETCH_MIN_UNCACHED = 100


def run_scan(tree_dir: Path, out_path: Optional[Path], jobs: int,
             paths: list[str], shard: Optional[tuple[int, int]],
             timeout: int, keep: Optional[list[dict[str, Any]]] = None,
             sources: Optional[Sources] = None) -> dict[str, int]:
    """Scan into OUT_PATH (replaced only when complete), or to standard
    output when OUT_PATH is None (a shard run by GNU parallel); KEEP as
    for scan.scan().  SOURCES, if given, prefetch the scanned files for
    the resolve stage that follows when PREFETCH_MIN_UNCACHED or more of
    them go to spatch."""
    files = scan.candidate_files(tree_dir, paths)
    name = "1/1"
    if shard:
        files = scan.shard(files, *shard)
        name = f"{shard[0]}/{shard[1]}"

    def prefetch(uncached: int) -> None:
        # Only a long spatch run hides the prefetch worker; after a few
        # changed files it would compete with the warm run for the cores.
        if sources is not None and uncached >= PREFETCH_MIN_UNCACHED:
            sources.prefetch(files)
    if out_path is None:
        return scan.scan(tree_dir, files, jobs, sys.stdout, timeout, name,
                         before_spatch=prefetch)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _partial(out_path)
    with open(tmp, "w", encoding="utf-8") as out:
        stats = scan.scan(tree_dir, files, jobs, out, timeout, name, keep,
                          before_spatch=prefetch)
    tmp.replace(out_path)
    return stats


def _partial(path: Path) -> Path:
    """Where PATH is written before it is renamed into place: named per
    process, so two runs writing the same output cannot rename each
    other's half-written file."""
    return path.with_name(f"{path.name}.partial-{os.getpid()}")


# Exit status of --strict when spatch failed on files or left parts
# unparsed (the verdicts are still written).
EXIT_PARSE_FAILURES = 3


def _strict_status(strict: bool, files: list[dict[str, object]]) -> int:
    failed = sum(1 for f in files if f.get("trouble"))
    partial = sum(1 for f in files
                  if not f.get("trouble") and f.get("unparsed_ops"))
    if not (failed or partial):
        return 0
    print(f"refsweep: {failed} files failed to parse, {partial} partly"
          + ("" if strict else " (--strict makes this an error)"),
          file=sys.stderr)
    return EXIT_PARSE_FAILURES if strict else 0


def cmd_scan(args: argparse.Namespace) -> int:
    out: Optional[Path] = None
    if args.out != "-":
        out = Path(args.out) if args.out else _default_scan_path(args.tree)
        if args.shard and not args.out:
            out = out.with_suffix(f".shard-{args.shard[0]}-of-"
                                  f"{args.shard[1]}.jsonl")
    start = time.monotonic()
    stats = run_scan(args.tree, out, args.jobs, args.paths, args.shard,
                     args.timeout)
    print(f"scan: {stats['files']} files ({stats['cached']} cached, "
          f"{stats['scanned']} scanned, {stats['troubles']} with spatch "
          f"trouble) in {time.monotonic() - start:.1f}s -> {out or '-'}",
          file=sys.stderr if out is None else sys.stdout)
    if args.strict and stats["troubles"]:
        return EXIT_PARSE_FAILURES
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    # Read everything before writing: "merge --out A A B" keeps A's files.
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _partial(out_path)
    with open(tmp, "w", encoding="utf-8") as out:
        n = scan.write_merged([Path(p) for p in args.scans], out)
    tmp.replace(out_path)
    print(f"merge: {n} files -> {args.out}")
    return 0


def _write_atomically(path: Path, text: str) -> None:
    tmp = _partial(path)
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def classify_scan(tree_dir: Optional[Path], scans: list[Path],
                  json_out: Path, list_out: Optional[Path] = None,
                  check_tree: bool = True,
                  scanned: Optional[list[dict[str, Any]]] = None,
                  sources: Optional[Sources] = None
                  ) -> tuple[str, list[dict[str, object]]]:
    """Classify merged scan outputs; write the verdicts (JSON), the
    failure list, the inputs record and, if asked, the plain listing.
    SCANNED: the objects the scan of SCANS (one file) kept, which are
    then not read back; SOURCES: those its scan prefetched.  Returns the
    summary and the scanned files."""
    if scanned is not None:
        header, files = scan.merge_records(
            ((f"{scans[0]}:{n}", obj) for n, obj in enumerate(scanned, 1)),
            str(scans[0]))
    else:
        header, files = scan.read_scan(scans)
    if tree_dir is not None and check_tree:
        scan.check_tree(header, tree_dir)
    variables = resolve.collect_variables(files)
    stats = resolve.attribute(files, variables, tree_dir, sources)
    verdicts = classify.classify(variables)
    json_out.parent.mkdir(parents=True, exist_ok=True)
    tmp = _partial(json_out)
    with open(tmp, "w", encoding="utf-8") as out:
        classify.write_json(variables, verdicts, out)
    tmp.replace(json_out)
    failures = json_out.with_name(json_out.name + ".failures")
    failures.write_text(summary.failures(files), encoding="utf-8")
    inputs = {"tree": str(tree_dir) if tree_dir else None,
              "head": scan.tree_head(tree_dir) if tree_dir else None,
              "scans": [str(p) for p in scans], "scan_header": header,
              "classifier_sha256": classify.code_sha256()}
    _write_atomically(json_out.with_name(json_out.name + ".inputs.json"),
                      json.dumps(inputs, indent=1) + "\n")
    if list_out is not None:
        _write_atomically(list_out, classify.listing(
            classify.to_json(variables[k], verdicts[k])
            for k in sorted(variables)))
    return summary.render(variables, verdicts, files, stats) + \
        f"\n  failure list: {failures}", files


def cmd_classify(args: argparse.Namespace) -> int:
    scans = [Path(p) for p in args.scan]
    scanned: Optional[list[dict[str, Any]]] = None
    sources: Optional[Sources] = None
    if not scans:
        path = _default_scan_path(args.tree)
        scanned, sources = [], Sources(args.tree)
        run_scan(args.tree, path, args.jobs, args.paths, None, args.timeout,
                 scanned, sources)
        scans = [path]
    text, files = classify_scan(args.tree, scans, Path(args.json),
                                Path(args.list) if args.list else None,
                                scanned=scanned, sources=sources)
    print(text)
    # Human decisions: --triage DB, or the work dir's database if present.
    db = Path(args.triage) if args.triage else triage_db.default_path()
    if args.triage or db.is_file():
        counts = triage_cli.annotate_file(db, args.tree, Path(args.json))
        print(triage_cli.counts_line(counts) + f" ({db})")
    print(f"verdicts: {args.json}")
    return _strict_status(args.strict, files)


def cmd_list(args: argparse.Namespace) -> int:
    """PATH:LINE: verdict (rule) KEY for every record of a verdicts file."""
    try:
        with open(args.verdicts, encoding="utf-8") as f:
            records = classify.read_json(f)
    except (OSError, ValueError) as e:
        raise scan.ScanError(f"{args.verdicts}: cannot read verdicts: "
                             f"{e}") from e
    if args.verdict:
        records = [r for r in records
                   if r.get("final", r["verdict"]) in args.verdict]
    sys.stdout.write(classify.listing(records))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """The main job: setup, prepare the tree, scan, classify, summarise."""
    if not args.no_setup:
        cmd_setup(args)
    tree_dir = tree.prepare(args.source)
    print(f"tree: {tree_dir}")
    start = time.monotonic()
    scan_path = _default_scan_path(tree_dir)
    scanned: list[dict[str, Any]] = []
    sources = Sources(tree_dir)
    stats = run_scan(tree_dir, scan_path, args.jobs, [], None, args.timeout,
                     scanned, sources)
    print(f"scan: {stats['files']} files ({stats['cached']} cached) in "
          f"{time.monotonic() - start:.0f}s")
    json_out = Path(args.json) if args.json else \
        workdir.sub("verdicts") / f"{tree_dir.name}.jsonl"
    text, files = classify_scan(tree_dir, [scan_path], json_out,
                                scanned=scanned, sources=sources)
    print(text)
    print(f"verdicts: {json_out} ({time.monotonic() - start:.0f}s in all)")
    return _strict_status(args.strict, files)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="refsweep", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    jobs = max(1, os.cpu_count() or 1)

    s = sub.add_parser("setup", help="install the Debian packages needed")
    s.set_defaults(func=cmd_setup)

    s = sub.add_parser("tree", help="prepare a kernel git tree, print it")
    s.add_argument("source", nargs="?", default="6.12",
                   help="linux-source package version (6.12, 6.1), "
                        "'next' (the newest Debian unstable carries, fetched "
                        "without installing) or a kernel directory "
                        "(default 6.12)")
    s.set_defaults(func=cmd_tree)

    def scan_opts(s: argparse.ArgumentParser) -> None:
        s.add_argument("--tree", type=_tree_arg, required=True)
        s.add_argument("--jobs", "-j", type=int, default=jobs)
        s.add_argument("--timeout", type=int, default=spatch.DEFAULT_TIMEOUT,
                       help="spatch seconds per file")
        s.add_argument("paths", nargs="*", help="limit to these paths")

    s = sub.add_parser("scan", help="scan a tree with spatch")
    scan_opts(s)
    s.add_argument("--shard", type=_parse_shard, help="I/N: one shard")
    s.add_argument("--out", help="scan output (JSON lines; - for standard "
                                 "output)")
    s.add_argument("--strict", action="store_true",
                   help=f"exit {EXIT_PARSE_FAILURES} if spatch failed on "
                        "any file")
    s.set_defaults(func=cmd_scan)

    s = sub.add_parser("merge", help="merge shard scan outputs")
    s.add_argument("--out", required=True)
    s.add_argument("scans", nargs="+")
    s.set_defaults(func=cmd_merge)

    s = sub.add_parser("classify", help="classify every atomic variable")
    scan_opts(s)
    s.add_argument("--scan", action="append", default=[],
                   help="use this scan output (repeatable); default: scan")
    s.add_argument("--json", required=True, help="verdicts (JSON lines)")
    s.add_argument("--list", help="also write 'PATH:LINE: verdict (rule) "
                                  "KEY' lines to this file")
    s.add_argument("--strict", action="store_true",
                   help=f"exit {EXIT_PARSE_FAILURES} if any file failed to "
                        "parse, even partly")
    s.add_argument("--triage", metavar="DB", help="record the verdicts in "
                   "this triage database and add the final verdicts "
                   "(default $REFSWEEP_WORK/triage.db when it exists)")
    s.set_defaults(func=cmd_classify)

    s = sub.add_parser("list", help="print verdicts as 'PATH:LINE: verdict "
                                    "(rule) KEY'")
    s.add_argument("verdicts", help="a verdicts file (classify --json)")
    s.add_argument("--verdict", action="append",
                   help="only this verdict (repeatable)")
    s.set_defaults(func=cmd_list)

    triage_cli.add_parser(sub)
    report.add_parser(sub, _tree_arg)
    forecast_cli.add_parser(sub)

    s = sub.add_parser("run", help="the main job on the default tree")
    # The newest tree: the one patches are written against, and the core
    # series' primary target (6.12 is its LTS backport).
    s.add_argument("source", nargs="?", default="next",
                   help="as for 'tree' (default: next, the newest Debian "
                        "unstable carries)")
    s.add_argument("--jobs", "-j", type=int, default=jobs)
    s.add_argument("--timeout", type=int, default=spatch.DEFAULT_TIMEOUT)
    s.add_argument("--json", help="verdicts (default in the work dir)")
    s.add_argument("--no-setup", action="store_true")
    s.add_argument("--strict", action="store_true",
                   help=f"exit {EXIT_PARSE_FAILURES} if any file failed to "
                        "parse, even partly")
    s.set_defaults(func=cmd_run)

    churn.add_parsers(sub, jobs, _tree_arg)  # convert, series, check
    return p


def main(argv: Optional[list[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except (tree.TreeError, scan.ScanError, spatch.SpatchError,
            resolve.ResolveError, triage_db.TriageError,
            report.ReportError, forecast.ForecastError) as e:
        print(f"refsweep: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
