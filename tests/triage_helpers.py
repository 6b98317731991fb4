# SPDX-License-Identifier: GPL-2.0-only
"""Shared helpers of the triage tests: a tiny tree and verdict records.

The records follow the documented schema of ``refsweep classify --json``;
the tree holds the declaration lines they point at, so fingerprints read
real text.  Tests of the scanner itself live elsewhere.
"""

import os
import subprocess
from pathlib import Path
from typing import Any

from conftest import TOP

REFSWEEP = TOP / "bin" / "refsweep"
REVIEWER = "Ada Reviewer <ada@example.org>"
HEADER = "include/linux/tri.h"


def make_tree(root: Path, n: int) -> Path:
    """A directory whose HEADER declares ``struct tri`` with N members."""
    (root / "include" / "linux").mkdir(parents=True, exist_ok=True)
    lines = ["struct tri {"] + [f"\tatomic_t f{i};" for i in range(n)] + \
        ["};"]
    (root / HEADER).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def record(i: int, verdict: str = "usage",
           uses: tuple[str, ...] = ("mod", "zero-wake")) -> dict[str, Any]:
    """The verdict record of member ``f{i}`` of make_tree's struct."""
    return {
        "key": f"struct tri.f{i}", "type": "atomic_t",
        "decl": f"{HEADER}:{i + 2}", "also_declared": [], "scope": "member",
        "found_by": ["spatch"], "verdict": verdict, "rule": "zero-wake",
        "confidence": "high", "group": None,
        "evidence": [{"op": f"atomic_op{j}", "at": f"kernel/tri.c:{10 + j}",
                      "function": f"tri_fn{i}", "use": use, "parsed": True,
                      "ambiguous": False, "weak": False}
                     for j, use in enumerate(uses)]}


def write_records(path: Path, records: list[dict[str, Any]]) -> Path:
    import json
    path.write_text("".join(json.dumps(r) + "\n" for r in records),
                    encoding="utf-8")
    return path


def refsweep(*args: str, stdin: str = "",
             env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    """Run bin/refsweep with ARGS; output captured."""
    return subprocess.run([str(REFSWEEP), *args], input=stdin,
                          capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})}, timeout=600)
