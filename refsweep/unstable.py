# SPDX-License-Identifier: GPL-2.0-only
"""Fetch the newest kernel source Debian unstable carries, without installing it.

Mailing-list patches are written against the current tree; Debian unstable
carries the newest ``linux-source-X.Y``.  Adding unstable to the system's
apt sources would upgrade the machine, so apt runs here with a private
configuration: its own sources, package lists and cache below the work
directory, the system's archive URI and keyring.  ``apt-get download``
fetches the ``.deb`` and ``dpkg-deb -x`` unpacks it; dpkg never learns of it.
"""

import re
import subprocess
from pathlib import Path

from refsweep import workdir

SUITE = "sid"
SYSTEM_SOURCES = Path("/etc/apt/sources.list.d/debian.sources")
SYSTEM_LIST = Path("/etc/apt/sources.list")
DEFAULT_URI = "http://deb.debian.org/debian"
DEFAULT_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


class FetchError(Exception):
    """The newest source package could not be fetched; the message says why."""


def system_archive() -> tuple[str, str]:
    """The main Debian archive URI and keyring the system's apt already trusts."""
    if SYSTEM_SOURCES.is_file():
        for stanza in SYSTEM_SOURCES.read_text(encoding="utf-8").split("\n\n"):
            fields = dict(line.split(":", 1) for line in stanza.splitlines()
                          if ":" in line and not line.startswith("#"))
            uris = fields.get("URIs", "").split()
            suites = fields.get("Suites", "")
            if uris and "security" not in suites and "updates" not in " ".join(uris):
                return uris[0].strip(), fields.get("Signed-By", DEFAULT_KEYRING).strip()
    if SYSTEM_LIST.is_file():
        for line in SYSTEM_LIST.read_text(encoding="utf-8").splitlines():
            m = re.match(r"deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+(\S+)", line)
            if m and "security" not in m.group(2):
                return m.group(1), DEFAULT_KEYRING
    return DEFAULT_URI, DEFAULT_KEYRING


def apt_options(root: Path) -> list[str]:
    """apt options that keep every piece of state below ROOT."""
    return ["-o", "Dir::Etc::SourceList=/dev/null",
            "-o", f"Dir::Etc::SourceParts={root / 'sources'}",
            "-o", f"Dir::State::Lists={root / 'lists'}",
            "-o", f"Dir::Cache={root / 'cache'}",
            # An empty dpkg status: the system's installed packages must
            # not pass for packages unstable carries.
            "-o", f"Dir::State::status={root / 'status'}",
            "-o", "APT::Sandbox::User=root"]


def _apt(root: Path, *args: str) -> str:
    res = subprocess.run(list(args[:1]) + apt_options(root) + list(args[1:]),
                         capture_output=True, text=True, check=False,
                         cwd=root / "debs")
    if res.returncode != 0:
        last = (res.stderr.strip().splitlines() or ["no output"])[-1]
        what = " ".join(a for a in args if not a.startswith("-"))
        raise FetchError(f"{what} for Debian {SUITE} failed "
                         f"(is the Debian archive reachable?): {last}")
    return res.stdout


def private_root() -> Path:
    """The private apt directory, laid out and pointed at unstable."""
    root = workdir.sub("apt-unstable")
    for d in ("sources", "lists/partial", "cache/archives/partial", "debs"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "status").touch()
    uri, keyring = system_archive()
    (root / "sources" / f"{SUITE}.sources").write_text(
        f"Types: deb\nURIs: {uri}\nSuites: {SUITE}\nComponents: main\n"
        f"Signed-By: {keyring}\n", encoding="utf-8")
    return root


def newest_version(names: list[str]) -> str:
    """The highest X.Y among linux-source-X.Y package names."""
    versions = [m.group(1) for n in names
                if (m := re.fullmatch(r"linux-source-(\d+\.\d+)", n.strip()))]
    if not versions:
        raise FetchError(f"Debian {SUITE} lists no linux-source-X.Y package")
    return max(versions, key=lambda v: tuple(int(x) for x in v.split(".")))


def newest() -> str:
    """Refresh the private package lists; the newest linux-source X.Y."""
    root = private_root()
    _apt(root, "apt-get", "-q", "--error-on=any", "update")
    return newest_version(_apt(root, "apt-cache", "pkgnames",
                               "linux-source-").split())


def fetch(version: str) -> Path:
    """Download and unpack linux-source-VERSION; the path of its tarball."""
    root = private_root()
    package = f"linux-source-{version}"
    tarball = root / "unpacked" / "usr" / "src" / f"{package}.tar.xz"
    if tarball.is_file():
        return tarball
    for old in (root / "debs").glob("*.deb"):
        old.unlink()
    _apt(root, "apt-get", "-q", "download", package)
    debs = sorted((root / "debs").glob(f"{package}_*.deb"))
    if not debs:
        raise FetchError(f"apt-get download {package} left no .deb")
    subprocess.run(["rm", "-rf", str(root / "unpacked")], check=True)
    res = subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(root / "unpacked")],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0 or not tarball.is_file():
        raise FetchError(f"dpkg-deb -x {debs[-1].name} gave no {tarball.name}: "
                         f"{res.stderr.strip()}")
    debs[-1].unlink()
    return tarball
