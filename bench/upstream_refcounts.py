#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Upstream's own decisions: atomics of an old tree that became refcount_t.

    bench/upstream_refcounts.py --old OLD_TREE --new NEW_TREE \\
        [--list OUT.tsv] [VERDICTS.jsonl]
    bench/upstream_refcounts.py --from-list LIST.tsv VERDICTS.jsonl

Every variable declared refcount_t in NEW_TREE (Linux 7.2) whose key was
declared atomic_t, atomic64_t or atomic_long_t in OLD_TREE (Linux 6.12) is
a counter the kernel's own maintainers judged to be a reference count
since.  Each of them must come out checked (refcount, usage or unknown, and
not flagged wrap-by-design) in OLD_TREE's verdicts.

Keys are the verdict records' (Documentation/classification.rst):
``struct TAG.FIELD``, ``PATH:NAME``, ``PATH:FUNC:NAME``.  Both sides are
found by refsweep's own lexical pass (refsweep/lexical.py), which gives
the scope, the innermost named tag and the function of each declaration:
for the new tree it runs on the file text with the token ``refcount_t``
read as ``atomic_t``, keeping only the declarations that this adds.
Limits: a file-scope or local variable whose file was renamed between the
trees keeps no key in common and is not seen; a member key whose tag is
declared by several unrelated drivers can match across them (both
declarations are written to the list so that a reader can tell).

