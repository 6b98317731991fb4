# SPDX-License-Identifier: GPL-2.0-only
"""core-patch scripts: wrong arguments fail at once, naming the problem.

The runs themselves (git am, UML KUnit) are `make core-test`, part of
`make test`; these check only that a bad argument is refused before any
slow step, with exit status 2, and which series a tree gets.
"""

import os
import subprocess
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parent.parent
CORE = TOP / "core-patch"


def run(script: str, *args: str, env: dict[str, str] | None = None,
        cwd: Path = TOP) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CORE / script), *args], cwd=cwd,
                          env={**os.environ, **(env or {})},
                          capture_output=True, text=True, timeout=60)


def fake_tree(tmp_path: Path, version: str, patchlevel: str) -> Path:
    """A directory that looks like a kernel tree to the scripts."""
    tree = tmp_path / f"linux-{version}.{patchlevel}"
    tree.mkdir()
    (tree / "Makefile").write_text(
        f"# SPDX-License-Identifier: GPL-2.0\nVERSION = {version}\n"
        f"PATCHLEVEL = {patchlevel}\nSUBLEVEL = 0\n")
    return tree


def series_dirs(tree: Path) -> subprocess.CompletedProcess[str]:
    """Run common.sh's series_dirs on TREE."""
    script = f'. "{CORE}/common.sh"; series_dirs "$1"'
    return subprocess.run(["sh", "-c", script, str(CORE / "apply-series"),
                           str(tree)],
                          capture_output=True, text=True, timeout=60)


def test_each_tree_gets_its_own_series_atomic_first(tmp_path: Path) -> None:
    for version, patchlevel in (("7", "2"), ("6", "12")):
        res = series_dirs(fake_tree(tmp_path, version, patchlevel))
        assert res.returncode == 0, res.stderr
        want = [str(CORE / family / f"{version}.{patchlevel}")
                for family in ("atomic", "sanitize")
                if (CORE / family / f"{version}.{patchlevel}" /
                    "series").is_file()]
        assert res.stdout.split() == want
        assert want[0].endswith(f"atomic/{version}.{patchlevel}")


def test_a_tree_without_series_is_refused(tmp_path: Path) -> None:
    res = series_dirs(fake_tree(tmp_path, "2", "6"))
    assert res.returncode == 2
    assert "no series for Linux 2.6" in res.stderr


def test_every_series_names_existing_patches() -> None:
    found = sorted(CORE.glob("*/*/series"))
    assert found, "no core-patch/FAMILY/X.Y/series"
    for series in found:
        names = [line for line in series.read_text().splitlines()
                 if line and not line.startswith("#")]
        assert names, f"{series} is empty"
        for name in names:
            assert (series.parent / name).is_file(), f"{series}: {name}"


def test_apply_series_refuses_a_directory_without_series(
        tmp_path: Path) -> None:
    tree = fake_tree(tmp_path, "7", "2")
    res = run("apply-series", str(tree), str(tmp_path / "wt"),
              str(tmp_path))
    assert res.returncode == 2
    assert f"{tmp_path} is not a series directory" in res.stderr
    assert not (tmp_path / "wt").exists()


def test_run_tests_refuses_an_empty_tree_argument(tmp_path: Path) -> None:
    """What a failed `refsweep tree next` leaves on the command line."""
    res = run("run-tests", "", env={"REFSWEEP_WORK": str(tmp_path)})
    assert res.returncode == 2
    assert "is not a kernel tree" in res.stderr


def test_run_tests_refuses_a_missing_kunitconfig(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path, "7", "2")
    res = run("run-tests", str(tree), str(tmp_path / "nope.kunitconfig"),
              env={"REFSWEEP_WORK": str(tmp_path / "work")})
    assert res.returncode == 2
    assert "no kunitconfig" in res.stderr
    assert "nope.kunitconfig" in res.stderr
    assert not (tmp_path / "work" / "core-patch").exists()


def test_run_tests_refuses_an_unknown_accelerator(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path, "7", "2")
    cfg = CORE / "kunitconfig" / "atomic.kunitconfig"
    res = run("run-tests", str(tree), str(cfg),
              env={"REFSWEEP_WORK": str(tmp_path / "work"),
                   "KUNIT_ARCH": "x86_64", "QEMU_ACCEL": "hvf"})
    assert res.returncode == 2
    assert "QEMU_ACCEL must be tcg or kvm, not hvf" in res.stderr


def test_run_tests_accepts_relative_kunitconfig_paths(tmp_path: Path) -> None:
    """A relative kunitconfig path is taken from the caller's directory.

    An unknown QEMU_ACCEL stops the script right after the argument
    checks, so reaching that error shows the relative path was accepted.
    """
    tree = fake_tree(tmp_path, "7", "2")
    res = run("run-tests", str(tree),
              "core-patch/kunitconfig/atomic.kunitconfig",
              env={"REFSWEEP_WORK": str(tmp_path / "work"),
                   "QEMU_ACCEL": "hvf"})
    assert res.returncode == 2
    assert "no kunitconfig" not in res.stderr
    assert "QEMU_ACCEL must be" in res.stderr


def test_lkdtm_needs_a_built_kernel(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path, "7", "2")
    res = run("lkdtm-x86_64", str(tree), env={"REFSWEEP_WORK": str(tmp_path)})
    assert res.returncode == 2
    assert f"run core-patch/build-x86_64 {tree} first" in res.stderr


