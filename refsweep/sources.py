# SPDX-License-Identifier: GPL-2.0-only
"""Source text of a tree's files, read once per run, and git grep over it.

The resolve stage looks past one file (helpers, macros, allocations, wrap
evidence) and reads the same few files many times; this keeps one copy.
Without a tree (evidence from a scan alone) every file reads as empty, so
the stages that need text find nothing and decide nothing.
"""

import bisect
import concurrent.futures
import itertools
import multiprocessing
import re
import subprocess
from array import array
from pathlib import Path
from typing import Optional

from refsweep import atomic_api, lexical, tree_grep

_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


class ResolveError(Exception):
    """Attribution cannot run; the message names the problem."""


def git_grep(tree: Path, args: list[str]
             ) -> "subprocess.CompletedProcess[str]":
    """git grep ARGS over TREE's C files; exit 1 (no match) is no error,
    anything else is: a silent empty result would lose evidence."""
    if "--" not in args:
        args = [*args, "--", "*.c", "*.h"]
    res = subprocess.run(["git", "-C", str(tree), "grep", *args, ":!tools",
                          ":!Documentation", ":!scripts"],
                         capture_output=True, text=True, check=False,
                         errors="replace")
    if res.returncode not in (0, 1):
        msg = (res.stderr.strip().splitlines() or ["no message"])[-1]
        raise ResolveError(f"git grep failed in {tree}: {msg}")
    return res


def _line_starts(code: str) -> "array[int]":
    """Offset of each line's start; built in C (map, accumulate)."""
    lines = code.split("\n")
    return array("l", itertools.accumulate(
        map((1).__add__, map(len, lines[:-1])), initial=0))


