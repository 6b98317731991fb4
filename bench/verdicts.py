# SPDX-License-Identifier: GPL-2.0-only
"""Shared by the benchmarks: read verdicts and look them up by PATH:LINE."""

import json
from pathlib import Path
from typing import Any

CHECKED = {"refcount", "usage", "unknown"}
WRAP_SAFE = {"statistic", "id", "state"}


def by_decl(verdicts: Path) -> dict[str, dict[str, Any]]:
    """Verdict objects keyed by every PATH:LINE that declares them."""
    out: dict[str, dict[str, Any]] = {}
    with open(verdicts, encoding="utf-8") as f:
        for line in f:
            obj = json.loads(line)
            for at in [obj["decl"], *obj.get("also_declared", [])]:
                out[at] = obj
    return out
