# SPDX-License-Identifier: GPL-2.0-only
"""Turn a kernel source package or checkout into a git tree with a base commit.

Debian's ``linux-source-X.Y`` tarball ships the upstream ``.gitignore`` with
a block appended that ignores the whole top level ("/*", "!/debian/").
``git add -A`` on it would commit nothing, so that block is removed before
the base commit, and any file the remaining rules still ignore is added
with ``--force``: the base commit holds exactly the files of the tarball.
"""

import fcntl
import subprocess
import tarfile
from pathlib import Path
from typing import Optional

from refsweep import unstable, workdir

DEBIAN_SOURCE = Path("/usr/src")
_DEBIAN_BLOCK = "#\n# Debian packaging"
GIT_IDENTITY = ["-c", "user.name=refsweep", "-c", "user.email=refsweep@localhost"]


class TreeError(Exception):
    """A tree could not be prepared; the message says why."""


def git(tree: Path, *args: str, capture: bool = True) -> str:
    """Run git in TREE and return its standard output."""
    res = subprocess.run(["git", "-C", str(tree), *GIT_IDENTITY, *args],
                         capture_output=capture, text=True, check=False)
    if res.returncode != 0:
        raise TreeError(f"git {' '.join(args)} failed in {tree}: "
                        f"{(res.stderr or '').strip()}")
    return res.stdout if capture else ""


def is_kernel_tree(path: Path) -> bool:
    return (path / "Makefile").is_file() and (path / "Kbuild").is_file() \
        and (path / "include" / "linux").is_dir()


def kernel_version(tree: Path) -> str:
    """VERSION.PATCHLEVEL.SUBLEVEL from the top Makefile."""
    fields = {}
    with open(tree / "Makefile", encoding="utf-8", errors="replace") as f:
        for line in f:
            key, sep, val = line.partition("=")
            if sep and key.strip() in ("VERSION", "PATCHLEVEL", "SUBLEVEL"):
                fields[key.strip()] = val.strip()
            if len(fields) == 3:
                break
    return ".".join(fields.get(k, "?") for k in
                    ("VERSION", "PATCHLEVEL", "SUBLEVEL"))


def fix_debian_gitignore(tree: Path) -> bool:
    """Drop the block Debian appends to .gitignore; True if it was there."""
    path = tree / ".gitignore"
    if not path.is_file():
        return False
    text = path.read_text(encoding="utf-8")
    cut = text.find(_DEBIAN_BLOCK)
    if cut < 0:
        return False
    path.write_text(text[:cut].rstrip("\n") + "\n", encoding="utf-8")
    return True


def commit_base(tree: Path, message: str) -> str:
    """Make TREE a git repository whose one commit holds every file."""
    git(tree, "init", "-q", "-b", "base")
    # The commit leaves ~90000 loose objects, and "git gc --auto" would
    # then spend minutes of both cores packing them in the background
    # while the scan wants the CPU; the tree is local and short-lived.
    git(tree, "config", "gc.auto", "0")
    fix_debian_gitignore(tree)
    git(tree, "add", "-A")
    ignored = git(tree, "ls-files", "-z", "-o", "-i", "--exclude-standard")
    names = [n for n in ignored.split("\0") if n]
    for i in range(0, len(names), 500):
        git(tree, "add", "-f", "--", *names[i:i + 500])
    git(tree, "commit", "-q", "-m", message)
    return git(tree, "rev-parse", "HEAD").strip()


def _package_tarball(version: str) -> Path:
    tarball = DEBIAN_SOURCE / f"linux-source-{version}.tar.xz"
    if not tarball.is_file():
        raise TreeError(
            f"{tarball} not found: install it with "
            f"'apt-get install linux-source-{version}' (or run 'make setup')")
    return tarball


def prepare_from_package(version: str, dest: Optional[Path] = None,
                         tarball: Optional[Path] = None) -> Path:
    """Unpack Debian's linux-source-VERSION into a git tree; reuse if done.

    The tarball is the installed package's unless TARBALL names one.
    """
    dest = dest or workdir.sub("trees") / f"linux-{version}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Two refsweep runs preparing one tree at once would unpack into the
    # same partial directory; the second waits and reuses the first's.
    with open(dest.with_name(dest.name + ".lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (dest / ".git").is_dir():
            git(dest, "rev-parse", "--verify", "HEAD")
            return dest
        return _unpack(tarball or _package_tarball(version), dest, version)


def _unpack(tarball: Path, dest: Path, version: str) -> Path:
    """Unpack TARBALL into DEST (via a partial directory) and commit a base."""
    tmp = dest.with_name(dest.name + ".partial")
    if tmp.exists():
        subprocess.run(["rm", "-rf", str(tmp)], check=True)
    tmp.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        top = tar.next()
        if top is None:
            raise TreeError(f"{tarball} is empty")
    res = subprocess.run(["tar", "-xf", str(tarball), "-C", str(tmp),
                          "--strip-components=1"], capture_output=True,
                         text=True, check=False)
    if res.returncode != 0:
        raise TreeError(f"unpacking {tarball} failed: {res.stderr.strip()}")
    if not is_kernel_tree(tmp):
        raise TreeError(f"{tarball} does not hold a kernel tree")
    commit_base(tmp, f"Linux {kernel_version(tmp)} (linux-source-{version})")
    tmp.rename(dest)
    return dest


def prepare_from_path(src: Path) -> Path:
    """Use an existing kernel checkout; commit a base if it is not git yet."""
    src = src.resolve()
    if not is_kernel_tree(src):
        raise TreeError(f"{src} is not a kernel source tree "
                        "(no Makefile, Kbuild and include/linux)")
    inside = subprocess.run(["git", "-C", str(src), "rev-parse",
                             "--show-toplevel"], capture_output=True,
                            text=True, check=False)
    if inside.returncode == 0 and Path(inside.stdout.strip()) == src:
        git(src, "rev-parse", "--verify", "HEAD")
        return src
    commit_base(src, f"Linux {kernel_version(src)} (imported by refsweep)")
    return src


def prepare_next() -> Path:
    """The newest linux-source Debian unstable carries, as a git tree."""
    try:
        version = unstable.newest()
        dest = workdir.sub("trees") / f"linux-{version}"
        if (dest / ".git").is_dir():
            return prepare_from_package(version, dest)
        return prepare_from_package(version, dest, unstable.fetch(version))
    except unstable.FetchError as e:
        raise TreeError(f"tree next: {e}") from e


def prepare(source: str) -> Path:
    """Prepare SOURCE: "next", a package version like "6.12" or a directory."""
    path = Path(source)
    if path.is_dir():
        return prepare_from_path(path)
    if source == "next":
        return prepare_next()
    if not all(part.isdigit() for part in source.split(".")):
        raise TreeError(f"{source!r} is neither a directory, \"next\" nor a "
                        "linux-source version such as 6.12")
    return prepare_from_package(source)


def head(tree: Path) -> str:
    """The commit id of TREE's HEAD."""
    return git(tree, "rev-parse", "HEAD").strip()
