#!/usr/bin/python3
"""Draw a reproducible random sample of ``atomic_t`` variable declarations.

The sample is the input of the hand-labelled refsweep benchmark
(``bench/labels.tsv``).  It is drawn *only* from the kernel source: no
classifier output is consulted, so the sampled variables are "not chosen".

Method
------
1. ``git -C TREE grep -n -w -E 'atomic_t'`` lists every line mentioning the
   word ``atomic_t`` (``-w`` keeps ``atomic64_t``/``atomic_long_t`` out).
2. Lines under ``tools/`` and ``Documentation/`` are dropped.
3. A line is kept only if it *declares* one or more ``atomic_t`` objects::

       [qualifiers] atomic_t DECL [, DECL ...] ;      (or a trailing "=" / "{"
                                                       opening a multi-line
                                                       initializer, or a
                                                       trailing "," or nothing
                                                       when it continues)

   where qualifiers are storage/attribute words such as ``static``,
   ``volatile``, ``__read_mostly`` and DECL is ``NAME``, ``NAME[...]``,
   optionally followed by ``__attribute``-style words and ``= init``
   (``__private``/``__percpu``/``__rcu`` between ``atomic_t`` and NAME are skipped).
   This covers struct/union members, globals, statics, locals and arrays;
   ``atomic_t a, b;`` yields one row per name.  Excluded by construction:
   pointers (``atomic_t *p``), function parameters and prototypes, casts,
   ``sizeof(atomic_t)``, ``typedef`` and preprocessor lines (including
   macro-continuation lines ending in ``\\``), comments, ``extern``
   declarations (the definition is counted where it is) and macro-wrapped
   declarations such as ``DEFINE_PER_CPU(atomic_t, x)``.
   Known limits (accepted for a benchmark sample): names on the
   continuation line of a multi-line declarator list (a line without the
   word ``atomic_t``) are not seen; declarations inside ``#if 0`` blocks
   are counted like any other line.
4. Candidate rows of the requested types (``--types``, default ``atomic_t``
   alone as for the first sample) are sorted by type order then position;
   rows whose ``PATH:LINE`` is the first column of an ``--exclude`` file
   (an earlier labels file) are dropped, so a new sample shares no
   variable with an old one; then ``random.Random(seed).sample`` picks
   ``size`` of them.  The sample is printed sorted as TSV
   ``PATH:LINE<TAB>NAME``, with a third column ``TYPE`` when more than one
   type is drawn.

The first sample (``bench/labels.tsv``)::

    sample_atomics.py --tree linux-6.12 --seed 6120 --size 130

The second (``bench/labels-2.tsv``)::

    sample_atomics.py --tree linux-6.12 --seed 81203 --size 160 \\
        --types atomic_t,atomic64_t,atomic_long_t --exclude bench/labels.tsv

Usage: ``sample_atomics.py --tree DIR [--seed N] [--size N] [--types T,..]
[--exclude LABELS.tsv]``
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
from typing import Iterator, List, NamedTuple, Optional, Sequence

DEFAULT_SEED = 6120
DEFAULT_SIZE = 130
EXCLUDED_TOP_DIRS = ("tools/", "Documentation/")

# Words allowed before "atomic_t" on a declaration line.
_QUAL = r"(?:static|volatile|const|register|__\w+(?:\([^()]*\))?)"
ATOMIC_TYPES = ("atomic_t", "atomic64_t", "atomic_long_t")


def _head_re(type_name: str) -> "re.Pattern[str]":
    return re.compile(
        r"^\s*(?:" + _QUAL + r"\s+)*" + type_name
        + r"\s+(?:(?:__private|__percpu|__rcu)\s+)*(?P<rest>.*)$")


_HEAD_RES = {t: _head_re(t) for t in ATOMIC_TYPES}
# One declarator: NAME, optional [dims], optional attribute words, optional
# initializer (checked separately).
_DECL_RE = re.compile(
    r"^(?P<name>[A-Za-z_]\w*)"
    r"(?:\s*\[[^\]]*\])*"
    r"(?:\s+__\w+(?:\s*\((?:[^()]|\([^()]*\))*\))?)*"
    r"\s*(?P<init>=.*)?$"
)
_KEYWORDS = frozenset({"typedef", "extern", "return", "sizeof", "struct", "union"})


class Decl(NamedTuple):
    """One sampled variable: where it is declared and its name."""

    path: str
    line: int
    name: str

    def tsv(self) -> str:
        return f"{self.path}:{self.line}\t{self.name}"

    @property
    def at(self) -> str:
        return f"{self.path}:{self.line}"


def _strip_comments(text: str) -> str:
    """Remove ``/* ... */`` and ``// ...`` comments from a single line."""
    text = re.sub(r"/\*.*?\*/", " ", text)
    text = re.sub(r"/\*.*$", " ", text)
    return re.sub(r"//.*$", " ", text).strip()


def _split_top_level(text: str) -> List[str]:
    """Split on commas that are not inside (), [] or {}."""
    parts: List[str] = []
    depth = 0
    cur: List[str] = []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur).strip())
    return parts


