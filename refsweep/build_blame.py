# SPDX-License-Identifier: GPL-2.0-only
"""Which converted variables a compile error of the whole churn names.

``check --whole`` compiles every file the churn touches.  An error the
unpatched tree does not have means some group was converted in one place
and not in another: an ``ATOMIC_INIT()`` in a macro or in a nested
designated initializer that spatch never saw (``-Wmissing-braces``, since
an unchecked atomic wraps a plain one), a pointer passed on to an API that
takes ``atomic_t *``, a ``cond ? &a : &b`` with one side converted.  The
error names the culprit in its source line, in the lines of the macros it
was expanded from, or (for an initializer, where GCC only points at the
outer brace) in the designators of the initializer and of the macros it
uses.  Every converted variable so named, and visible in the object's
preprocessed source (its struct defined there, or its file included), is
blamed; ``convert --blocked`` then leaves its group unconverted.  Blaming
too much keeps a counter checked, which is the safe side; an error that
names nothing is reported as unexplained.
"""

import os
import re
from pathlib import Path
from typing import Any, NamedTuple, Optional

from refsweep import convert

_IDENT = re.compile(r"[A-Za-z_]\w*")
_DESIGNATOR = re.compile(r"\.\s*(\w+)\s*=\s*([A-Za-z_]\w*)")
_INIT_MACRO = re.compile(r"\bATOMIC(?:64|_LONG)?_INIT\b")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)
_TAG = re.compile(r"\b(struct|union)\s+(\w+)\s*\{")
_MARKER = re.compile(r'^# \d+ "([^"<][^"]*)"', re.M)
# Errors about an initializer, where GCC points at the outer brace.
_INITIALIZER_ERROR = re.compile(r"missing braces|excess elements|"
                                r"initiali[sz]")
# A statement the error points into may begin a few lines above.
_CONTEXT_LINES = 3


class Unit(NamedTuple):
    """What one object's preprocessed source (``make FILE.i``) shows."""
    files: list[str]        # the files it read, in order, tree-relative
    tags: set[str]          # "struct foo", "union bar" defined in it


def read_unit(wt: Path, i_file: Path) -> Unit:
    text = i_file.read_text(encoding="utf-8", errors="replace")
    files: list[str] = []
    seen: set[str] = set()
    for f in _MARKER.findall(text):
        rel = os.path.relpath(f, wt) if f.startswith("/") else f
        if rel not in seen and not rel.startswith(".."):
            seen.add(rel)
            files.append(rel)
    return Unit(files, {f"{k} {t}" for k, t in _TAG.findall(text)})


def names_index(variables: list[str]) -> dict[str, list[str]]:
    """Variable name (member field or variable) -> converted keys."""
    out: dict[str, list[str]] = {}
    for key in variables:
        out.setdefault(convert.variable_name(key), []).append(key)
    return out


def _lines(wt: Path, path: str, cache: dict[str, list[str]]) -> list[str]:
    if path not in cache:
        try:
            cache[path] = (wt / path).read_text(
                encoding="utf-8", errors="replace").splitlines()
        except OSError:
            cache[path] = []
    return cache[path]


def file_macros(wt: Path, path: str, cache: dict[str, list[str]],
                table: dict[str, dict[str, str]]) -> dict[str, str]:
    """The #defines of PATH: name -> text, continuation lines joined."""
    if path not in table:
        lines = _lines(wt, path, cache)
        out: dict[str, str] = {}
        i = 0
        while i < len(lines):
            m = _DEFINE.match(lines[i])
            j = i + 1
            while lines[j - 1].rstrip().endswith("\\") and j < len(lines):
                j += 1
            if m and m.group(1) not in out:
                out[m.group(1)] = "\n".join(lines[i:j])
            i = j
        table[path] = out
    return table[path]


def unit_macros(wt: Path, unit: Unit, cache: dict[str, list[str]],
                table: dict[str, dict[str, str]]) -> dict[str, tuple[str, str]]:
    """Every macro the unit's files define: name -> (file, text)."""
    out: dict[str, tuple[str, str]] = {}
    for path in unit.files:
        for name, text in file_macros(wt, path, cache, table).items():
            out.setdefault(name, (path, text))
    return out


