# SPDX-License-Identifier: GPL-2.0-only
"""The committed text of a tree's files, as convert reads it.

Convert plans and judges from the unconverted text (HEAD of the tree or
worktree) even while the working copy holds an earlier round's rewrite.
One reader serves the plan (which counter an operation names) and the
refcount_t contract (what a set writes, how a result is used, what a
function did before an operation).
"""

import re
import subprocess
from pathlib import Path
from typing import NamedTuple, Optional

from refsweep import atomic_api, lexical


class Call(NamedTuple):
    """One call of an atomic operation in a file's stripped code."""
    name: str
    args: list[str]          # top-level arguments, as written
    start: int               # offset of the name in the code
    close: int               # offset of the closing parenthesis

    @property
    def counter(self) -> Optional[str]:
        dec = atomic_api.decode(self.name)
        if dec is None:
            return None
        c = atomic_api.counter_arg(dec, self.args)
        return re.sub(r"\s+", "", c) if c else None


class Source:
    """Files of TREE as committed: raw lines, code without comments and
    string contents (same offsets), function spans."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree
        self._text: dict[str, str] = {}
        self._code: dict[str, str] = {}
        self._starts: dict[str, list[int]] = {}
        self._funcs: dict[str, list[lexical.FuncSpan]] = {}
        self._grep: dict[str, list[tuple[str, int, str]]] = {}
        self._clean: Optional[bool] = None

    def text(self, path: str) -> str:
        if path not in self._text:
            res = subprocess.run(["git", "-C", str(self.tree), "show",
                                  f"HEAD:{path}"], capture_output=True,
                                 check=False)
            self._text[path] = res.stdout.decode("utf-8", "replace") \
                if res.returncode == 0 else ""
        return self._text[path]

    def lines(self, path: str) -> list[str]:
        text = self.text(path)
        return text.splitlines() if text else []

    def code(self, path: str) -> str:
        if path not in self._code:
            self._code[path] = lexical.strip_comments(self.text(path))
            starts = [0]
            for line in self._code[path].split("\n"):
                starts.append(starts[-1] + len(line) + 1)
            self._starts[path] = starts
        return self._code[path]

    def offset(self, path: str, line: int) -> int:
        """Offset in code(PATH) of the start of 1-based LINE."""
        self.code(path)
        starts = self._starts[path]
        return starts[min(max(line, 1), len(starts)) - 1]

    def line_of(self, path: str, offset: int) -> int:
        self.code(path)
        starts = self._starts[path]
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def functions(self, path: str) -> list[lexical.FuncSpan]:
        if path not in self._funcs:
            self._funcs[path] = lexical.scan_text(self.text(path)).functions
        return self._funcs[path]

    def function_span(self, path: str, line: int
                      ) -> Optional[tuple[int, int]]:
        """(start, end) offsets in code(PATH) of the body of the function
        containing LINE."""
        for f in self.functions(path):
            if f.body_start <= line <= f.body_end:
                return (self.offset(path, f.body_start),
                        self.offset(path, f.body_end + 1))
        return None

    def calls(self, path: str, line: int, op: str) -> list[Call]:
        """Every call of OP that starts on LINE (1-based)."""
        code = self.code(path)
        lo = self.offset(path, line)
        hi = self.offset(path, line + 1)
        out = []
        for m in re.finditer(r"\b" + re.escape(op) + r"\s*\(", code[lo:hi]):
            open_at = lo + m.end() - 1
            close = lexical.matching_paren(code, open_at)
            if close < 0:
                continue
            out.append(Call(op, atomic_api.split_args(code[open_at + 1:close]),
                            lo + m.start(), close))
        return out

    def grep(self, fixed: str, word: bool = False
             ) -> list[tuple[str, int, str]]:
        """(path, line, text) of every line of the tree's C files that
        holds the string FIXED (as a word: WORD).  The committed text; the
        working copy's when it is clean (three times faster)."""
        key = f"{fixed}\0{word}"
        if key not in self._grep:
            if self._clean is None:
                res = subprocess.run(["git", "-C", str(self.tree), "status",
                                      "--porcelain", "-uno"],
                                     capture_output=True, text=True,
                                     check=False)
                self._clean = res.returncode == 0 and not res.stdout.strip()
            rev = [] if self._clean else ["HEAD"]
            res = subprocess.run(["git", "-C", str(self.tree), "grep", "-n",
                                  "-F", *(["-w"] if word else []), "-e",
                                  fixed, *rev, "--", "*.c", "*.h"],
                                 capture_output=True, text=True,
                                 errors="replace", check=False)
            out = []
            for row in res.stdout.splitlines():
                if rev:
                    row = row.split(":", 1)[1]
                parts = row.split(":", 2)
                if len(parts) == 3 and parts[1].isdigit():
                    out.append((parts[0], int(parts[1]), parts[2]))
            self._grep[key] = out
        return self._grep[key]


def split_at(at: str) -> tuple[str, int]:
    """"PATH:LINE" as (PATH, LINE)."""
    path, _, line = at.rpartition(":")
    return path, int(line)
