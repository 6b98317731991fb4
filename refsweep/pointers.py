# SPDX-License-Identifier: GPL-2.0-only
"""Counters whose storage is allocated behind a pointer.

``static atomic_t *ip_idents`` and a member ``atomic_t *counters`` filled
by ``kcalloc()`` hold counters as real as any declared ``atomic_t``, and a
conversion must change their pointer type too.  A file-scope or member
pointer to an atomic type becomes a variable of its own (keyed as the
pointer would be) when some assignment gives it freshly allocated storage:
an allocator call, directly or through a local that an allocator call
filled.  A pointer only ever aimed at other variables' counters
(``ring->sched_score = score``) is an alias, not storage, and is left out:
its operations belong to the variables it points to.
"""

import re
from typing import Any, NamedTuple, Optional

from refsweep import lexical
from refsweep.sources import Sources

Record = dict[str, Any]

_POINTER_DECL = re.compile(
    r"\batomic(?:64|_long)?_t\s*(?:__percpu\s*|__rcu\s*|const\s*)*"
    r"(\*)\s*(?:__percpu\s*|__rcu\s*|const\s*)*[A-Za-z_]\w*"
    r"(?:\s+__\w+(?:\([^()]*\))?)*\s*[;,=\[]")
ALLOC = r"(?:\w*alloc\w*|kmemdup\w*|\w*_zalloc\w*)"
_CAST = r"(?:\(\s*[\w\s]*\*\s*\)\s*)?"


class PointerDecl(NamedTuple):
    """A pointer to an atomic type, declared at file scope or as a member."""
    name: str
    type: str
    line: int
    scope: str              # "file" or "member"
    tag: Optional[str]


def declarations(code: str) -> list[PointerDecl]:
    """File-scope and member pointers to atomics declared in CODE."""
    stars = [m.start(1) for m in _POINTER_DECL.finditer(code)]
    if not stars:
        return []
    # The lexical pass reads plain declarations only: hide the '*' so that
    # it reports these with their scope and struct tag, lines unchanged.
    chars = list(code)
    for at in stars:
        chars[at] = " "
    star_lines = {code.count("\n", 0, at) + 1 for at in stars}
    facts = lexical.scan_text("".join(chars))
    return [PointerDecl(d.name, d.type, d.line, d.scope, d.tag)
            for d in facts.decls
            if d.line in star_lines and d.scope in ("file", "member")
            and not d.extern and (d.scope == "file" or d.tag)]


def _allocated_global(code: str, name: str) -> bool:
    word = re.escape(name)
    if re.search(r"\b" + word + r"\s*=\s*" + _CAST + ALLOC + r"\s*\(", code):
        return True
    for m in re.finditer(r"\b" + word + r"\s*=\s*" + _CAST +
                         r"([A-Za-z_]\w*)\s*;", code):
        local = re.escape(m.group(1))
        if re.search(r"\b" + local + r"\s*=\s*" + _CAST + ALLOC + r"\s*\(",
                     code):
            return True
    return False


_ASSIGNED_ALLOC = re.compile(r"(?:->|\.)\s*(\w+)\s*=(?!=)\s*" + _CAST +
                             ALLOC + r"\s*\(")


def file_facts(code: str) -> Record:
    """What one file (comment-stripped CODE) says about pointer-held
    counters, kept with the file's scan record: its pointer declarations
    (name, type, line, scope, tag, and for a file-scope one whether this
    file allocates its storage) and the members it assigns an allocation
    to."""
    decls: list[list[Any]] = []
    if "*" in code and _POINTER_DECL.search(code):
        decls = [[d.name, d.type, d.line, d.scope, d.tag,
                  d.scope == "file" and _allocated_global(code, d.name)]
                 for d in declarations(code)]
    return {"pointer_decls": decls,
            "allocated_members": sorted({m.group(1) for m in
                                         _ASSIGNED_ALLOC.finditer(code)})}


def find(files: list[Record],
         sources: Sources) -> list[tuple[str, PointerDecl]]:
    """(path, declaration) of every pointer whose storage is allocated.
    The per-file facts come from the scan records (file_facts), or from
    the file itself for a record that lacks them."""
    found: list[tuple[str, PointerDecl]] = []
    members: dict[str, list[tuple[str, PointerDecl]]] = {}
    allocated: set[str] = set()
    for f in files:
        facts = f if "pointer_decls" in f else \
            file_facts(sources.code(f["path"]))
        for name, type_, line, scope, tag, alloc in facts["pointer_decls"]:
            d = PointerDecl(name, type_, line, scope, tag)
            if scope == "file":
                if alloc:
                    found.append((f["path"], d))
            else:
                members.setdefault(name, []).append((f["path"], d))
        # The allocation is looked for in the scanned files: code that
        # fills such a member also operates on the counters (or declares
        # them).
        allocated.update(facts["allocated_members"])
    for name in sorted(allocated & set(members)):
        found.extend(members[name])
    return found
