# SPDX-License-Identifier: GPL-2.0-only
"""Tree preparation: Debian's tarball .gitignore, existing trees, errors."""

import subprocess
import tarfile
from pathlib import Path

import pytest

from refsweep import tree

DEBIAN_GITIGNORE = """\
.*
*.o
!.gitignore
!.mailmap
#
# Debian packaging: ignore everything at the top level, since it isn't
# included in our repository
#
/*
!/debian/
"""


def fake_kernel(root: Path) -> Path:
    """The few files that make a directory look like a kernel tree."""
    (root / "include" / "linux").mkdir(parents=True)
    (root / "kernel").mkdir()
    (root / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 12\n"
                                   "SUBLEVEL = 7\n")
    (root / "Kbuild").write_text("# kbuild\n")
    (root / "include" / "linux" / "kref.h").write_text("struct kref;\n")
    (root / "kernel" / "fork.c").write_text("int x;\n")
    (root / ".mailmap").write_text("a <a@b>\n")
    (root / ".cocciconfig").write_text("[spatch]\n")
    (root / ".gitignore").write_text(DEBIAN_GITIGNORE)
    return root


def tracked(root: Path) -> set[str]:
    out = subprocess.run(["git", "-C", str(root), "ls-files"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_debian_gitignore_block_is_removed(tmp_path: Path) -> None:
    root = fake_kernel(tmp_path / "linux")
    assert tree.fix_debian_gitignore(root)
    text = (root / ".gitignore").read_text()
    assert "/*" not in text.splitlines() and "*.o" in text
    assert not tree.fix_debian_gitignore(root)


def test_existing_directory_gets_every_file_committed(tmp_path: Path) -> None:
    root = fake_kernel(tmp_path / "linux")
    assert tree.prepare(str(root)) == root.resolve()
    files = tracked(root)
    # Dotfiles the kernel's own .gitignore hides are added with --force.
    assert {"Makefile", "Kbuild", "kernel/fork.c", "include/linux/kref.h",
            ".mailmap", ".cocciconfig", ".gitignore"} <= files
    head = tree.head(root)
    assert tree.prepare(str(root)) == root.resolve()
    assert tree.head(root) == head, "a second prepare must reuse the tree"


def test_package_tarball(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                         ) -> None:
    src = fake_kernel(tmp_path / "src" / "linux-source-6.12")
    usr_src = tmp_path / "usr-src"
    usr_src.mkdir()
    with tarfile.open(usr_src / "linux-source-6.12.tar.xz", "w:xz") as tar:
        tar.add(src, arcname="linux-source-6.12")
    monkeypatch.setattr(tree, "DEBIAN_SOURCE", usr_src)
    dest = tree.prepare_from_package("6.12", tmp_path / "trees" / "l")
    assert "kernel/fork.c" in tracked(dest)
    log = subprocess.run(["git", "-C", str(dest), "log", "--format=%s"],
                         capture_output=True, text=True, check=True).stdout
    assert log.strip() == "Linux 6.12.7 (linux-source-6.12)"


def test_missing_package_names_the_fix(tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch
                                       ) -> None:
    monkeypatch.setattr(tree, "DEBIAN_SOURCE", tmp_path)
    with pytest.raises(tree.TreeError, match="apt-get install linux-source-9.9"):
        tree.prepare_from_package("9.9", tmp_path / "x")


def test_not_a_kernel_tree(tmp_path: Path) -> None:
    with pytest.raises(tree.TreeError, match="not a kernel source tree"):
        tree.prepare(str(tmp_path))
    with pytest.raises(tree.TreeError, match="neither a directory"):
        tree.prepare("no-such-thing")
