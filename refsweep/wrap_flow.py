# SPDX-License-Identifier: GPL-2.0-only
"""Follow a counter's value past the operation that produced it.

wrap_design.py reads the signs that a counter wraps on purpose; many sit
not at the operation but one or more steps later: the new value of
``atomic_inc_return()`` kept in a local that is taken ``% ARRAY_SIZE()``
three lines on, a read kept in a ``u16`` local, a getter
(``rt_genid_ipv4()``) whose callers in another file store the value in a
cached object and compare the stored copy with it, or a read that is one
side of ``done - wakeups < batch``.  This module finds every *value
site* of an operation, an expression that holds the counter's value:

- the operation itself;
- every later read of a plain local it was assigned to (``cur =
  atomic_inc_return(&c)``, a declaration's initialiser too), also through
  further locals (``count = cur + 1``), up to three assignments on;
- every call of a function that returns it as is (``return
  atomic_read(&net->rt_genid);``), in any file of the tree, and from
  there on the same way, two calls deep;

and at each site what the code does with the value (``Site.uses``):
reduced modulo or masked (``%``, a binary ``&``, or an argument of a
function-like macro whose body masks that parameter), truncated (a cast
to or a local of 8 or 16 bits), one side of a difference compared with a
bound or with zero whose other side is not a constant, compared for
equality with another expression, or stored in a member (a copy).

Only text is read (the comment-stripped code of Sources), per function,
as the other resolve-stage passes do; callers of getters are found with
one grep over the tree for all getter names of a run.
"""

import re
from typing import NamedTuple, Optional

from refsweep import lexical
from refsweep.sources import Sources

# How far a value is followed: assignments to locals, getter calls.
MAX_LOCAL_STEPS = 3
MAX_GETTER_STEPS = 2
# A getter with more callers than this is an accessor of general use,
# not a generation number's reader; its callers are not followed.
MAX_GETTER_CALLERS = 60

_IDENT = re.compile(r"[A-Za-z_]\w*$")
_CASTS = re.compile(
    r"(?:\(\s*(?:(?:unsigned|signed|const|volatile)\s+)*(?:long\s+long|long|"
    r"int|short|char|bool|u8|u16|u32|u64|s8|s16|s32|s64|__u8|__u16|__u32|"
    r"__u64|__s8|__s16|__s32|__s64|size_t|ssize_t|__be16|__le16|__be32|"
    r"__le32)?\s*\)\s*)+$")
_NARROW_CAST = re.compile(
    r"\(\s*(?:u8|u16|s8|s16|__u8|__u16|__s8|__s16|__be16|__le16|unsigned\s+"
    r"short|unsigned\s+char|short|char|signed\s+char)\s*\)\s*\(*\s*$")
_NARROW_TYPE = (r"(?:u8|u16|s8|s16|__u8|__u16|__s8|__s16|__be16|__le16|"
                r"unsigned\s+short|unsigned\s+char|short|unsigned\s+short\s+"
                r"int)")
_RELOP = r"(==|!=|<=|>=|<(?![<=])|>(?![>=]))"
# An operand on the other side of a comparison or a difference: a name,
# a member chain, an index, a call with its arguments (one level).
_OPERAND = (r"(?:[A-Za-z_]\w*(?:\s*\((?:[^()]|\([^()]*\))*\))?"
            r"(?:\s*(?:->|\.)\s*\w+|\s*\[[^\]]*\])*)")
_AFTER_DIFF = re.compile(r"^\s*-\s*(" + _OPERAND + r")\s*\)*\s*" + _RELOP)
_AFTER_CMP = re.compile(r"^\s*\)*\s*(==|!=)\s*\(*\s*(" + _OPERAND + r")")
_BEFORE_CMP = re.compile(r"(" + _OPERAND + r")\s*\)*\s*(==|!=)\s*\(*\s*$")
_BEFORE_DIFF = re.compile(r"(" + _OPERAND + r")\s*-\s*\(*\s*$")
_AFTER_RELOP = re.compile(r"^\s*\)*\s*" + _RELOP)
_BEFORE_DIFF_RELOP = re.compile(_RELOP + r"\s*\(*\s*$")
_REDUCED_AFTER = re.compile(r"^\s*\)*\s*(%(?!=)|&(?![&=]))")
_REDUCED_BEFORE = re.compile(r"[\w)\]]\s*(&(?![&=]))\s*\(*\s*$")
_ASSIGN_BEFORE = re.compile(
    r"(?<![\w.=!<>+\-*/%&|^])([A-Za-z_]\w*)\s*=\s*$")
