# SPDX-License-Identifier: GPL-2.0-only
"""Every fixture in tests/fixtures gets exactly the verdicts it expects.

Each fixture is scanned alone, as the only file of a tree, with the real
spatch; its header lists "expect: KEY VERDICT RULE" for every variable.
"""

import re
from pathlib import Path

import pytest

from conftest import FIXTURES, classify_tree, make_tree, scan_tree

_EXPECT = re.compile(r"^\s*\*\s*expect:\s*(.+?)\s+(\w+)\s+([\w-]+)\s*$")
_EXPECT_WRAP = re.compile(r"^\s*\*\s*expect-wrap:\s*(.+?)\s*$")
CASES = sorted(FIXTURES.glob("*.c"))


def expectations(path: Path) -> dict[str, tuple[str, str]]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _EXPECT.match(line)
        if m:
            out[m.group(1)] = (m.group(2), m.group(3))
    return out


def test_enough_fixtures() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("fixture", CASES, ids=[p.stem for p in CASES])
def test_fixture(fixture: Path, tmp_path: Path) -> None:
    expected = expectations(fixture)
    assert expected, f"{fixture.name} has no expect: lines"
    tree = make_tree(tmp_path / "tree",
                     {fixture.name: fixture.read_text(encoding="utf-8")})
    _header, files = scan_tree(tree)
    broken = "expect-parse-failure: yes" in fixture.read_text()
    unparsed = sum(f["unparsed_ops"] for f in files) + \
        sum(1 for f in files if f.get("trouble"))
    assert bool(unparsed) == broken, f"parse failures reported: {unparsed}"
    got = classify_tree(tree, files)
    assert set(got) == set(expected), "variables differ from expectations"
    wrong = {k: ((got[k]["verdict"], got[k]["rule"]), expected[k])
             for k in expected if (got[k]["verdict"], got[k]["rule"])
             != expected[k]}
    assert not wrong, "got vs expected: " + "; ".join(
        f"{k}: {g} != {e}" for k, (g, e) in wrong.items())
    assert wrap_flags(got) == expected_wraps(fixture), \
        "wrap_by_design flags differ from the expect-wrap: lines"


def expected_wraps(path: Path) -> set[str]:
    """Keys the fixture expects flagged wrap_by_design (none elsewhere)."""
    return {m.group(1) for line in path.read_text(encoding="utf-8")
            .splitlines() if (m := _EXPECT_WRAP.match(line))}


def wrap_flags(got: dict[str, dict[str, object]]) -> set[str]:
    return {k for k, v in got.items() if v.get("wrap_by_design")}
