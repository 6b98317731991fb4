# SPDX-License-Identifier: GPL-2.0-only
"""The scan command: which files, in what shards, with what cache.

Output is JSON lines, one object per file (see evidence.analyse_file), plus
a header line {"refsweep_scan": ...} naming the tree and shard.  Shards of
one tree merge by concatenation of their file lines.
"""

import concurrent.futures
import functools
import hashlib
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, TextIO

from refsweep import (VERSION, atomic_api, evidence, lexical, macros,
                      pointers, spatch, tree_grep, workdir)

# Files that mention an atomic type or operation; spatch sees only these.
PREFILTER = r"\batomic(64|_long)?_(t\b|[a-z0-9_]+\s*\()"
_PREFILTER_RE = re.compile(PREFILTER)
# The files that define the atomic API itself, not users of it.
API_FILES = ("include/linux/atomic", "include/asm-generic/atomic",
             "include/linux/atomic.h", "lib/atomic64.c")
BATCH_FILES = 40
BATCH_BYTES = 256 * 1024


class ScanError(Exception):
    """The scan cannot run; the message names the problem."""


def candidate_files(tree: Path, paths: Iterable[str] = ()) -> list[str]:
    """C files under PATHS that mention atomics, sorted, API files dropped."""
    # A fixed-string grep is ten times faster than a regex on a whole
    # tree; the regex then runs on the few thousand files it finds, and
    # both are kept per file content (tree_grep).
    try:
        hits = tree_grep.grep(tree, ["-F", "-m1"], ["atomic"],
                              ("*.c", "*.h"), _mentions_atomics, PREFILTER)
    except tree_grep.GrepError as e:
        raise ScanError(str(e)) from e
    under = [posixpath.normpath(p).rstrip("/") for p in paths]
    files = [f for f, _n, _t in hits
             if not f.startswith(API_FILES) and "/asm/atomic" not in f]
    if under and "." not in under:
        files = [f for f in files
                 if any(f == u or f.startswith(u + "/") for u in under)]
    return sorted(set(files))


def _mentions_atomics(tree: Path, hits: list[tree_grep.Hit]
                      ) -> list[tree_grep.Hit]:
    """The hits of files whose text passes the scan's prefilter; a file
    that cannot be read is kept (the scan reports it as unreadable)."""
    out = []
    for hit in hits:
        try:
            text = (tree / hit[0]).read_text(encoding="utf-8",
                                             errors="replace")
        except OSError:
            out.append(hit)
            continue
        if _PREFILTER_RE.search(text):
            out.append(hit)
    return out


def shard(files: list[str], index: int, count: int) -> list[str]:
    """The deterministic INDEX-th (1-based) of COUNT shards."""
    if not 1 <= index <= count:
        raise ScanError(f"shard {index}/{count}: need 1 <= I <= N")
    return [f for k, f in enumerate(files) if k % count == index - 1]


@functools.lru_cache(maxsize=4)
def _salted(salt: str) -> "hashlib._Hash":
    return hashlib.sha256(salt.encode() + b"\0")


def _cache_key(content: bytes, salt: str) -> str:
    # The salt holds the analysing code's text: hashed once, not per file.
    h = _salted(salt).copy()
    h.update(content)
    return h.hexdigest()


def _cache_path(key: str) -> Path:
    return workdir.sub("cache") / key[:2] / f"{key}.json"


def _cache_load(key: str) -> Optional[dict[str, Any]]:
    path = _cache_path(key)
    try:
        with open(path, encoding="utf-8") as f:
            data: dict[str, Any] = json.load(f)
            return data
    except (OSError, json.JSONDecodeError):
        return None


def _cache_store(key: str, data: dict[str, Any]) -> None:
    path = _cache_path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Unique per process and thread: identical files of one tree share a
    # key, and several scans may share the cache.
    tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    tmp.replace(path)


def _store_evidence(key: str, data: dict[str, Any]) -> None:
    """Cache a file's analysed evidence without its location: identical
    files share the entry, and _cached_line() splices the location on."""
    _cache_store(key, {k: v for k, v in data.items()
                       if k not in ("path", "sha256")})