def declared_names(code: str, type_name: str = "atomic_t") -> List[str]:
    """Return the TYPE_NAME variable names declared on ``code`` (may be [])."""
    if code.rstrip().endswith("\\"):
        return []  # macro body
    code = _strip_comments(code)
    if not code or code.startswith("#"):
        return []
    head = _HEAD_RES[type_name].match(code)
    if head is None:
        return []
    before = code[: head.start("rest")]
    if any(word in _KEYWORDS for word in re.findall(r"\w+", before)):
        return []
    rest = head.group("rest").strip()
    if rest.endswith(";"):
        rest = rest[:-1].rstrip()
    elif rest.endswith(","):
        rest = rest[:-1].rstrip()  # declarator list continues on next line
    elif rest.endswith("{") or rest.endswith("="):
        pass  # multi-line initializer follows
    # else: the declaration continues on the next line (attributes,
    # #ifdef'd initializer); prototypes and expressions still fail the
    # per-declarator check below.
    names: List[str] = []
    for part in _split_top_level(rest):
        m = _DECL_RE.match(part)
        if m is None:
            return []  # pointer, function, cast or unparsable: not a plain decl
        if m.group("name") in _KEYWORDS:
            return []
        names.append(m.group("name"))
    return names


def _parse_grep_line(raw: str) -> Optional[tuple[str, int, str]]:
    """Split ``PATH:LINE:CODE`` as printed by ``git grep -n``."""
    m = re.match(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<code>.*)$", raw)
    if m is None:
        return None
    return m.group("path"), int(m.group("line")), m.group("code")


def candidates(tree: str, type_name: str = "atomic_t") -> List[Decl]:
    """All TYPE_NAME declarations in ``tree``, sorted."""
    proc = subprocess.run(
        ["git", "-C", tree, "grep", "-n", "-w", "-E", type_name],
        check=True,
        capture_output=True,
        text=True,
        errors="replace",
    )
    out: List[Decl] = []
    for raw in proc.stdout.splitlines():
        parsed = _parse_grep_line(raw)
        if parsed is None:
            continue
        path, line, code = parsed
        if path.startswith(EXCLUDED_TOP_DIRS):
            continue
        for name in declared_names(code, type_name):
            out.append(Decl(path, line, name))
    out.sort()
    return out


def sample(decls: Sequence[Decl], seed: int, size: int) -> List[Decl]:
    """Reproducible sample of ``size`` rows from sorted ``decls``."""
    rng = random.Random(seed)
    return sorted(rng.sample(list(decls), min(size, len(decls))))


def excluded_decls(labels: Optional[str]) -> set[str]:
    """The PATH:LINE first column of a labels file (header and # skipped)."""
    if labels is None:
        return set()
    out: set[str] = set()
    with open(labels, encoding="utf-8") as f:
        for line in f.read().splitlines()[1:]:
            if line.strip() and not line.startswith("#"):
                out.add(line.split("\t", 1)[0])
    return out


def iter_rows(tree: str, seed: int, size: int,
              types: Sequence[str] = ("atomic_t",),
              exclude: Optional[str] = None) -> Iterator[str]:
    skip = excluded_decls(exclude)
    pool: List[tuple[Decl, str]] = []
    for type_name in types:
        pool.extend((d, type_name) for d in candidates(tree, type_name)
                    if d.at not in skip)
    if len(types) == 1:
        # One type: exactly the draw of the first sample (seed 6120).
        for decl in sample([d for d, _ in pool], seed, size):
            yield decl.tsv()
        return
    rng = random.Random(seed)
    for decl, type_name in sorted(rng.sample(pool, min(size, len(pool)))):
        yield f"{decl.tsv()}\t{type_name}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", required=True, help="kernel git tree")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--size", type=int, default=DEFAULT_SIZE)
    ap.add_argument("--types", default="atomic_t",
                    help="comma-separated types to draw from "
                    f"(any of {', '.join(ATOMIC_TYPES)})")
    ap.add_argument("--exclude", metavar="LABELS.tsv",
                    help="leave out the PATH:LINE rows of an earlier sample")
    ap.add_argument("--all", action="store_true",
                    help="print every candidate instead of a sample (debug)")
    args = ap.parse_args(argv)
    types = [t for t in args.types.split(",") if t]
    bad = [t for t in types if t not in ATOMIC_TYPES]
    if bad or not types:
        print(f"sample_atomics.py: unknown type(s) {', '.join(bad) or '(none)'}"
              f"; choose from {', '.join(ATOMIC_TYPES)}", file=sys.stderr)
        return 2
    if args.all:
        for type_name in types:
            for decl in candidates(args.tree, type_name):
                print(decl.tsv())
        return 0
    try:
        rows = list(iter_rows(args.tree, args.seed, args.size, types,
                              args.exclude))
    except (OSError, subprocess.CalledProcessError) as err:
        print(f"sample_atomics.py: {err}", file=sys.stderr)
        return 2
    for row in rows:
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