def braced_text(lines: list[str], line: int, col: int,
                limit: int = 400) -> str:
    """The text from LINE:COL (1-based) to the brace that closes the first
    brace at or after it (the whole initializer), at most LIMIT lines."""
    text = "\n".join(lines[line - 1:line - 1 + limit])
    start = max(col - 1, 0)
    brace = text.find("{", start)
    if brace < 0:
        return text[start:start + 2000]
    depth = 0
    for i in range(brace, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return text[start:]


def _upper_names(text: str) -> set[str]:
    return {t for t in _IDENT.findall(text) if t.isupper()}


def reached_macros(text: str, macros: dict[str, tuple[str, str]],
                   depth: int = 4) -> dict[str, tuple[str, str]]:
    """The macros TEXT uses, and those they use, to DEPTH levels."""
    out: dict[str, tuple[str, str]] = {}
    level = _upper_names(text)
    for _ in range(depth):
        level = {n for n in level - out.keys() if n in macros}
        if not level:
            break
        for n in level:
            out[n] = macros[n]
        level = {t for n in level for t in _upper_names(macros[n][1])}
    return out


def init_macros(names: set[str], macros: dict[str, tuple[str, str]],
                depth: int = 4) -> set[str]:
    """Those of NAMES that are ATOMIC*_INIT or expand (through DEPTH
    levels) to it."""
    out = set()
    for name in names:
        if _INIT_MACRO.fullmatch(name) or any(
                _INIT_MACRO.search(text) for _, text in
                reached_macros(name, macros, depth).values()):
            out.add(name)
    return out


def initializer_culprits(text: str, macros: dict[str, tuple[str, str]],
                         wt: Path, members: list[str],
                         cache: dict[str, list[str]]) -> set[str]:
    """Converted MEMBERS that the initializer TEXT, or a macro it uses,
    initializes with ATOMIC*_INIT() (or a macro expanding to it): by
    designator (``.data = WORK_DATA_INIT()``), or positionally
    (``OSQ_LOCK_UNLOCKED`` is ``{ ATOMIC_INIT(...) }``: then the
    members of the structs the macro's own file defines)."""
    used = reached_macros(text, macros)
    texts = [text] + [t for _, t in used.values()]
    pairs = [p for t in texts for p in _DESIGNATOR.findall(t)]
    inits = init_macros({v for _, v in pairs}, macros)
    named = {m for m, value in pairs if value in inits}
    out = {k for k in members if k.rsplit(".", 1)[1] in named}
    for path, body in used.values():
        if not re.search(r"\{\s*" + _INIT_MACRO.pattern, body):
            continue
        ftext = "\n".join(_lines(wt, path, cache))
        for key in members:
            m = re.match(r"^(struct|union) (\w+)\.", key)
            if m and re.search(rf"\b{m.group(1)}\s+{m.group(2)}\s*\{{",
                               ftext):
                out.add(key)
    return out


def visible(key: str, unit: Optional[Unit]) -> bool:
    """Whether KEY can be what the object's code refers to (without a
    preprocessed unit: any key may be, the safe side)."""
    if unit is None:
        return True
    if key.startswith(("struct ", "union ")):
        return key.rsplit(".", 1)[0] in unit.tags
    return key.split(":", 1)[0] in unit.files


def blame(wt: Path, diag: dict[str, Any], names: dict[str, list[str]],
          unit: Optional[Unit], macros: dict[str, tuple[str, str]],
          cache: dict[str, list[str]]) -> list[str]:
    """Converted keys that the compile error DIAG names.

    DIAG: {"file", "line", "col", "msg", "expansions": [(file, line)]}.
    A member key is named by ``.field`` or ``->field``, a variable key by
    its bare name, in the lines of the error (and the few above it: a
    statement can span lines) and of the macros it was expanded from.
    """
    texts = []
    lines = _lines(wt, diag["file"], cache)
    line = diag["line"]
    texts.append("\n".join(lines[max(line - 1 - _CONTEXT_LINES, 0):line]))
    for path, ln in diag.get("expansions", []):
        exp = _lines(wt, path, cache)
        if 0 < ln <= len(exp):
            texts.append(exp[ln - 1])
    keys: set[str] = set()
    for text in texts:
        for name in set(_IDENT.findall(text)) & names.keys():
            for key in names[name]:
                member = key.startswith(("struct ", "union "))
                if not member or re.search(r"(\.|->)\s*" + re.escape(name)
                                           + r"\b", text):
                    keys.add(key)
    if _INITIALIZER_ERROR.search(diag["msg"]) and 0 < line <= len(lines):
        init = braced_text(lines, line, diag.get("col", 1))
        members = [k for ks in names.values() for k in ks
                   if k.startswith(("struct ", "union "))]
        keys |= initializer_culprits(init, macros, wt, members, cache)
    return sorted(k for k in keys if visible(k, unit))
