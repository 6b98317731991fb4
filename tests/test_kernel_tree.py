# SPDX-License-Identifier: GPL-2.0-only
"""End to end on the real Linux 6.12 tree (Debian's linux-source-6.12).

Prepares the tree as "refsweep tree" does (reused when already there),
scans and classifies kernel/, and checks a few verdicts a reader can verify
in the source, and that every declaration git grep finds is in the output.
"""

import sys
from pathlib import Path

import pytest

from conftest import TOP
from refsweep import classify, resolve, scan, tree

sys.path.insert(0, str(TOP / "bench"))
import sample_atomics  # noqa: E402

SUBDIR = "kernel"
# Where the structs of the checked members are declared.
HEADERS = ["include/linux/mm_types.h", "include/linux/cgroup-defs.h"]


@pytest.fixture(scope="module")
def kernel_verdicts(tmp_path_factory: pytest.TempPathFactory
                    ) -> tuple[Path, dict[str, dict[str, object]]]:
    tree_dir = tree.prepare_from_package(
        "6.12", TOP / "work" / "trees" / "linux-6.12")
    out = tmp_path_factory.mktemp("kernel") / "scan.jsonl"
    with open(out, "w", encoding="utf-8") as f:
        scan.scan(tree_dir, scan.candidate_files(tree_dir, [SUBDIR, *HEADERS]), 2, f)
    _header, files = scan.read_scan([out])
    variables = resolve.collect_variables(files)
    resolve.attribute(files, variables, tree_dir)
    verdicts = classify.classify(variables)
    return tree_dir, {k: classify.to_json(variables[k], verdicts[k])
                      for k in variables}


@pytest.mark.parametrize("key,verdict", [
    ("kernel/audit.c:audit_serial:serial", "id"),
    ("kernel/audit.c:session_id", "id"),
    ("struct mm_struct.mm_users", "refcount"),
    ("struct cgroup_subsys_state.online_cnt", "refcount"),
])
def test_known_verdicts(kernel_verdicts: tuple[Path, dict[str, dict[
        str, object]]], key: str, verdict: str) -> None:
    _tree, got = kernel_verdicts
    assert key in got
    assert got[key]["verdict"] == verdict, got[key]


def test_every_grep_declaration_is_classified(
        kernel_verdicts: tuple[Path, dict[str, dict[str, object]]]) -> None:
    tree_dir, got = kernel_verdicts
    seen = set()
    for obj in got.values():
        seen.add(obj["decl"])
        seen.update(obj["also_declared"])  # type: ignore[arg-type]
    grep = [f"{d.path}:{d.line}"
            for t in sample_atomics.ATOMIC_TYPES
            for d in sample_atomics.candidates(str(tree_dir), t)
            if d.path.startswith(SUBDIR + "/")]
    assert len(grep) > 100
    assert [g for g in grep if g not in seen] == []
