# SPDX-License-Identifier: GPL-2.0-only
"""Whole-tree greps kept per file content, so a re-run greps only what
changed.

The resolve stage greps the whole tree for the names it collects (helpers,
macros, pointer-held counters) and the scan for files that mention
atomics.  On a git tree each file has a content id (its blob id from the
index, or ``git hash-object`` of a file changed in the worktree or not yet
tracked); the results of a grep are stored with the ids they were taken
from, and the next run with the same words greps only the files whose id
changed.  Trees that are no git repository are grepped whole every time.
"""

import concurrent.futures
import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional

from refsweep import workdir

# Not kernel code: userspace tools, documentation, build scripts.
EXCLUDED_DIRS = ("tools", "Documentation", "scripts")
# Arguments per grep: well below ARG_MAX with long paths.
_CHUNK = 2000
# Cache files kept (one per tree state and grep); older ones are removed.
_KEEP = 64

Hit = tuple[str, int, str]


class GrepError(Exception):
    """A grep could not run; the message names the problem."""


def _git(tree: Path, *args: str) -> Optional[str]:
    res = subprocess.run(["git", "-C", str(tree), *args],
                         capture_output=True, text=True, check=False,
                         errors="replace")
    return res.stdout if res.returncode == 0 else None


def _pathspec(globs: tuple[str, ...]) -> list[str]:
    return [*globs, *(f":!{d}" for d in EXCLUDED_DIRS)]


def file_ids(tree: Path, globs: tuple[str, ...]) -> Optional[dict[str, str]]:
    """Content id of every file of TREE matching GLOBS (tracked, or new and
    not ignored), or None when TREE is no git work tree."""
    spec = _pathspec(globs)
    staged = _git(tree, "ls-files", "-s", "-z", "--", *spec)
    dirty = _git(tree, "diff-files", "--name-only", "-z", "--", *spec)
    new = _git(tree, "ls-files", "-o", "--exclude-standard", "-z", "--",
               *spec)
    if staged is None or dirty is None or new is None:
        return None
    ids: dict[str, str] = {}
    for entry in staged.split("\0"):
        meta, _tab, path = entry.partition("\t")
        fields = meta.split()
        if path and len(fields) == 3 and fields[0] != "160000":
            ids[path] = fields[1]
    changed = [p for p in {*dirty.split("\0"), *new.split("\0")} if p]
    for path in changed:
        ids.pop(path, None)
    present = sorted(p for p in changed if (tree / p).is_file())
    if present:
        res = subprocess.run(["git", "-C", str(tree), "hash-object",
                              "--stdin-paths"], input="\n".join(present),
                             capture_output=True, text=True, check=False)
        hashes = res.stdout.split()
        if res.returncode != 0 or len(hashes) != len(present):
            raise GrepError(f"git hash-object failed in {tree}: "
                            f"{res.stderr.strip()}")
        ids.update(zip(present, hashes))
    return ids


def _run_grep(tree: Path, cmd: list[str]) -> list[Hit]:
    """Run the grep command CMD in TREE and parse its "path:line:text"
    output; exit 1 (no match) is no error, anything else is: a silent
    empty result would lose evidence."""
    res = subprocess.run(cmd, cwd=tree, capture_output=True, text=True,
                         check=False, errors="replace")
    if res.returncode not in (0, 1):
        msg = (res.stderr.strip().splitlines() or ["no message"])[-1]
        raise GrepError(f"grep failed in {tree}: {msg}")
    out: list[Hit] = []
    for hit in res.stdout.splitlines():
        path, _sep, rest = hit.partition(":")
        lno, _sep, text = rest.partition(":")
        if lno.isdigit():
            out.append((path.removeprefix("./"), int(lno), text))
    return out


def _grep(tree: Path, args: list[str], paths: list[str]) -> list[Hit]:
    """grep ARGS over PATHS of TREE, a chunk of paths at a time, one grep
    per core: a cold grep of a whole tree is CPU-bound (-wF checks every
    substring hit for word boundaries)."""
    chunks = [paths[at:at + _CHUNK] for at in range(0, len(paths), _CHUNK)]
    with concurrent.futures.ThreadPoolExecutor(
            max_workers=os.cpu_count() or 1) as pool:
        results = pool.map(lambda chunk: _run_grep(
            tree, ["grep", "-nH", *args, "--", *chunk]), chunks)
        return [hit for hits in results for hit in hits]


