# SPDX-License-Identifier: GPL-2.0-only
"""MAINTAINERS sections: which one owns a file, and its patch style.

Matching follows scripts/get_maintainer.pl: an ``F:`` pattern ending in
"/" covers everything below it, other patterns (with ``*``/``?`` globs)
cover files at the same depth, ``X:`` excludes, ``N:`` is a regular
expression on the path.  The owner of a file is the most specific section,
by get_maintainer's measure: the depth of the matching pattern ("THE REST"
never owns anything when another section matches).
"""

import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import NamedTuple, Optional


class Section(NamedTuple):
    """One MAINTAINERS entry."""
    name: str
    files: list[str]        # F: patterns
    excludes: list[str]     # X: patterns
    regexes: list[str]      # N: patterns
    lists: list[str]        # L: mailing lists


def parse(text: str) -> list[Section]:
    """Every section of a MAINTAINERS file, in order."""
    out: list[Section] = []
    name: Optional[str] = None
    fields: dict[str, list[str]] = {}

    def flush() -> None:
        if name is not None and fields.get("F", []) + fields.get("N", []):
            out.append(Section(name, fields.get("F", []),
                               fields.get("X", []), fields.get("N", []),
                               fields.get("L", [])))

    for line in text.splitlines():
        m = re.match(r"^([A-Z]):\s*(.*?)\s*$", line)
        if m and name is not None:
            fields.setdefault(m.group(1), []).append(m.group(2))
        elif line.strip() and not line.startswith((" ", "\t")):
            flush()
            name, fields = line.strip(), {}
        elif not line.strip():
            flush()
            name, fields = None, {}
    flush()
    return out


def _pattern_regex(pattern: str, is_dir: bool) -> tuple[re.Pattern[str],
                                                         bool]:
    value = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    tree_wide = pattern.endswith("/") or is_dir
    if is_dir and not pattern.endswith("/"):
        value += "/"
    return re.compile("^" + value), tree_wide


class Owners:
    """Answers "which section owns this file" for one kernel tree."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree
        text = (tree / "MAINTAINERS").read_text(encoding="utf-8",
                                                errors="replace")
        self.sections = parse(text)
        self._compiled = [
            ([(*_pattern_regex(p, (tree / p).is_dir()), p) for p in s.files],
             [_pattern_regex(p, (tree / p).is_dir())[0] for p in s.excludes],
             [re.compile(r, re.X) for r in s.regexes])
            for s in self.sections]

    def matches(self, path: str) -> list[tuple[int, int]]:
        """(depth, section index) of every section covering PATH."""
        out = []
        file_depth = path.count("/")
        for i, (pats, excl, regexes) in enumerate(self._compiled):
            if any(x.match(path) for x in excl):
                continue
            best = -2
            for rx, tree_wide, raw in pats:
                if not rx.match(path):
                    continue
                depth = raw.count("/") + (0 if raw.endswith("/") else 1)
                if not tree_wide and raw.count("/") != file_depth:
                    continue
                if raw.startswith("*"):
                    depth = -1
                best = max(best, depth)
            if best == -2 and any(r.search(path) for r in regexes):
                best = 0
            if best > -2:
                out.append((best, i))
        return out

    def owner(self, path: str) -> Section:
        """The most specific section owning PATH (first one on a tie)."""
        found = self.matches(path)
        real = [m for m in found if self.sections[m[1]].name != "THE REST"]
        if real:
            found = real
        if not found:
            return Section("THE REST", [], [], [], [])
        depth = max(d for d, _ in found)
        return self.sections[min(i for d, i in found if d == depth)]


def slug(name: str) -> str:
    """A directory name for a section: "NFS, SUNRPC, ..." -> nfs-sunrpc-..."""
    text = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return text[:60].rstrip("-") or "section"


def _history_prefix(tree: Path, files: list[str]) -> Optional[str]:
    """The most common "prefix: " of earlier commits touching FILES."""
    res = subprocess.run(["git", "-C", str(tree), "log", "--no-merges",
                          "-n", "200", "--format=%s", "--", *files],
                         capture_output=True, text=True, check=False)
    subjects = res.stdout.splitlines()
    if len(subjects) < 3:
        return None
    counts: Counter[str] = Counter()
    for s in subjects:
        head, sep, _ = s.rpartition(": ")
        if sep and len(head) < 40:
            counts[head + ": "] += 1
    if not counts:
        return None
    prefix, n = counts.most_common(1)[0]
    return prefix if n * 3 >= len(subjects) else None


def _stem(name: str) -> str:
    return re.sub(r"\.[ch]$", "", name)


def _path_prefix(path: str) -> str:
    """The kernel's usual subject prefix for PATH, without history."""
    parts = path.split("/")
    if parts[0] == "drivers" and len(parts) > 2:
        sub = parts[1]
        leaf = parts[2] if len(parts) > 3 else _stem(parts[2])
        if sub == "net" and parts[2] == "ethernet" and len(parts) > 4:
            return f"net: {parts[4] if len(parts) > 5 else parts[3]}: "
        if sub == "gpu" and parts[2] == "drm" and len(parts) > 3:
            return f"drm/{parts[3] if len(parts) > 4 else _stem(parts[3])}: "
        return f"{sub}: {leaf}: "
    if parts[0] == "net" and len(parts) > 2:
        return f"net: {parts[1]}: "
    if parts[0] == "fs" and len(parts) > 2:
        return f"{parts[1]}: "
    if parts[0] == "arch" and len(parts) > 2:
        return f"{parts[1]}: "
    if parts[0] in ("kernel", "mm", "block", "lib", "crypto", "security",
                    "sound", "ipc", "init", "io_uring", "virt") \
            and len(parts) > 2:
        return f"{parts[1]}: " if parts[0] == "kernel" else \
            f"{parts[0]}: {parts[1]}: "
    if parts[0] == "include" and len(parts) > 2:
        return f"{_stem(parts[-1])}: "
    return f"{_stem(parts[0]) if len(parts) == 1 else parts[0]}: "


def subject_prefix(tree: Path, files: list[str]) -> str:
    """The subsystem's usual subject prefix for a patch touching FILES:
    from git history when the tree has some, else from the paths."""
    found = _history_prefix(tree, files)
    if found:
        return found
    counts = Counter(_path_prefix(f) for f in files if not f.endswith(".h"))
    if not counts:
        counts = Counter(_path_prefix(f) for f in files)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
