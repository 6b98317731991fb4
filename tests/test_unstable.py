# SPDX-License-Identifier: GPL-2.0-only
"""Fetching the newest linux-source from Debian unstable, privately."""

import subprocess
from pathlib import Path

import pytest

from refsweep import tree, unstable


def test_newest_version_compares_numerically() -> None:
    names = ["linux-source-6.12", "linux-source-7.2", "linux-source-6.1",
             "linux-source-7.10", "linux-source-7.2-rt", "linux-source"]
    assert unstable.newest_version(names) == "7.10"


def test_newest_version_without_candidates_fails() -> None:
    with pytest.raises(unstable.FetchError, match="no linux-source"):
        unstable.newest_version(["linux-headers-7.2", "linux-source"])


def test_private_root_keeps_state_out_of_the_system(tmp_path: Path) -> None:
    root = unstable.private_root()
    opts = unstable.apt_options(root)
    assert "Dir::Etc::SourceList=/dev/null" in opts
    for value in opts[1::2]:
        if value.startswith("Dir::") and not value.endswith("/dev/null"):
            assert str(root) in value, value
    sources = (root / "sources" / "sid.sources").read_text()
    assert "Suites: sid" in sources and "Signed-By: /" in sources


def test_unreachable_archive_is_a_clear_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A real apt-get run against a closed local port: a one-line reason."""
    monkeypatch.setattr(unstable, "system_archive",
                        lambda: ("http://127.0.0.1:9/debian",
                                 unstable.DEFAULT_KEYRING))
    with pytest.raises(tree.TreeError, match=r"tree next: apt-get update "
                       r"for Debian sid failed"):
        tree.prepare("next")
    assert not list(Path(unstable.workdir.sub("trees")).glob("linux-*/.git"))


def test_system_sources_untouched() -> None:
    """The system's apt sources never name unstable."""
    listed = subprocess.run(["grep", "-rs", "sid", "/etc/apt/sources.list",
                             "/etc/apt/sources.list.d/"],
                            capture_output=True, text=True, check=False)
    assert "Suites: sid" not in listed.stdout
    assert " sid " not in listed.stdout