_MEMBER_STORE = re.compile(r"(?:->|\.)\s*(\w+)\s*(?:\[[^\]]*\]\s*)?=\s*$")
_WRITE_ONCE = re.compile(r"\bWRITE_ONCE\s*\(\s*[^,;]*?(?:->|\.)\s*(\w+)\s*"
                         r"(?:\[[^\]]*\]\s*)?,\s*$")
_RETURN = re.compile(r"\breturn\s*$")
_AFTER_ORDER = re.compile(r"^\s*\)*\s*(<=|>=|<(?![<=])|>(?![>=]))")
_BEFORE_ORDER = re.compile(r"(?<![-<>])(<=|>=|<|>)\s*\(*\s*$")
# An assertion: "WARN_ON_ONCE(", "BUG_ON(", "VM_WARN_ON(" still open.
_ASSERTION = re.compile(r"\b(?:VM_)?(?:WARN|BUG)(?:_ON)?(?:_ONCE)?\s*\("
                        r"[^;{}]*$")
_FUNC_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)]*)\)"
                          r"[ \t]*((?:[^\n\\]|\\\n)*)", re.M)
_MACRO_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_CONSTANT = re.compile(r"^(?:\d\w*|[A-Z][A-Z0-9_]*|sizeof\b.*|"
                       r"ARRAY_SIZE\s*\(.*)$")


class Site(NamedTuple):
    """One expression holding a counter's value: CODE offsets START..END
    of PATH, inside the function FUNC (body offsets BODY..BODY_END);
    VIA says how it was reached ("" at the operation)."""
    path: str
    line: int
    start: int
    end: int
    func: Optional[str]
    body: int
    body_end: int
    via: str


class Use(NamedTuple):
    """What the code does with the value at one site."""
    kind: str       # reduced, truncated, difference, equality, store
    at: str         # PATH:LINE
    detail: str     # the other operand, the member, the mask ...
    site: Site


def _strip_before(before: str) -> str:
    """BEFORE without the casts and opening parentheses right before the
    value: "x = (u16)(" -> "x = "."""
    prev = None
    while prev != before:
        prev = before
        before = _CASTS.sub("", before.rstrip())
        before = re.sub(r"\(\s*$", "", before)
    return before


def _strip_after(after: str) -> str:
    return re.sub(r"^[\s)]*", "", after)


def constant(expr: str) -> bool:
    """A literal, an upper-case name, sizeof or ARRAY_SIZE: no counter."""
    return bool(_CONSTANT.match(re.sub(r"\s+", " ", expr.strip())))