def _grep_tree(tree: Path, args: list[str], globs: tuple[str, ...]
               ) -> list[Hit]:
    """grep -r ARGS over TREE's files matching GLOBS (no git)."""
    return _run_grep(tree, [
        "grep", "-rn", *args, *(f"--include={g}" for g in globs),
        "--exclude-dir=.git", *(f"--exclude-dir={d}" for d in EXCLUDED_DIRS),
        "."])


def _cache_file(key: str) -> Path:
    return workdir.sub("cache") / "grep" / f"{key}.json"


def _load(path: Path) -> tuple[dict[str, str], dict[str, list[list[Any]]]]:
    """The content ids and hits of the last grep, or nothing when the
    cache is absent or torn (then everything is grepped again)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, {}
    if isinstance(data, dict) and isinstance(data.get("ids"), dict) and \
            isinstance(data.get("hits"), dict):
        return data["ids"], data["hits"]
    return {}, {}


def _mtime(path: Path) -> Optional[float]:
    try:
        return path.stat().st_mtime
    except OSError:
        return None     # removed meanwhile by another run's pruning


def _store(path: Path, ids: dict[str, str],
           hits: dict[str, list[list[Any]]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"ids": ids, "hits": hits}), encoding="utf-8")
    tmp.replace(path)
    old = sorted((mtime, p) for p in path.parent.glob("*.json")
                 if (mtime := _mtime(p)) is not None)
    for _mtime_of_stale, stale in old[:-_KEEP]:
        stale.unlink(missing_ok=True)


def grep(tree: Path, args: list[str], patterns: list[str],
         globs: tuple[str, ...],
         keep: Optional[Callable[[Path, list[Hit]], list[Hit]]] = None,
         salt: str = "", ids: Optional[dict[str, str]] = None
         ) -> list[Hit]:
    """(path, line, text) of every line of TREE's files matching GLOBS that
    ``grep ARGS`` with PATTERNS (one per line of a -f file) matches, sorted;
    KEEP(TREE, HITS) filters each batch of new hits (it must judge a file by
    its content only, since its hits are kept with its content id; SALT
    names what else it depends on, such as a regular expression).  IDS
    are file_ids(TREE, GLOBS) when the caller has them."""
    # The cache outlives the tree (a worktree of the same commit reuses
    # it): its key is what is searched for, never where.
    key = hashlib.sha256(json.dumps([args, patterns, globs, keep and (
        keep.__module__, keep.__qualname__), salt]).encode()).hexdigest()

    def kept(hits: list[Hit]) -> list[Hit]:
        return keep(tree, hits) if keep else hits

    cache = _cache_file(key)
    with tempfile.NamedTemporaryFile("w", suffix=".patterns") as words:
        words.write("\n".join(patterns) + "\n")
        words.flush()
        return _grep_cached(tree, [*args, "-f", words.name], globs, cache,
                            kept, ids)


def _grep_cached(tree: Path, args: list[str], globs: tuple[str, ...],
                 cache: Path, kept: Callable[[list[Hit]], list[Hit]],
                 ids: Optional[dict[str, str]]) -> list[Hit]:
    """grep() with the patterns in a file of ARGS: the files whose content
    id is not the one CACHE holds hits for are grepped, the rest reused."""
    if ids is None:
        ids = file_ids(tree, globs)
    if ids is None:
        return sorted(kept(_grep_tree(tree, args, globs)))
    old_ids, old_hits = _load(cache)
    todo = sorted(p for p, i in ids.items() if old_ids.get(p) != i)
    hits = {p: h for p, h in old_hits.items()
            if p in ids and old_ids.get(p) == ids[p]}
    for path, lno, text in kept(_grep(tree, args, todo)):
        hits.setdefault(path, []).append([lno, text])
    if old_ids != ids:
        _store(cache, ids, hits)
    return sorted((p, int(n), str(t)) for p, hs in hits.items()
                  for n, t in hs)