Writes the list (TSV: key, old type, old decls, new decls) to --list
(--from-list reads such a list instead of the trees) and, given VERDICTS, prints the count, how each came out and every one that is
not checked.  Exit 1 when one is not checked.
"""

import argparse
import collections
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Optional, Protocol

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP))

from refsweep import lexical, scan  # noqa: E402

EXCLUDED = ("tools/", "Documentation/", "scripts/")
REFCOUNT_API = ("include/linux/refcount.h", "include/linux/refcount_types.h",
                "lib/refcount.c")
_REFCOUNT_T = re.compile(r"\brefcount_t\b")
CHECKED = {"refcount", "usage", "unknown"}


class _DeclLike(Protocol):
    """What a key needs from a lexical declaration."""
    @property
    def name(self) -> str: ...
    @property
    def scope(self) -> str: ...
    @property
    def tag(self) -> Optional[str]: ...
    @property
    def function(self) -> Optional[str]: ...


class Found(NamedTuple):
    """One declaration, keyed as in the verdict records."""
    key: str
    type: str
    decl: str           # PATH:LINE


def key_of(path: str, d: _DeclLike) -> str:
    """The verdict-record key of declaration D in PATH."""
    if d.scope == "member":
        return f"{d.tag or 'struct ?'}.{d.name}"
    if d.scope == "function":
        return f"{path}:{d.function}:{d.name}"
    return f"{path}:{d.name}"


def atomic_decls(path: str, text: str) -> list[Found]:
    """The atomic_t/atomic64_t/atomic_long_t variables TEXT declares."""
    return [Found(key_of(path, d), d.type, f"{path}:{d.line}")
            for d in lexical.scan_text(text).decls if not d.extern]


def refcount_decls(path: str, text: str) -> list[Found]:
    """The refcount_t variables TEXT declares (pointers excepted)."""
    if not _REFCOUNT_T.search(text):
        return []
    before = {(d.line, d.name) for d in lexical.scan_text(text).decls}
    as_atomic = lexical.scan_text(_REFCOUNT_T.sub("atomic_t", text))
    return [Found(key_of(path, d), "refcount_t", f"{path}:{d.line}")
            for d in as_atomic.decls
            if (d.line, d.name) not in before and not d.extern]


def _git_grep_files(tree: Path, pattern: str) -> list[str]:
    res = subprocess.run(["git", "-C", str(tree), "grep", "-l", "-w", "-E",
                          pattern, "--", "*.c", "*.h"],
                         capture_output=True, text=True, check=False)
    if res.returncode not in (0, 1):
        raise RuntimeError(f"git grep failed in {tree}: "
                           f"{res.stderr.strip()}")
    return sorted(f for f in res.stdout.splitlines()
                  if not f.startswith(EXCLUDED) and f not in REFCOUNT_API)


def _read(tree: Path, path: str) -> str:
    return (tree / path).read_text(encoding="utf-8", errors="replace")


def tree_refcounts(tree: Path) -> dict[str, list[Found]]:
    """Key -> refcount_t declarations in TREE."""
    out: dict[str, list[Found]] = collections.defaultdict(list)
    for path in _git_grep_files(tree, "refcount_t"):
        for f in refcount_decls(path, _read(tree, path)):
            out[f.key].append(f)
    return dict(out)


def tree_atomics(tree: Path) -> dict[str, list[Found]]:
    """Key -> atomic declarations in TREE (the scan's candidate files)."""
    out: dict[str, list[Found]] = collections.defaultdict(list)
    for path in scan.candidate_files(tree):
        for f in atomic_decls(path, _read(tree, path)):
            out[f.key].append(f)
    return dict(out)


class Converted(NamedTuple):
    """An old atomic variable that the new tree declares refcount_t."""
    key: str
    old_type: str
    old_decls: list[str]
    new_decls: list[str]

    def tsv(self) -> str:
        return "\t".join([self.key, self.old_type, ",".join(self.old_decls),
                          ",".join(self.new_decls)])


def converted(old: dict[str, list[Found]],
              new: dict[str, list[Found]]) -> list[Converted]:
    """Keys declared atomic in OLD and refcount_t in NEW, sorted."""
    out = []
    for key in sorted(set(old) & set(new)):
        types = sorted({f.type for f in old[key]})
        out.append(Converted(key, "/".join(types),
                             [f.decl for f in old[key]],
                             [f.decl for f in new[key]]))
    return out


def read_list(path: Path) -> list[Converted]:
    """A list written by --list."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        cells = line.split("\t")
        if n == 0 and cells[0] == "key":
            continue
        if len(cells) != 4:
            raise ValueError(f"{path}:{n + 1}: {len(cells)} columns, not 4")
        out.append(Converted(cells[0], cells[1], cells[2].split(","),
                             cells[3].split(",")))
    return out


def read_verdicts(path: Path) -> dict[str, dict[str, Any]]:
    """Verdict records by key."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            obj = json.loads(line)
            out[obj["key"]] = obj
    return out


def outcome(obj: Optional[dict[str, Any]]) -> str:
    """checked, wrap-safe (verdict or flag) or missing."""
    if obj is None:
        return "missing"
    if obj.get("wrap_by_design") or obj["verdict"] not in CHECKED:
        return "wrap-safe"
    return "checked"


def report(items: Iterable[Converted],
           found: dict[str, dict[str, Any]]) -> tuple[list[str], int]:
    """Lines to print and the number of items not checked."""
    items = list(items)
    verdict_count: collections.Counter[str] = collections.Counter()
    bad: list[str] = []
    missing: list[str] = []
    for c in items:
        obj = found.get(c.key)
        verdict_count[obj["verdict"] if obj else "missing"] += 1
        how = outcome(obj)
        if how == "wrap-safe":
            assert obj is not None
            flag = ", wrap_by_design" if obj.get("wrap_by_design") else ""
            bad.append(f"  NOT CHECKED {c.key} ({obj['decl']}): "
                       f"{obj['verdict']} by rule {obj.get('rule')}{flag}")
        elif how == "missing":
            missing.append(f"  missing {c.key} ({','.join(c.old_decls)})")
    checked = len(items) - len(bad) - len(missing)
    lines = [f"atomics of the old tree that are refcount_t in the new: "
             f"{len(items)}",
             "verdicts: " + ", ".join(f"{v} {n}" for v, n in
                                      sorted(verdict_count.items())),
             f"checked: {checked}/{len(items)}; not checked: {len(bad)} "
             f"(bar: 0); not in the verdicts: {len(missing)}"]
    return lines + bad + missing, len(bad)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", type=Path, help="e.g. linux-6.12")
    p.add_argument("--new", type=Path, help="e.g. linux-7.2")
    p.add_argument("--list", type=Path, help="write the list here (TSV)")
    p.add_argument("--from-list", type=Path,
                   help="read the list from here instead of the trees")
    p.add_argument("verdicts", type=Path, nargs="?",
                   help="the old tree's verdicts (JSON lines)")
    args = p.parse_args(argv)
    if args.from_list:
        try:
            items = read_list(args.from_list)
        except (OSError, ValueError) as e:
            print(f"upstream_refcounts.py: {e}", file=sys.stderr)
            return 2
        old_name, new_name = "old tree", "new tree"
    else:
        for tree in (args.old, args.new):
            if tree is None or not (tree / ".git").exists():
                print(f"upstream_refcounts.py: {tree}: not a prepared git "
                      "tree (give --old and --new, or --from-list)",
                      file=sys.stderr)
                return 2
        try:
            items = converted(tree_atomics(args.old),
                              tree_refcounts(args.new))
        except RuntimeError as e:
            print(f"upstream_refcounts.py: {e}", file=sys.stderr)
            return 2
        old_name, new_name = args.old.name, args.new.name
    if args.list:
        args.list.parent.mkdir(parents=True, exist_ok=True)
        args.list.write_text(
            "key\told_type\told_decls\tnew_decls\n" +
            "".join(c.tsv() + "\n" for c in items), encoding="utf-8")
    print(f"== upstream decisions: {old_name} atomics that "
          f"{new_name} declares refcount_t")
    if args.verdicts is None:
        print(f"{len(items)} variables" +
              (f" -> {args.list}" if args.list else ""))
        return 0
    try:
        found = read_verdicts(args.verdicts)
    except (OSError, ValueError, KeyError) as e:
        print(f"upstream_refcounts.py: {args.verdicts}: not a verdicts "
              f"file: {e}", file=sys.stderr)
        return 2
    lines, bad = report(items, found)
    print("\n".join(lines))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
