# SPDX-License-Identifier: GPL-2.0-only
"""Where refsweep keeps large generated things: trees, caches, outputs.

Everything lives below one ignored directory, ``$REFSWEEP_WORK`` or
``work/`` at the top of the refsweep checkout.
"""

import os
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent


def work_dir() -> Path:
    """The work directory, created on first use."""
    path = Path(os.environ.get("REFSWEEP_WORK", TOP / "work"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def sub(name: str) -> Path:
    """A named subdirectory of the work directory, created on first use."""
    path = work_dir() / name
    path.mkdir(parents=True, exist_ok=True)
    return path