def _cached_line(key: str, path: str, sha256: str
                 ) -> Optional[tuple[str, dict[str, Any]]]:
    """The scan line of a file whose evidence is cached under KEY, and
    its object; None when the entry is absent or torn.  PATH and SHA256
    are spliced onto the entry's JSON text, so a warm scan decodes each
    entry once and encodes none."""
    try:
        text = _cache_path(key).read_text(encoding="utf-8").rstrip()
        obj = json.loads(text)
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(obj, dict):
        return None
    # Entries written before _store_evidence() hold a location.
    stored_location = not obj or "path" in obj or "sha256" in obj
    obj.pop("path", None)
    obj.pop("sha256", None)
    obj["path"] = path
    obj["sha256"] = sha256
    if stored_location:
        return json.dumps(obj), obj
    return (f'{text[:-1]}, "path": {json.dumps(path)}, '
            f'"sha256": "{sha256}"}}'), obj


class Progress:
    """Progress on standard error: a line rewritten in place on a
    terminal, else one line every EVERY seconds (a log, "make run | tee")."""

    EVERY = 5.0

    def __init__(self, total: int, stream: TextIO = sys.stderr,
                 label: str = "scan") -> None:
        self.total = total
        self.done = 0
        self.start = time.monotonic()
        self.last = self.start
        self.stream = stream
        self.label = label
        self.tty = stream.isatty()

    def step(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if not self.total or (not self.tty and now - self.last < self.EVERY
                              and self.done < self.total):
            return
        self.last = now
        elapsed = now - self.start
        rate = self.done / elapsed if elapsed else 0.0
        eta = (self.total - self.done) / rate if rate else 0.0
        line = (f"{self.label}: {self.done}/{self.total} files "
                f"({100 * self.done // self.total}%), "
                f"{elapsed:.0f}s, eta {eta:.0f}s")
        self.stream.write(f"\r{line}   " if self.tty else line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self.total:
            self.stream.write("\n")


def _analyse(path: str, content: bytes,
             records: list[dict[str, Any]], trouble: Optional[str],
             facts: Optional[lexical.FileFacts] = None) -> dict[str, Any]:
    source = content.decode("utf-8", errors="replace")
    facts = facts or lexical.scan_text(source)
    result = evidence.analyse_file(path, source, records, facts)
    code = lexical.strip_comments(source)
    result.update(pointers.file_facts(code))
    result.update(macros.file_facts(path, code))
    if trouble:
        result["trouble"] = trouble
    return result


def _batches(todo: list[tuple[str, bytes]]) -> list[list[tuple[str, bytes]]]:
    """Largest files first, so that the slow ones do not form the tail, in
    batches of bounded size so that one worker does not get them all."""
    out: list[list[tuple[str, bytes]]] = []
    cur: list[tuple[str, bytes]] = []
    size = 0
    for item in sorted(todo, key=lambda t: -len(t[1])):
        if cur and (len(cur) >= BATCH_FILES
                    or size + len(item[1]) > BATCH_BYTES):
            out.append(cur)
            cur, size = [], 0
        cur.append(item)
        size += len(item[1])
    if cur:
        out.append(cur)
    return out


def _module_text() -> str:
    return "".join(Path(m.__file__).read_text(encoding="utf-8")
                   for m in (evidence, lexical, atomic_api, pointers, macros)
                   if m.__file__)


# Read when the modules are loaded, so that the salt describes the code
# that runs even if the files change under a long scan.
_CODE_TEXT = _module_text()


def _salts() -> tuple[str, str]:
    """Cache salts: spatch records depend on the semantic patch only; the
    analysed evidence also on the Python that derives it."""
    raw = f"{VERSION}\0{spatch.cocci_text()}"
    return raw, raw + "\0" + _CODE_TEXT


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def tree_head(tree: Path) -> Optional[str]:
    """TREE's HEAD commit, or None outside git."""
    res = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"],
                         capture_output=True, text=True, check=False)
    return res.stdout.strip() if res.returncode == 0 else None


def scan_header(tree: Path, shard_name: str, files: int,
                timeout: int) -> dict[str, Any]:
    """The first line of a scan: what was scanned, with what.  The inputs
    of each stage are named: the tree (path and HEAD commit), spatch and
    the semantic patch (stage 1, the records), the Python that turns
    records into evidence (stage 2)."""
    return {"refsweep_scan": VERSION, "tree": str(tree),
            "head": tree_head(tree), "shard": shard_name, "files": files,
            "spatch": spatch.check_spatch(), "timeout": timeout,
            "cocci_sha256": _sha(spatch.cocci_text()),
            "evidence_sha256": _sha(_CODE_TEXT)}


def check_tree(header: dict[str, Any], tree: Path) -> None:
    """Raise ScanError unless HEADER is a scan of TREE: the same HEAD
    commit (shards scanned on other machines have other paths), or the
    same path where there is no commit."""
    head = tree_head(tree)
    if header.get("head") and head:
        if header["head"] != head:
            raise ScanError(f"the scan is of {header.get('tree')} at "
                            f"{header['head'][:12]}, not of {tree} at "
                            f"{head[:12]}")
    elif Path(str(header.get("tree"))).resolve() != tree.resolve():
        raise ScanError(f"the scan is of {header.get('tree')}, not of "
                        f"{tree}")


def _scan_batch(reduced: Path, batch: list[tuple[str, bytes]], timeout: int,
                raw_salt: str, salt: str) -> list[dict[str, Any]]:
    """Stages 1 and 2 for one batch: spatch records, then evidence; both
    cached."""
    facts = {}
    for path, content in batch:
        source = content.decode("utf-8", errors="replace")
        facts[path] = lexical.scan_text(source)
        target = reduced / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(lexical.reduce_for_spatch(source, facts[path]),
                          encoding="utf-8")
    result = spatch.run_batch(reduced, [p for p, _c in batch], timeout)
    out = []
    for path, content in batch:
        (reduced / path).unlink(missing_ok=True)
        trouble = result.troubles.get(path)
        found = result.records.get(path, [])
        data = _analyse(path, content, found, trouble, facts[path])
        # A file spatch choked on is cached with its trouble: the same
        # content chokes it again (change --timeout to retry).
        _cache_store(_cache_key(content, raw_salt),
                     {"records": found, "trouble": trouble})
        _store_evidence(_cache_key(content, salt), data)
        data["sha256"] = hashlib.sha256(content).hexdigest()
        out.append(data)
    return out


def scan(tree: Path, files: list[str], jobs: int, out: TextIO,
         timeout: int = spatch.DEFAULT_TIMEOUT,
         shard_name: str = "1/1",
         keep: Optional[list[dict[str, Any]]] = None,
         before_spatch: Optional[Callable[[int], None]] = None
         ) -> dict[str, int]:
    """Scan FILES of TREE, writing one JSON line per file to OUT, and
    each line's object to KEEP if given (merge_records() reads it as
    read_scan() reads OUT, without decoding it again).  BEFORE_SPATCH,
    if given, is called with the number of files neither cache holds,
    before any thread is started.

    spatch reads a copy of each file whose atomic-free function bodies are
    blanked (lexical.reduce_for_spatch), which halves its parse time.
    Two caches keyed by file content: spatch's raw records (so a change to
    the classifier's Python never reruns spatch) and the analysed evidence
    (so an unchanged file costs one read and one lookup).
    """
    raw_salt, salt = _salts()

    def emit(obj: dict[str, Any], line: Optional[str] = None) -> None:
        """Write OBJ, or LINE that holds it; keep OBJ as read back."""
        if line is None:
            line = json.dumps(obj)
            obj = json.loads(line) if keep is not None else obj
        out.write(line + "\n")
        if keep is not None:
            keep.append(obj)
    emit(scan_header(tree, shard_name, len(files), timeout))
    stats = {"files": len(files), "cached": 0, "scanned": 0, "troubles": 0}
    todo: list[tuple[str, bytes]] = []
    progress = Progress(len(files))
    for path in files:
        try:
            content = (tree / path).read_bytes()
        except OSError as e:
            emit({"path": path, "decls": [], "ops": [], "helpers": [],
                  "functions": [], "unparsed_ops": 0,
                  "trouble": f"unreadable: {e}"})
            stats["troubles"] += 1
            continue
        sha256 = hashlib.sha256(content).hexdigest()
        key = _cache_key(content, salt)
        hit: Optional[dict[str, Any]] = None
        cached = _cached_line(key, path, sha256)
        if cached is not None:
            line, hit = cached
            emit(hit, line)
        else:
            records = _cache_load(_cache_key(content, raw_salt))
            if records is not None:
                hit = _analyse(path, content, records["records"],
                               records.get("trouble"))
                _store_evidence(key, hit)
                hit["sha256"] = sha256
                emit(hit)
        if hit is not None:
            stats["cached"] += 1
            stats["troubles"] += 1 if hit.get("trouble") else 0
            progress.step(1)
        else:
            todo.append((path, content))
    if before_spatch is not None:
        before_spatch(len(todo))
    reduced = workdir.sub("tmp") / f"reduced.{os.getpid()}"
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        # Each worker reduces its batch, runs spatch and analyses the
        # records itself: the Python work of one batch overlaps the other
        # workers' spatch processes instead of preceding or following all
        # of them.
        futures = [pool.submit(_scan_batch, reduced, batch, timeout,
                               raw_salt, salt)
                   for batch in _batches(todo)]
        for fut in concurrent.futures.as_completed(futures):
            results = fut.result()
            for data in results:
                stats["troubles"] += 1 if data.get("trouble") else 0
                emit(data)
                stats["scanned"] += 1
            out.flush()
            progress.step(len(results))
    progress.close()
    shutil.rmtree(reduced, ignore_errors=True)
    return stats


def read_scan(paths: Iterable[Path]) -> tuple[dict[str, Any],
                                              list[dict[str, Any]]]:
    """Read and merge scan outputs; later duplicates of a file replace
    earlier ones.  Raises ScanError naming a corrupt file and line."""
    return merge_records(_read_lines(paths), ", ".join(str(p) for p in paths))


def _read_lines(paths: Iterable[Path]
                ) -> Iterator[tuple[str, dict[str, Any]]]:
    """("FILE:LINE", object) of every line of the scan outputs PATHS."""
    for p in paths:
        try:
            with open(p, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        yield f"{p}:{n}", json.loads(line)
                    except json.JSONDecodeError as e:
                        raise ScanError(f"{p}:{n}: not a scan record "
                                        f"({e.msg})") from e
        except OSError as e:
            raise ScanError(f"cannot read {p}: {e.strerror}") from e


def merge_records(objs: Iterable[tuple[str, dict[str, Any]]], what: str
                  ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the file records, sorted by path, of the scan
    objects OBJS ((where, object) pairs) of WHAT; later duplicates of a
    file replace earlier ones."""
    header: dict[str, Any] = {}
    by_path: dict[str, dict[str, Any]] = {}
    for where, obj in objs:
        if "refsweep_scan" in obj:
            if header and not _same_tree(header, obj):
                raise ScanError(f"{where.rpartition(':')[0]}: scan of "
                                f"{obj.get('tree')} at {obj.get('head')}, "
                                f"not {header.get('tree')} at "
                                f"{header.get('head')}")
            _check_evidence_code(where.rpartition(':')[0], obj)
            header = header or obj
        elif "path" in obj:
            by_path[obj["path"]] = obj
        else:
            raise ScanError(f"{where}: not a scan record")
    if not header:
        raise ScanError(f"no scan header found in {what}")
    return header, [by_path[k] for k in sorted(by_path)]


def _check_evidence_code(where: str, header: dict[str, Any]) -> None:
    """A scan's evidence is read by the code that wrote it: records of
    other code may lack fields or judge uses otherwise.  Raises ScanError
    naming WHERE when HEADER says another refsweep wrote it."""
    written_by = header.get("evidence_sha256")
    if written_by is not None and written_by != _sha(_CODE_TEXT):
        raise ScanError(f"{where}: scan written by other refsweep code "
                        f"(evidence_sha256 {written_by[:12]}, this code "
                        f"{_sha(_CODE_TEXT)[:12]}): scan the tree again")


def _same_tree(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Shards of one tree: the same commit, or the same path without one."""
    if a.get("head") or b.get("head"):
        return bool(a.get("head") == b.get("head"))
    return bool(a.get("tree") == b.get("tree"))


def write_merged(paths: list[Path], out: TextIO) -> int:
    """Merge shard outputs into one scan; returns the number of files."""
    header, files = read_scan(paths)
    header = dict(header, shard="merged", files=len(files))
    out.write(json.dumps(header) + "\n")
    for obj in files:
        out.write(json.dumps(obj) + "\n")
    return len(files)
