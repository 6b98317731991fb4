# SPDX-License-Identifier: GPL-2.0-only
"""convert, series and check end to end on one small real subsystem.

Linux 6.12's BLOCK LAYER, in one file (block/genhd.c, whose disk
sequence number is an ID that wraps by design): scan and classify it,
convert it on top of the core series, write its series, and check every
patch: it applies, checkpatch has no errors and no new warnings, GCC
builds block/genhd.o and sparse reports nothing new; then "check
--whole" applies it at once and compiles every touched file.

The check builds under x86_64 defconfig with CONFIG_HARDENED_ATOMIC=y
("check --whole" under arm64 defconfig too) rather than allmodconfig:
defconfig builds block/genhd.c and the audit code (the declaration-only
churn below), and configuring and preparing it costs a fraction of
allmodconfig's "make prepare", which matters on a 2-core CI machine.  The acceptance
runs of net/, drivers/scsi/ and fs/ series use allmodconfig.
"""

import json
from pathlib import Path

import pytest

from conftest import TOP, classify_tree, make_tree
from refsweep import check, convert, scan, series, split, tree

# (The audit code, used here before, has nothing left to convert: the core
# series converts its serial and session IDs, and its two statistics are
# "unknown" to the classifier.)
SECTION = "BLOCK LAYER"
FILES = ["block/genhd.c"]


# git_identity: tests/conftest.py, used by name.
pytestmark = pytest.mark.usefixtures("git_identity")