def identity_env(tmp_path: Path, name: str = "", email: str = "") -> dict[str, str]:
    """git sees only NAME/EMAIL as its user identity (none if empty)."""
    env = {"HOME": str(tmp_path / "home"), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_COUNT": "0"}
    pairs = [(k, v) for k, v in (("user.name", name), ("user.email", email))
             if v]
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for i, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def test_export_series_refuses_without_an_identity(tmp_path: Path) -> None:
    res = run("export-series", "--out", str(tmp_path / "out"),
              str(CORE / "atomic" / "7.2"),
              env=identity_env(tmp_path, name="Ada Lovelace"), cwd=tmp_path)
    assert res.returncode == 2
    assert "user.name and user.email must be set" in res.stderr
    assert not (tmp_path / "out").exists()


def test_export_series_sends_as_the_submitter(tmp_path: Path) -> None:
    src = CORE / "atomic" / "7.2"
    out = tmp_path / "out"
    res = run("export-series", "--out", str(out), str(src),
              env=identity_env(tmp_path, "Ada Lovelace", "ada@example.org"),
              cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    me = "Ada Lovelace <ada@example.org>"
    patches = (src / "series").read_text().split()
    assert (out / "series").read_text().split() == patches
    for name in ["0000-cover-letter.patch", *patches]:
        text = (out / name).read_text()
        head, _, body = text.partition("\n\n")
        assert f"\nFrom: {me}\n" in head + "\n", name
        stored = [line for line in (src / name).read_text().splitlines()
                  if line.startswith("From: ")][0][len("From: "):]
        assert stored.strip() not in text, name
        message = body.split("\n---\n")[0]
        if name.startswith("0000"):
            assert "Ada Lovelace (" in body
        else:
            assert message.count(f"Signed-off-by: {me}") == 1, name


def test_stored_patches_are_signed_by_their_author() -> None:
    """A stored patch is signed off by the identity in its From:."""
    for series in sorted(CORE.glob("atomic/*/series")):
        for name in series.read_text().split():
            text = (series.parent / name).read_text()
            head = text.split("\n\n")[0].replace("\n ", " ")
            author = [line for line in head.splitlines()
                      if line.startswith("From: ")][0][len("From: "):]
            assert "refsweep@localhost" not in text, name
            assert f"Signed-off-by: {author}" in text, name


@pytest.mark.parametrize("script, args, message", [
    ("prove-tests", ["percpu_ref", "nonsense"], "unknown case nonsense"),
    ("prove-lkdtm", ["no-fixup", "nonsense"], "no mutant nonsense"),
])
def test_prove_scripts_refuse_an_unknown_case(tmp_path: Path, script: str,
                                              args: list[str],
                                              message: str) -> None:
    tree = fake_tree(tmp_path, "7", "2")
    res = run(script, str(tree), *args,
              env={"REFSWEEP_WORK": str(tmp_path / "work")})
    assert res.returncode == 2
    assert message in res.stderr
    assert not (tmp_path / "work" / "core-patch").exists()


def test_every_atomics_mutant_applies_to_the_series_file_it_breaks() -> None:
    """Each mutant is a series directory (workload/run --extra) whose one
    patch changes one file of the checking, the one it breaks, and applies
    on top of the 7.2 series."""
    mutants = sorted((CORE / "atomic" / "mutants").glob("*/series"))
    assert {m.parent.name for m in mutants} >= {"no-event-count",
                                                 "no-fixup", "not-sticky"}
    for series in mutants:
        [name] = series.read_text().split()
        text = (series.parent / name).read_text()
        assert text.count("\n+++ ") == 1, name
        [target] = [line[len("+++ b/"):] for line in text.splitlines()
                    if line.startswith("+++ b/")]
        assert target in ("lib/hardened_atomic.c",
                          "include/linux/hardened_atomic.h"), name
        # the context it changes is in the series' version of that file
        removed = [line[1:] for line in text.splitlines()
                   if line.startswith("-") and not line.startswith("---")]
        added_by_series = "".join(
            (CORE / "atomic" / "7.2" / p).read_text()
            for p in (CORE / "atomic" / "7.2" / "series").read_text().split())
        for line in removed:
            assert "+" + line in added_by_series, (name, line)


def qemu_kvm_state(qemu: str) -> str:
    """What qemu's monitor says of KVM when asked for kunit.py's
    accelerators (7.x: '-accel kvm -accel hvf -accel tcg')."""
    out = subprocess.run(
        [qemu, "-nodefaults", "-machine", "none", "-display", "none",
         "-monitor", "stdio", "-accel", "kvm", "-accel", "hvf",
         "-accel", "tcg"],
        input="info kvm\nquit\n", capture_output=True, text=True,
        timeout=60, errors="replace")
    return next((line.split(":", 1)[1].strip()
                 for line in out.stdout.splitlines()
                 if line.startswith("kvm support:")), out.stdout)


def test_qemu_tcg_wrapper_keeps_qemu_off_kvm(tmp_path: Path) -> None:
    """A /dev/kvm that cannot boot a stock kernel (kvm_pvm) hangs
    kunit.py's qemu run: run-tests's wrapper must drop -accel kvm/hvf."""
    if not any(os.access(os.path.join(d, "qemu-system-x86_64"), os.X_OK)
               for d in os.environ.get("PATH", "").split(os.pathsep)):
        pytest.skip("needs qemu-system-x86_64 (apt-get install qemu-system-x86)")
    script = f'. "{CORE}/common.sh"; qemu_tcg_wrapper "$1" x86_64'
    made = subprocess.run(["sh", "-c", script, "sh", str(tmp_path / "bin")],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    wrapper = Path(made.stdout.strip()) / "qemu-system-x86_64"
    assert qemu_kvm_state(str(wrapper)) == "disabled"
    if os.access("/dev/kvm", os.R_OK | os.W_OK):
        # Here the test can fail: unwrapped, qemu takes KVM.
        assert qemu_kvm_state("qemu-system-x86_64") == "enabled"