def _read_text(tree: Path, path: str) -> str:
    """PATH of TREE as text; empty if it cannot be read."""
    try:
        return (tree / path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _stripped(tree: Path, paths: list[str]
              ) -> dict[str, tuple[str, "array[int]"]]:
    """The comment-stripped text of PATHS of TREE and its line starts
    (Sources.prefetch)."""
    out = {}
    for path in paths:
        code = lexical.strip_comments(_read_text(tree, path))
        out[path] = code, _line_starts(code)
    return out


class Sources:
    """Cached raw and comment-stripped text of the files of TREE."""

    def __init__(self, tree: Optional[Path]) -> None:
        self.tree = tree
        self._pending: Optional[
            "concurrent.futures.Future[dict[str, tuple[str, array[int]]]]"
        ] = None
        self._raw: dict[str, str] = {}
        self._code: dict[str, str] = {}
        self._starts: dict[str, "array[int]"] = {}
        # Content ids of the tree's files, per glob set: read once per run.
        self._ids: dict[tuple[str, ...], Optional[dict[str, str]]] = {}

    def prefetch(self, paths: list[str]) -> None:
        """Strip the comments of PATHS in another process while this one
        scans: on two cores that takes the largest single cost of the
        resolve stage off its path.  Forks, so call it before any thread
        is started."""
        if self.tree is None or not paths:
            return
        try:
            pool = concurrent.futures.ProcessPoolExecutor(
                1, mp_context=multiprocessing.get_context("fork"))
            self._pending = pool.submit(_stripped, self.tree, paths)
            pool.shutdown(wait=False)
        except (OSError, NotImplementedError):
            self._pending = None    # no processes here: read when needed

    def _take_prefetched(self) -> None:
        if self._pending is None:
            return
        pending, self._pending = self._pending, None
        try:
            prefetched = pending.result()
        except Exception:   # noqa: BLE001 (a killed worker, no memory...)
            # Only a head start is lost: code() strips each file itself,
            # and a real problem with a file shows there.
            return
        for path, (code, starts) in prefetched.items():
            if path not in self._code:
                self._code[path] = code
                self._starts[path] = starts

    def raw(self, path: str) -> str:
        """The file as it is."""
        if path not in self._raw:
            self._raw[path] = "" if self.tree is None else \
                _read_text(self.tree, path)
        return self._raw[path]

    def code(self, path: str) -> str:
        """Comments and literal contents blanked, offsets kept.  The raw
        text is kept too: the comments are read for the same files."""
        if path not in self._code:
            self._take_prefetched()
        if path not in self._code:
            self._code[path] = lexical.strip_comments(self.raw(path))
        return self._code[path]

    def offset(self, path: str, line: int) -> int:
        """Offset of the start of 1-based LINE in PATH's text."""
        if path not in self._starts:
            code = self.code(path)      # may bring the prefetched starts
            if path not in self._starts:
                self._starts[path] = _line_starts(code)
        starts = self._starts[path]
        return starts[min(max(line, 1), len(starts)) - 1]

    def line_of(self, path: str, offset: int) -> int:
        self.offset(path, 1)
        return bisect.bisect_right(self._starts[path], offset)

    def lines(self, path: str, first: int, last: int) -> str:
        """Lines FIRST..LAST (1-based, inclusive) of the stripped code."""
        code = self.code(path)
        return code[self.offset(path, first):self.offset(path, last + 1)]

    def _span(self, path: str, first: int, last: int
              ) -> Optional[tuple[int, int]]:
        """Offsets of lines FIRST..LAST (1-based, inclusive, clamped to
        the file) without the last newline, or None when none is left.
        Stripping keeps every offset, so the raw and the stripped text
        share these."""
        self.offset(path, 1)
        starts = self._starts[path]
        first, last = max(first, 1), min(last, len(starts))
        if first > last:
            return None
        end = starts[last] - 1 if last < len(starts) else \
            len(self.code(path))
        return starts[first - 1], end

    def raw_lines(self, path: str, first: int, last: int) -> list[str]:
        """Lines FIRST..LAST (1-based, inclusive) as they are."""
        span = self._span(path, first, last)
        return self.raw(path)[span[0]:span[1]].split("\n") if span else []

    def commented(self, path: str, line: int) -> bool:
        """Does LINE (1-based) of PATH hold a comment or a literal?"""
        span = self._span(path, line, line)
        if span is None:
            return False
        start, end = span
        return self.raw(path)[start:end] != self.code(path)[start:end]

    def grep_lines(self, words: list[str],
                   globs: tuple[str, ...] = ("*.c", "*.h")
                   ) -> list[tuple[str, int, str]]:
        """(path, line, text) of every line of the tree's C files holding
        one of WORDS as a word, sorted.  One GNU grep matches all words in
        one pass (git grep tries each pattern on each line in turn); only
        files changed since the last grep for the same words are read."""
        if self.tree is None or not words:
            return []
        try:
            if globs not in self._ids:
                self._ids[globs] = tree_grep.file_ids(self.tree, globs)
            return tree_grep.grep(self.tree, ["-wF"], sorted(set(words)),
                                  globs, ids=self._ids[globs])
        except tree_grep.GrepError as e:
            raise ResolveError(str(e)) from e

    def grep_words(self, words: list[str]) -> list[tuple[str, int]]:
        """(path, line) of every line of the tree's C files holding a
        WORD."""
        return [(p, n) for p, n, _t in self.grep_lines(words)]


def call_args(code: str, open_at: int) -> Optional[list[str]]:
    """Arguments of the call whose '(' is at OPEN_AT, or None."""
    close = lexical.matching_paren(code, open_at)
    if close < 0:
        return None
    return atomic_api.split_args(code[open_at + 1:close])


def calls_in(code: str) -> list[tuple[str, int, list[str]]]:
    """Every call in CODE: (callee, offset of the name, arguments)."""
    out = []
    for m in _CALL.finditer(code):
        args = call_args(code, m.end() - 1)
        if args is not None:
            out.append((m.group(1), m.start(), args))
    return out


def strip_expr(expr: str) -> str:
    """EXPR without spaces, outer parentheses and pointer casts."""
    expr = re.sub(r"\s+", "", expr)
    prev = None
    while prev != expr:
        prev = expr
        expr = re.sub(r"^\((?:const|volatile|struct\w+|\w+)*\*+\)", "", expr)
        if expr.startswith("(") and lexical.matching_paren(expr, 0) == \
                len(expr) - 1:
            expr = expr[1:-1]
    return expr
