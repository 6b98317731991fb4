# SPDX-License-Identifier: GPL-2.0-only
"""Run spatch with cocci/atomic_scan.cocci over batches of files.

Each file is its own file group, so a timeout or a parse failure costs only
that file; a batch of files shares one spatch start-up.  Records come back
as "RSREC <json>" lines on standard output.
"""

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

from refsweep import workdir

COCCI = workdir.TOP / "cocci" / "atomic_scan.cocci"
DEFAULT_TIMEOUT = 120
_EXN = re.compile(r"^EXN: (.*) in (\S+)$")

# spatch embeds Debian's python3; a different python3 first on PATH (or a
# PYTHONHOME/PYTHONPATH meant for it) breaks its script rules.
_CLEAN_ENV = {k: v for k, v in os.environ.items()
              if k not in ("PYTHONHOME", "PYTHONPATH")}
_CLEAN_ENV["PATH"] = "/usr/bin:/bin:" + os.environ.get("PATH", "")


class SpatchError(Exception):
    """spatch is missing or cannot run the semantic patch at all."""


class BatchResult(NamedTuple):
    """Records per file, and files spatch reported trouble with."""
    records: dict[str, list[dict[str, Any]]]
    troubles: dict[str, str]


def check_spatch() -> str:
    """spatch's version line; raise SpatchError if it is unusable."""
    try:
        res = subprocess.run(["spatch", "--version"], capture_output=True,
                             text=True, env=_CLEAN_ENV, check=False)
    except FileNotFoundError as e:
        raise SpatchError("spatch not found: install coccinelle "
                          "('make setup')") from e
    if "Python scripting support: yes" not in res.stdout:
        raise SpatchError("this spatch has no Python scripting support")
    version: str = res.stdout.splitlines()[0]
    return version


def cocci_text() -> str:
    return COCCI.read_text(encoding="utf-8")


def run_batch(tree: Path, files: list[str],
              timeout: int = DEFAULT_TIMEOUT) -> BatchResult:
    """Run spatch over FILES (paths relative to TREE), one group each."""
    records: dict[str, list[dict[str, Any]]] = {f: [] for f in files}
    troubles: dict[str, str] = {}
    groups = workdir.sub("tmp") / f"groups.{os.getpid()}.{id(files)}"
    groups.write_text("".join(f"{f}\n\n" for f in files), encoding="utf-8")
    cmd = ["spatch", "--sp-file", str(COCCI), "--no-includes",
           "--timeout", str(timeout), "--very-quiet", "-D", "refsweep",
           "--file-groups", str(groups)]
    # A wall-clock guard on top of spatch's own per-file timeout: spatch
    # has been seen to hang outside the code its --timeout covers.
    guard = timeout * len(files) + 30
    try:
        res = subprocess.run(cmd, cwd=tree, capture_output=True, text=True,
                             env=_CLEAN_ENV, timeout=guard, check=False)
        out, err = res.stdout, res.stderr
    except subprocess.TimeoutExpired as e:
        out = _text(e.stdout)
        err = _text(e.stderr) + "\nrefsweep: spatch batch killed\n"
    finally:
        groups.unlink(missing_ok=True)
    for line in out.splitlines():
        if not line.startswith("RSREC "):
            continue
        try:
            rec = json.loads(line[6:])
        except json.JSONDecodeError:
            continue
        path = _record_file(rec)
        if path in records:
            records[path].append(rec)
    # With --very-quiet spatch names no file it starts, but reports each
    # exception (timeouts included) as "EXN: <exception> in <file>".
    for line in err.splitlines():
        m = _EXN.match(line.strip())
        if m and m.group(2) in records:
            troubles[m.group(2)] = m.group(1)
        elif "spatch batch killed" in line:
            for f in files:
                if not records[f] and f not in troubles:
                    troubles[f] = "batch killed"
    if res_failed_to_start(err):
        raise SpatchError(err.strip().splitlines()[-1])
    return BatchResult(records, troubles)


def res_failed_to_start(err: str) -> bool:
    """True when spatch rejected the semantic patch itself."""
    return "parse error" in err and "minus:" in err


def _text(data: Any) -> str:
    if data is None:
        return ""
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return str(data)


def _record_file(rec: dict[str, Any]) -> str:
    for key in ("pos", "op"):
        if key in rec:
            return str(rec[key][0])
    return ""
