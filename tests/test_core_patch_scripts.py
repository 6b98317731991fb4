# SPDX-License-Identifier: GPL-2.0-only
"""core-patch scripts: wrong arguments fail at once, naming the problem.

The runs themselves (git am, UML KUnit) are `make core-test`, part of
`make test`; these check only that a bad option is refused before any
slow step, with exit status 2.
"""

import os
import subprocess
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
CORE = TOP / "core-patch"


def run(script: str, *args: str, env: dict[str, str] | None = None,
        cwd: Path = TOP) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CORE / script), *args], cwd=cwd,
                          env={**os.environ, **(env or {})},
                          capture_output=True, text=True, timeout=60)


def test_run_tests_refuses_a_missing_kunitconfig(tmp_path: Path) -> None:
    res = run("run-tests", str(tmp_path), str(tmp_path / "nope.kunitconfig"),
              env={"REFSWEEP_WORK": str(tmp_path / "work")})
    assert res.returncode == 2
    assert "no kunitconfig" in res.stderr
    assert "nope.kunitconfig" in res.stderr
    assert not (tmp_path / "work" / "core-patch" / "tree").exists()


def test_run_tests_refuses_an_unknown_accelerator(tmp_path: Path) -> None:
    cfg = CORE / "kunitconfig" / "atomic.kunitconfig"
    res = run("run-tests", str(tmp_path), str(cfg),
              env={"REFSWEEP_WORK": str(tmp_path / "work"),
                   "KUNIT_ARCH": "x86_64", "QEMU_ACCEL": "hvf"})
    assert res.returncode == 2
    assert "QEMU_ACCEL must be tcg or kvm, not hvf" in res.stderr


def test_run_tests_accepts_relative_kunitconfig_paths(tmp_path: Path) -> None:
    """A relative kunitconfig path is taken from the caller's directory.

    An unknown QEMU_ACCEL stops the script right after the config check,
    so reaching that error shows the relative path was accepted.
    """
    res = run("run-tests", str(tmp_path),
              "core-patch/kunitconfig/atomic.kunitconfig",
              env={"REFSWEEP_WORK": str(tmp_path / "work"),
                   "QEMU_ACCEL": "hvf"})
    assert res.returncode == 2
    assert "no kunitconfig" not in res.stderr
    assert "QEMU_ACCEL must be" in res.stderr


def test_lkdtm_needs_a_built_kernel(tmp_path: Path) -> None:
    res = run("lkdtm-x86_64", env={"REFSWEEP_WORK": str(tmp_path)})
    assert res.returncode == 2
    assert "run core-patch/build-x86_64 first" in res.stderr