class Flow:
    """Value sites and their uses for the operations of one run."""

    def __init__(self, sources: Sources,
                 spans: dict[str, list[tuple[str, int, int]]],
                 includes: dict[str, list[str]]) -> None:
        self.sources = sources
        self.spans = spans
        self.includes = includes
        self.callers: dict[str, list[tuple[str, int]]] = {}
        # Getters met whose callers are not known yet.
        self.wanted: set[str] = set()
        # The sites of a first site whose getters were all known.
        self.done: dict[tuple[str, int], list[Site]] = {}
        self.misses = 0
        self.macros: dict[str, dict[str, tuple[list[str], str]]] = {}

    # ---- text helpers -------------------------------------------------

    def site(self, path: str, start: int, end: int, via: str
             ) -> Optional[Site]:
        line = self.sources.line_of(path, start)
        if path not in self.spans:
            return self._kernel_style_site(path, line, start, end, via)
        for name, first, last in self.spans[path]:
            if first <= line <= last:
                body = self.sources.offset(path, first)
                body_end = self.sources.offset(path, last + 1)
                return Site(path, line, start, end, name, body, body_end,
                            via)
        return None

    def _kernel_style_site(self, path: str, line: int, start: int, end: int,
                           via: str) -> Optional[Site]:
        """The site in a file the scan did not read (a getter's caller
        that mentions no atomic): its function found the way kernel
        style writes one, "{" and "}" alone in the first column."""
        code = self.sources.code(path)
        open_at = code.rfind("\n{", 0, start)
        if open_at < 0:
            return None
        close = code.find("\n}", open_at + 2)
        if close < 0 or close < start:
            return None
        m = re.search(r"([A-Za-z_]\w*)\s*\([^;{}]*\)[\s\w()]*$",
                      code[max(0, open_at - 400):open_at])
        if not m:
            return None
        return Site(path, line, start, end, m.group(1), open_at + 1,
                    close + 2, via)

    def _defines(self, path: str) -> dict[str, tuple[list[str], str]]:
        if path not in self.macros:
            out: dict[str, tuple[list[str], str]] = {}
            code = self.sources.code(path)
            if "define" in code:
                for m in _FUNC_DEFINE.finditer(code):
                    params = [a.strip() for a in m.group(2).split(",")]
                    out[m.group(1)] = (params, m.group(3))
            self.macros[path] = out
        return self.macros[path]

    def function_macro(self, path: str, name: str
                       ) -> Optional[tuple[list[str], str]]:
        """The function-like #define NAME as PATH sees it: in PATH, or a
        header of its own directory tree it includes ("hinic_hw_wq.h"):
        (parameters, body).  The kernel's shared headers (include/,
        arch/) are not read for this: a driver's ring macros are its
        own."""
        found = self._defines(path).get(name)
        if found is not None:
            return found
        for p in self.includes.get(path, []):
            if p.startswith(("include/", "arch/")):
                continue
            found = self._defines(p).get(name)
            if found is not None:
                return found
        return None

    # ---- following ------------------------------------------------------

    def sites(self, first: Site) -> list[Site]:
        """FIRST and every site its value reaches.  The calls of a getter
        whose callers are not known yet are not followed; it is noted in
        WANTED (see learn_wanted)."""
        key = (first.path, first.start)
        if key in self.done:
            return self.done[key]
        misses = self.misses
        out = self._sites(first)
        if self.misses == misses:
            self.done[key] = out    # complete: no getter left to learn
        return out

    def _sites(self, first: Site) -> list[Site]:
        out: list[Site] = []
        todo = [(first, 0, 0)]
        seen: set[tuple[str, int]] = set()
        while todo:
            s, steps, calls = todo.pop()
            if (s.path, s.start) in seen:
                continue
            seen.add((s.path, s.start))
            out.append(s)
            code = self.sources.code(s.path)
            before = _strip_before(code[max(s.body, s.start - 160):s.start])
            after = _strip_after(code[s.end:s.end + 80])
            a = _ASSIGN_BEFORE.search(before)
            shifted = re.match(r"^([-+])\s*(\w+)\s*;", after)
            if a and steps < MAX_LOCAL_STEPS and (
                    re.match(r"^[;,]", after) or
                    shifted and constant(shifted.group(2))):
                # "cur = atomic_inc_return(&c);", "count = cur + 1;"
                for nxt in self.local_reads(s, a.group(1), code):
                    todo.append((nxt, steps + 1, calls))
            elif re.match(r"^;", after) and _RETURN.search(before) and \
                    s.func and calls < MAX_GETTER_STEPS:
                for nxt in self.getter_calls(s.func, s):
                    todo.append((nxt, steps, calls + 1))
        return out

    def learn_wanted(self, firsts: list[Site]) -> None:
        """Follow the values of FIRSTS through getters level by level,
        one grep per level for the callers of all the getters met."""
        for _level in range(MAX_GETTER_STEPS):
            for s in firsts:
                self.sites(s)
            if not self.wanted:
                return
            wanted, self.wanted = self.wanted, set()
            self.learn_getters(wanted)

    def local_reads(self, s: Site, name: str, code: str) -> list[Site]:
        """Reads of the local NAME after the assignment at S, up to its
        next assignment from something else."""
        out: list[Site] = []
        pat = re.compile(r"(?<![\w.>])" + re.escape(name) + r"\b(?!\s*\()")
        stmt_end = code.find(";", s.end)
        if stmt_end < 0:
            return out
        stop = s.body_end
        for m in pat.finditer(code, stmt_end, s.body_end):
            if m.start() >= stop:
                break
            rest = code[m.end():m.end() + 4]
            if re.match(r"\s*=(?!=)", rest):
                # Assigned again: another value from the end of that
                # statement on; its right side ("ci = MASK(wq, ci);")
                # still reads this one.
                end = code.find(";", m.end())
                stop = end if end >= 0 else s.body_end
                continue
            if re.match(r"\s*(?:\+\+|--|[-+*/%&|^]=|<<=|>>=)", rest) or \
                    re.search(r"(?:\+\+|--)\s*$", code[m.start() - 3:
                                                     m.start()]):
                continue
            line = self.sources.line_of(s.path, m.start())
            out.append(Site(s.path, line, m.start(), m.end(), s.func, s.body,
                            s.body_end, f"kept in {name}"))
        return out

    def learn_getters(self, names: set[str]) -> None:
        """The call sites of NAMES in the tree (one grep)."""
        todo = sorted(n for n in names if n not in self.callers)
        for n in todo:
            self.callers[n] = []
        for path, line, text in self.sources.grep_lines(todo):
            for m in re.finditer(r"\b(\w+)\s*\(", text):
                if m.group(1) in self.callers:
                    self.callers[m.group(1)].append((path, line))

    def getter_calls(self, name: str, def_site: Site) -> list[Site]:
        """The calls of the getter NAME, as sites."""
        found = self.callers.get(name)
        if found is None:
            # Looked up with the others in one grep (learn_wanted).
            self.wanted.add(name)
            self.misses += 1
            return []
        if len(found) > MAX_GETTER_CALLERS:
            return []
        out = []
        for path, line in sorted(set(found)):
            code = self.sources.code(path)
            start = self.sources.offset(path, line)
            end = code.find("\n", start)
            for m in re.finditer(r"\b" + re.escape(name) + r"\s*\(", code[
                    start:end if end >= 0 else len(code)]):
                at = start + m.start()
                close = lexical.matching_paren(code, start + m.end() - 1)
                if close < 0:
                    continue
                if path == def_site.path and def_site.body - 300 < at < \
                        def_site.body:
                    continue            # the definition's own header
                head = code[max(0, at - 80):at]
                if re.search(r"\b(?:static|inline|extern|int|long|bool|u32|"
                             r"u64|unsigned|void)\s*\**\s*$", head):
                    continue            # a prototype or a definition
                s = self.site(path, at, close + 1,
                              f"returned by {name}()")
                if s is not None:
                    out.append(s)
        return out

    # ---- uses -----------------------------------------------------------

    def uses(self, s: Site) -> list[Use]:
        """What the code does with the value at S."""
        code = self.sources.code(s.path)
        raw_before = code[max(s.body, s.start - 200):s.start]
        # The operand before a value, its operator and casts fit in 120
        # characters; the regexes anchored at the end scan all they get.
        before = _strip_before(raw_before)[-120:]
        after = code[s.end:s.end + 160]
        at = f"{s.path}:{s.line}"
        out = []
        m = _REDUCED_AFTER.match(after)
        if (m or before.rstrip(" \t\n(").endswith("&") and
                _REDUCED_BEFORE.search(before)) and \
                not _ASSERTION.search(raw_before):
            # Not in "WARN_ON_ONCE(nr & (PAGE_SIZE - 1))": the low bits
            # of an amount are checked there, not a position taken.
            op = m.group(1) if m else "&"
            out.append(Use("reduced", at, "modulo" if op == "%" else
                           "masked", s))
        elif _NARROW_CAST.search(raw_before[-60:]):
            out.append(Use("truncated", at, "cast to 8 or 16 bits", s))
        masked = self.macro_mask(s, raw_before)
        if masked:
            out.append(Use("reduced", at, f"masked by {masked}()", s))
        a = _ASSIGN_BEFORE.search(before)
        if a and re.match(r"^[\s)]*[;,]", after) and \
                self.narrow_local(s, a.group(1)):
            out.append(Use("truncated", at,
                           f"kept in the 8- or 16-bit {a.group(1)}", s))
        diff = self.difference(before, after)
        if diff:
            out.append(Use("difference", at, diff, s))
        m = _AFTER_CMP.match(after)
        other = m.group(2) if m else None
        if other is None and before.rstrip(" \t\n(").endswith(("==", "!=")):
            b = _BEFORE_CMP.search(before)
            other = b.group(1) if b else None
        if other is not None and not constant(other):
            out.append(Use("equality", at, _unwrap(other), s))
        elif diff is None and (_AFTER_ORDER.match(after) or
                               _BEFORE_ORDER.search(before)):
            out.append(Use("relational", at, "ordered", s))
        if re.match(r"^[\s)]*[;]", after):
            st = _MEMBER_STORE.search(before)
            if st:
                out.append(Use("store", at, "->" + st.group(1), s))
        if re.match(r"^\s*\)\s*;", after):
            w = _WRITE_ONCE.search(raw_before)
            if w:
                out.append(Use("store", at, "->" + w.group(1), s))
        a = _ASSIGN_BEFORE.search(before)
        if a and re.match(r"^[\s)]*[;,]", after):
            out.append(Use("store", at, a.group(1), s))
        return out

    def only_assigned_at(self, s: Site, name: str, starts: set[int]
                         ) -> bool:
        """Is every assignment to the local NAME in S's function one of
        the value sites at STARTS ("old = atomic_read(&v)"), and its
        address never taken (an exchange's expected value, updated by
        it)?  Then NAME holds a copy of the value wherever it is read."""
        code = self.sources.code(s.path)
        body = code[s.body:s.body_end]
        if re.search(r"&\s*" + re.escape(name) + r"\b", body):
            return False
        for m in re.finditer(r"(?<![\w.>])" + re.escape(name) +
                             r"\s*(?:=(?!=)|[-+*/%&|^]=|\+\+|--)", body):
            rhs = s.body + m.end()
            if not any(0 <= st - rhs <= 40 and (
                    not code[rhs:st].strip(" \t\n(") or
                    not _CASTS.sub("", code[rhs:st].strip()).strip("( "))
                       for st in starts):
                return False
        return True

    def difference(self, before: str, after: str) -> Optional[str]:
        """"x - other < bound" (or "other - x >= 0", "bound > x - other")
        with a non-constant OTHER: a comparison modulo 2^32."""
        m = _AFTER_DIFF.match(after)
        if m and not constant(m.group(1)):
            return f"value - {_unwrap(m.group(1))} compared with " \
                f"'{m.group(2)}'"
        b = _BEFORE_DIFF.search(before) \
            if before.rstrip(" \t\n(").endswith("-") else None
        if b and not constant(b.group(1)):
            rel = _AFTER_RELOP.match(after)
            head = before[:b.start()]
            if rel or _BEFORE_DIFF_RELOP.search(head):
                op = rel.group(1) if rel else "?"
                return f"{_unwrap(b.group(1))} - value compared with '{op}'"
        if _BEFORE_DIFF_RELOP.search(before):
            m2 = re.match(r"^\s*-\s*(" + _OPERAND + r")", after)
            if m2 and not constant(m2.group(1)):
                return f"bound compared with value - {_unwrap(m2.group(1))}"
        return None

    def macro_mask(self, s: Site, raw_before: str) -> Optional[str]:
        """The name of a function-like macro that S is a direct argument
        of and whose body masks or reduces that parameter
        ("#define MASKED_WQE_IDX(wq, idx) ((idx) & (wq)->mask)")."""
        code = self.sources.code(s.path)
        # The innermost unclosed '(' before the site, and its callee.
        depth = 0
        index = 0
        for k in range(len(raw_before) - 1, -1, -1):
            ch = raw_before[k]
            if ch == ")":
                depth += 1
            elif ch == "(":
                if depth == 0:
                    m = re.search(r"([A-Za-z_]\w*)\s*$", raw_before[:k])
                    if not m:
                        return None
                    name = m.group(1)
                    if not _MACRO_NAME.match(name):
                        return None     # a function, by kernel style
                    close = lexical.matching_paren(
                        code, s.start - (len(raw_before) - k))
                    if close < 0 or code[s.end:close].strip(" \t\n)"):
                        return None     # more than the value in the arg
                    found = self.function_macro(s.path, name)
                    if found is None:
                        return None
                    params, body = found
                    if index >= len(params):
                        return None
                    p = re.escape(params[index])
                    if re.search(r"\(?\b" + p + r"\b\)?\s*(%|&(?!&))", body) \
                            or re.search(r"[\w)]\s*&(?!&)\s*\(?\s*\b" + p +
                                         r"\b", body):
                        return name
                    return None
                depth -= 1
            elif ch == "," and depth == 0:
                index += 1
            elif ch in ";{}" and depth == 0:
                return None
        return None

    def narrow_local(self, s: Site, name: str) -> bool:
        """Is NAME declared in S's function with an 8- or 16-bit type?"""
        code = self.sources.code(s.path)
        head = code[max(0, s.body - 400):s.body_end]
        return bool(re.search(
            r"\b" + _NARROW_TYPE + r"\s+(?:[\w\s,*\[\]]*?[\s,*])?" +
            re.escape(name) + r"\s*[;,=\[)]", head))


def _unwrap(expr: str) -> str:
    """"READ_ONCE(x->gen)" -> "x->gen"; spaces removed."""
    expr = re.sub(r"\s+", "", expr)
    m = re.match(r"^(?:READ_ONCE|data_race|smp_load_acquire)\((.*)\)$", expr)
    return m.group(1) if m else expr


def member_of(expr: str) -> Optional[str]:
    """"->gen" for "rt->gen", "e.gen", "READ_ONCE(n->gen)"; else None."""
    m = re.search(r"(?:->|\.)(\w+)(?:\[[^\]]*\])*$", _unwrap(expr))
    return "->" + m.group(1) if m else None


def is_plain(expr: str) -> bool:
    return bool(_IDENT.match(_unwrap(expr)))
