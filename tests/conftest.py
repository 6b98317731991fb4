# SPDX-License-Identifier: GPL-2.0-only
"""Shared helpers: scan a small git tree of C files with the real spatch."""

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP))

from refsweep import classify, resolve, scan  # noqa: E402

FIXTURES = TOP / "tests" / "fixtures"


def make_tree(root: Path, files: dict[str, str]) -> Path:
    """A git tree at ROOT holding FILES (path -> text)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c",
           "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "fixture"], check=True)
    return root


def slow_source(functions: int = 150, branches: int = 40) -> str:
    """A generated file that takes spatch seconds to match."""
    lines = ["struct sc_slow {\n\tatomic_t a;\n};\n"]
    for f in range(functions):
        lines.append(f"int sc_slow_{f}(struct sc_slow *b, int x)\n{{")
        for i in range(branches):
            lines.append(
                f"\tif (x == {i}) {{ if (atomic_read(&b->a) > {i}) "
                f"x += atomic_inc_return(&b->a); else if "
                f"(atomic_dec_and_test(&b->a)) kfree(b); }}")
        lines.append("\treturn x;\n}\n")
    return "\n".join(lines)


def scan_tree(tree: Path, jobs: int = 1) -> tuple[dict[str, Any],
                                                  list[dict[str, Any]]]:
    """Run the real scan over TREE and read it back."""
    out = io.StringIO()
    scan.scan(tree, scan.candidate_files(tree), jobs, out)
    path = tree / ".scan.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    return scan.read_scan([path])


def classify_tree(tree: Path, files: Optional[list[dict[str, Any]]] = None
                  ) -> dict[str, dict[str, Any]]:
    """Scan (unless FILES are given) and classify TREE; verdicts by key."""
    if files is None:
        _header, files = scan_tree(tree)
    variables = resolve.collect_variables(files)
    resolve.attribute(files, variables, tree)
    verdicts = classify.classify(variables)
    return {k: classify.to_json(variables[k], verdicts[k])
            for k in variables}


@pytest.fixture(autouse=True)
def private_work_dir(tmp_path_factory: pytest.TempPathFactory,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test session gets its own cache, never the user's."""
    work = tmp_path_factory.getbasetemp() / "refsweep-work"
    monkeypatch.setenv("REFSWEEP_WORK", str(work))


os.environ.setdefault("REFSWEEP_WORK", "/tmp/refsweep-test-work")


@pytest.fixture
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """A submitter identity even on a machine without git config (the
    convert and check tests export patches signed off by it)."""
    for i, (k, v) in enumerate([("user.name", "Test Submitter"),
                                ("user.email", "submitter@example.org")]):
        monkeypatch.setenv(f"GIT_CONFIG_KEY_{i}", k)
        monkeypatch.setenv(f"GIT_CONFIG_VALUE_{i}", v)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "2")
