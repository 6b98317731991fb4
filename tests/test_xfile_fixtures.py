# SPDX-License-Identifier: GPL-2.0-only
"""Fixtures spanning several files: tests/fixtures/xfile_*/ is a tree.

Helpers defined in one file and used in another, headers with inline
helpers and macros: each directory is scanned as one tree with the real
spatch, and its files' headers hold the "expect:" and "expect-wrap:"
lines (keys use the tree's paths), as for the one-file fixtures.
"""

from pathlib import Path

import pytest

from conftest import FIXTURES, classify_tree, make_tree, scan_tree
from test_fixtures import expectations, expected_wraps, wrap_flags

CASES = sorted(p for p in FIXTURES.glob("xfile_*") if p.is_dir())


@pytest.mark.parametrize("case", CASES, ids=[p.name for p in CASES])
def test_xfile_fixture(case: Path, tmp_path: Path) -> None:
    sources = {str(p.relative_to(case)): p.read_text(encoding="utf-8")
               for p in sorted(case.rglob("*")) if p.suffix in (".c", ".h")}
    expected: dict[str, tuple[str, str]] = {}
    wraps: set[str] = set()
    for name in sources:
        expected.update(expectations(case / name))
        wraps |= expected_wraps(case / name)
    assert expected, f"{case.name} has no expect: lines"
    tree = make_tree(tmp_path / "tree", sources)
    _header, files = scan_tree(tree)
    got = classify_tree(tree, files)
    assert set(got) == set(expected), "variables differ from expectations"
    wrong = {k: ((got[k]["verdict"], got[k]["rule"]), expected[k])
             for k in expected
             if (got[k]["verdict"], got[k]["rule"]) != expected[k]}
    assert not wrong, "got vs expected: " + "; ".join(
        f"{k}: {g} != {e}" for k, (g, e) in wrong.items())
    assert wrap_flags(got) == wraps