def test_block_series_passes_check(tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    tree_dir = tree.prepare_from_package(
        "6.12", TOP / "work" / "trees" / "linux-6.12")
    core = split.core_series_dir(tree_dir, None)
    assert core is not None, "no core patch series for 6.12"
    files = scan.candidate_files(tree_dir, FILES)
    _header, scanned = _scan(tree_dir, files, tmp_path)
    recs = [v for _, v in sorted(classify_tree(tree_dir, scanned).items())]
    wt = tmp_path / "wt"
    summary = split.run(tree_dir, wt, recs, convert.unchecked_target(core),
                        core, 2, f"refsweep convert --subsystem '{SECTION}'",
                        select=lambda sec, _decl: sec == SECTION,
                        log=lambda _s: None)
    [sec] = summary["sections"]
    assert sec["section"] == SECTION
    assert "block/genhd.c:diskseq" in sec["variables"]
    out = tmp_path / "series"
    series.write_all(wt, out)
    # Relative paths, as typed on the command line: git am and make run
    # in other directories (they once got the relative names as given).
    monkeypatch.chdir(tmp_path)
    ok = check.run(Path("series"), 2, [], "defconfig", Path("build"),
                   log=lambda _s: None)
    result = json.loads((out / sec["slug"] / "check.json").read_text())
    for p in result["patches"]:
        assert p["applies"], p
        assert p["checkpatch_errors"] == 0, p
        assert p["checkpatch_new_warnings"] == 0, p
        assert p["compiled"] >= 1 and p["compile_errors"] == 0, p
        assert p["sparse_new"] == 0, p
    assert ok and result["ok"]
    # Resumable: an unchanged series that passed is not checked again; one
    # recorded as failed is (the failure may have been the machine's).
    said: list[str] = []
    assert check.run(Path("series"), 2, [], "defconfig", Path("build"),
                     log=said.append)
    assert f"check: {sec['slug']}: unchanged, reused" in said
    failed = dict(result, ok=False, patches=[
        dict(p, applies=False) for p in result["patches"]])
    (out / sec["slug"] / "check.json").write_text(json.dumps(failed))
    said.clear()
    assert check.run(Path("series"), 2, [], "defconfig", Path("build"),
                     log=said.append)
    assert not any("unchanged, reused" in line for line in said)
    # The whole churn (here: the one series) applied at once compiles.
    assert check.whole(Path("series"), 2, "defconfig", Path("build"),
                       log=lambda _s: None)
    whole = json.loads((out / "whole-churn.json").read_text())
    assert whole["patches"] == len(result["patches"])
    assert whole["compiled"] == whole["objects"] >= 1
    assert not whole["errors"] and not whole["not_applied"]
    # ... and for arm64, with Debian's cross compiler, beside it.
    assert check.whole(Path("series"), 2, "defconfig", Path("build-arm64"),
                       log=lambda _s: None, arch=check.ARCHES["arm64"])
    arm64 = json.loads((out / "whole-churn-arm64.json").read_text())
    assert arm64["arch"] == "arm64"
    assert arm64["compiled"] == arm64["objects"] == whole["objects"]
    assert not arm64["errors"] and not arm64["not_applied"]
    assert (Path("build-arm64") / ".refsweep-config").read_text(
    ).startswith("arm64\ndefconfig\n")
    config = (Path("build-arm64") / ".config").read_text().splitlines()
    assert "CONFIG_ARM64=y" in config
    assert "CONFIG_HARDENED_ATOMIC=y" in config
    # A churn that converts a declaration and none of its operations does
    # not compile; check --whole blames the variable, and only it.
    broken = out / "audit-broken"
    broken.mkdir()
    (broken / "0001-audit-convert-a-declaration-only.patch").write_text(
        declaration_only_patch(tree_dir, json.loads(
            (out / "series.json").read_text())["start"]))
    index = json.loads((out / "index.json").read_text())
    index.append({"slug": "audit-broken", "section": "AUDIT SUBSYSTEM",
                  "patches": ["0001-audit-convert-a-declaration-only.patch"],
                  "variables": ["struct audit_chunk.refs"]})
    (out / "index.json").write_text(json.dumps(index))
    assert not check.whole(Path("series"), 2, "defconfig", Path("build"),
                           log=lambda _s: None)
    whole = json.loads((out / "whole-churn.json").read_text())
    assert whole["errors"] and not whole["errors_unexplained"], whole
    assert all(e.startswith("kernel/audit_tree.o: ")
               for e in whole["errors"]), whole["errors"]
    blocked = json.loads((out / "build-blocked.json").read_text())
    assert list(blocked) == ["struct audit_chunk.refs"], blocked


def test_arch_builds_its_own_files_and_names_its_results(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What each architecture builds (the files of arch/ of another one are
    listed as not built), where its results go, and the error when its
    compiler is missing.  No kernel is built."""
    x86, arm64 = check.ARCHES["x86_64"], check.ARCHES["arm64"]
    wt = make_tree(tmp_path / "t", {
        "arch/x86/kernel/a.c": "", "arch/arm64/kernel/b.c": "",
        "arch/arm64/kernel/b.h": "", "arch/x86/kernel/b.c":
        '#include "../../arm64/kernel/b.h"\n',
        "kernel/c.c": '#include "c.h"\n', "kernel/c.h": ""})
    files = ["arch/arm64/kernel/b.c", "arch/arm64/kernel/b.h",
             "arch/x86/kernel/a.c", "kernel/c.h"]
    assert check.objects(wt, files, x86) == (
        ["arch/x86/kernel/a.o", "kernel/c.o"],
        ["arch/arm64/kernel/b.c", "arch/arm64/kernel/b.h"])
    assert check.objects(wt, files, arm64) == (
        ["arch/arm64/kernel/b.o", "kernel/c.o"],
        ["arch/arm64/kernel/b.h", "arch/x86/kernel/a.c"])
    assert (x86.suffix, arm64.suffix) == ("", "-arm64")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(check.CheckError,
                       match="gcc-aarch64-linux-gnu"):
        check.configure(wt, tmp_path / "b", "allmodconfig", 1, arm64)


def declaration_only_patch(tree_dir: Path, start: str) -> str:
    """A mail-form patch that turns struct audit_chunk's atomic_long_t
    into atomic_long_unchecked_t and leaves its operations alone."""
    text = split.git(tree_dir, "show", f"{start}:kernel/audit_tree.c")
    lines = text.splitlines()
    at = lines.index("\tatomic_long_t refs;")
    before, after = lines[at - 3:at], lines[at + 1:at + 4]
    hunk = [f"@@ -{at - 2},7 +{at - 2},7 @@"] + \
        [" " + x for x in before] + ["-\tatomic_long_t refs;",
                                     "+\tatomic_long_unchecked_t refs;"] + \
        [" " + x for x in after]
    return "\n".join([
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 "
        "2001", "From: refsweep test <test@localhost>",
        "Date: Thu, 3 Dec 2026 00:00:00 +0000",
        "Subject: [PATCH] audit: convert a declaration only", "",
        "A deliberately inconsistent churn.", "---",
        "diff --git a/kernel/audit_tree.c b/kernel/audit_tree.c",
        "--- a/kernel/audit_tree.c", "+++ b/kernel/audit_tree.c",
        *hunk, "-- ", "2.0", ""])


def _scan(tree_dir: Path, files: list[str], tmp: Path) -> tuple[
        dict[str, object], list[dict[str, object]]]:
    path = tmp / "scan.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        scan.scan(tree_dir, files, 2, f)
    return scan.read_scan([path])
