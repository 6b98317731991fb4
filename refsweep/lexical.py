# SPDX-License-Identifier: GPL-2.0-only
"""A brace-aware lexical pass over one C file, independent of spatch.

It finds what spatch's structural matching can miss (members of nested
anonymous structs and unions, typedef'd structs, code spatch cannot parse)
and gives the classifier function spans.  It never decides anything on its
own: its op sites are compared with spatch's to find unparsed regions, and
its declarations are merged with spatch's.
"""

import itertools
import re
from typing import NamedTuple, Optional

from refsweep import atomic_api

_COMMENT_OR_LITERAL = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
# Multi-character operators are one token: "==" is no "=" (which would
# make "if (a == b) {" look like an initializer).
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|->|<<=|>>=|[-+*/%&|^!=<>]=|"
                    r"<<|>>|&&|\|\||\+\+|--|\S")
# Annotations after a function's parameter list: "f(x) __releases(x) {".
_ANNOTATION = re.compile(r"^(__\w+|_[A-Z]\w*|[A-Z][A-Z0-9_]*)$")
# A file-scope macro that declares a struct named by its first argument
# ("context_lock_struct(NAME) { ... };" expands to "struct NAME { ... };"):
# a function definition always has a return type before its name, such a
# macro nothing.
_STRUCT_MACRO = re.compile(r"^\w*_struct$")
_OP_CALL = re.compile(r"\b((?:raw_|arch_)?atomic(?:64|_long)?_[a-z0-9_]+)\s*\(")
_QUALIFIERS = {
    "static", "extern", "const", "volatile", "register", "__read_mostly",
    "__ro_after_init", "__cacheline_aligned", "__cacheline_aligned_in_smp",
    "____cacheline_aligned", "____cacheline_aligned_in_smp", "__percpu",
    "__maybe_unused", "__used", "__initdata", "__refdata", "__rcu",
    "__aligned", "__packed", "unsigned", "_Atomic",
}


class Decl(NamedTuple):
    """One declared atomic variable."""
    name: str
    type: str
    line: int
    scope: str            # "member", "file" or "function"
    tag: Optional[str]    # "struct foo" for members
    function: Optional[str]
    static: bool
    extern: bool


class OpSite(NamedTuple):
    """One call of an atomic API function, found by text."""
    fn: str
    args: str
    line: int
    column: int
    function: Optional[str]
    in_macro: bool


class FuncSpan(NamedTuple):
    """A function definition: name, header line, body lines."""
    name: str
    header_line: int
    body_start: int
    body_end: int


class FileFacts(NamedTuple):
    """Everything the lexical pass learned about one file."""
    decls: list[Decl]
    ops: list[OpSite]
    functions: list[FuncSpan]


def strip_comments(text: str) -> str:
    """Blank out comments and string/char literal contents, keeping lines."""
    def spaces(s: str) -> str:
        if "\n" not in s:
            return " " * len(s)
        return "\n".join(" " * len(part) for part in s.split("\n"))

    def blank(m: "re.Match[str]") -> str:
        s = m.group(0)
        if s[0] in "\"'":
            return s[0] + spaces(s[1:-1]) + s[-1]
        return spaces(s)
    return _COMMENT_OR_LITERAL.sub(blank, text)


def _macro_lines(lines: list[str]) -> set[int]:
    """0-based indexes of preprocessor lines, continuations included."""
    out: set[int] = set()
    cont = False
    for i, line in enumerate(lines):
        if cont or line.lstrip().startswith("#"):
            out.add(i)
            cont = line.rstrip().endswith("\\")
        else:
            cont = False
    return out


def _blank_else_branches(lines: list[str], macro: set[int]) -> list[str]:
    """Hide #else/#elif branches whose braces would unbalance the file.

    ``#ifdef A { ... #else { ... #endif`` opens one brace in C but two in
    the text; keeping only the first branch of such conditionals keeps the
    brace stack right.  Balanced alternatives are kept, so that ``#ifdef``
    twins of a declaration are both seen.
    """
    out = list(lines)
    stack: list[dict[str, object]] = []
    for i, line in enumerate(lines):
        if i not in macro:
            if stack:
                top = stack[-1]
                bal = line.count("{") - line.count("}")
                top["cur"] = int(top["cur"]) + bal  # type: ignore[call-overload]
                if top["in_else"]:
                    top_list = top["else_lines"]
                    assert isinstance(top_list, list)
                    top_list.append(i)
            continue
        d = line.strip().lstrip("#").strip()
        if d.startswith("if"):
            stack.append({"first": None, "cur": 0, "in_else": False,
                          "else_lines": [], "unbalanced": False})
        elif (d.startswith("else") or d.startswith("elif")) and stack:
            top = stack[-1]
            if top["first"] is None:
                top["first"] = top["cur"]
            elif top["cur"] != top["first"]:
                top["unbalanced"] = True
            top["cur"] = 0
            top["in_else"] = True
        elif d.startswith("endif") and stack:
            top = stack.pop()
            if top["in_else"] and top["cur"] != top["first"]:
                top["unbalanced"] = True
            if top["unbalanced"]:
                else_lines = top["else_lines"]
                assert isinstance(else_lines, list)
                for j in else_lines:
                    out[j] = " " * len(lines[j])
    return out


class _Tok(NamedTuple):
    text: str
    line: int


def _tokens(lines: list[str]) -> list[_Tok]:
    toks: list[_Tok] = []
    # tuple.__new__ builds each _Tok in C: _Tok() would run Python code
    # for each of the millions of tokens of a tree.
    make = tuple.__new__
    for n, line in enumerate(lines, 1):
        toks.extend(map(make, itertools.repeat(_Tok),
                        zip(_TOKEN.findall(line), itertools.repeat(n))))
    return toks


def _decls_in_statement(stmt: list[_Tok], scope: str, tag: Optional[str],
                        function: Optional[str]) -> list[Decl]:
    """Declarations of atomic variables in one statement's tokens."""
    words = [t.text for t in stmt]
    if not words or "typedef" in words or words[0] in ("return", "sizeof"):
        return []
    i = 0
    static = extern = False
    while i < len(words) and words[i] in _QUALIFIERS:
        static |= words[i] == "static"
        extern |= words[i] == "extern"
        i += 1
    if i >= len(words) or words[i] not in atomic_api.ATOMIC_TYPES:
        return []
    type_ = words[i]
    i += 1
    out: list[Decl] = []
    depth = 0
    start = i
    for j in range(i, len(words) + 1):
        w = words[j] if j < len(words) else ","
        if w in "([{":
            depth += 1
        elif w in ")]}":
            depth -= 1
        if w == "," and depth == 0:
            d = _declarator(stmt[start:j])
            if d is not None:
                out.append(Decl(d[0], type_, d[1], scope, tag, function,
                                static, extern))
            start = j + 1
    return out


def _declarator(toks: list[_Tok]) -> Optional[tuple[str, int]]:
    """Name and line of a plain (non-pointer, non-function) declarator."""
    words = [t.text for t in toks]
    k = 0
    while k < len(words) and words[k] in _QUALIFIERS:
        k += 1
    if k >= len(words) or words[k] == "*" or words[k] == "(":
        return None
    if not re.match(r"[A-Za-z_]\w*$", words[k]):
        return None
    if k + 1 < len(words) and words[k + 1] == "(":
        return None             # a function prototype
    return words[k], toks[k].line


def _scan_tokens(toks: list[_Tok]) -> tuple[list[Decl], list[FuncSpan]]:
    """Walk the tokens with a stack of brace contexts."""
    decls: list[Decl] = []
    funcs: list[FuncSpan] = []
    # Stack entries: (kind, tag, function, pending-decls, start-line, name)
    stack: list[tuple[str, Optional[str], Optional[str], list[Decl], int,
                      str]] = []
    stmt: list[_Tok] = []
    typedef_pending: list[Decl] = []
    # Statements interrupted by an initializer's braces ("atomic_t p =
    # { 0 };"): the braces belong to the statement, not to a scope.
    init_saved: list[list[_Tok]] = []

    def cur_scope() -> tuple[str, Optional[str], Optional[str]]:
        fn = None
        for kind, _tag, f, _p, _l, _n in reversed(stack):
            if kind == "function":
                fn = f
                break
        if stack and stack[-1][0] in ("struct", "anon"):
            return "member", _named_tag(), fn
        if fn is not None:
            return "function", None, fn
        return "file", None, None

    def _named_tag() -> Optional[str]:
        for kind, tag, _f, _p, _l, _n in reversed(stack):
            if kind == "struct":
                return tag
            if kind not in ("anon",):
                return None
        return None

    for idx, tok in enumerate(toks):
        t = tok.text
        if t == "{":
            words = [s.text for s in stmt]
            kind, tag, fname = _brace_kind(words, bool(stack), stack)
            if kind == "init" or (stack and stack[-1][0] == "init"):
                kind = "init"
                init_saved.append(stmt + [tok])
            stack.append((kind, tag, fname, [], tok.line,
                          "typedef" if "typedef" in words else ""))
            stmt = []
        elif t == "}" and stack and stack[-1][0] == "init":
            stack.pop()
            stmt = init_saved.pop() + [tok]
        elif t == "}":
            if stmt:
                scope, tag, fn = cur_scope()
                decls.extend(_decls_in_statement(stmt, scope, tag, fn))
                stmt = []
            if not stack:
                continue
            kind, tag, fname, pending, start, note = stack.pop()
            if kind == "function" and fname:
                funcs.append(FuncSpan(fname, start, start, tok.line))
            if kind == "anon" and note == "typedef" and not stack:
                # typedef struct { ... } NAME;  -> key as struct NAME
                name = _typedef_name(toks, idx)
                typedef_pending = [d._replace(tag="struct " + name)
                                   for d in pending] if name else []
                decls.extend(typedef_pending)
            elif kind == "anon" and note == "typedef":
                decls.extend(pending)
            # A struct/anon context closes into a statement like
            # "} name;" or "};": keep collecting tokens of the outer one.
            if kind in ("struct", "anon"):
                stmt = [_Tok("__refsweep_braced__", tok.line)]
        elif t == ";":
            if stmt:
                scope, tag, fn = cur_scope()
                found = _decls_in_statement(stmt, scope, tag, fn)
                if (stack and stack[-1][0] == "anon" and stack[-1][5] ==
                        "typedef" and len(stack) == 1):
                    stack[-1][3].extend(found)
                else:
                    decls.extend(found)
            stmt = []
        else:
            stmt.append(tok)
    return decls, funcs


def _typedef_name(toks: list[_Tok], close_idx: int) -> Optional[str]:
    for t in toks[close_idx + 1:close_idx + 6]:
        if t.text == ";":
            break
        if re.match(r"[A-Za-z_]\w*$", t.text) and t.text not in _QUALIFIERS:
            return t.text
    return None


def _brace_kind(words: list[str], nested: bool, stack: list[tuple[
        str, Optional[str], Optional[str], list[Decl], int, str]]
        ) -> tuple[str, Optional[str], Optional[str]]:
    """What a '{' opens, from the tokens of the statement before it."""
    in_function = any(s[0] == "function" for s in stack)
    for k in range(len(words) - 1, -1, -1):
        if words[k] in ("struct", "union"):
            if k + 1 < len(words) and re.match(r"[A-Za-z_]\w*$",
                                               words[k + 1]) \
                    and words[k + 1] not in _QUALIFIERS:
                return "struct", words[k] + " " + words[k + 1], None
            return "anon", None, None
        if words[k] == "enum":
            return "enum", None, None
        if words[k] in ("=", ")", ";"):
            break
    if words and words[-1] == "=" or (words and words[0] == "="):
        return "init", None, None
    if "=" in words:
        return "init", None, None
    if not in_function and len(words) >= 4 and \
            _STRUCT_MACRO.match(words[0]) and words[1] == "(" and \
            words[-1] == ")" and re.match(r"[A-Za-z_]\w*$", words[2]):
        # "context_lock_struct(rw_semaphore) {": Linux 7.2 declares its
        # lock types through a macro that expands to "struct NAME".
        return "struct", "struct " + words[2], None
    if not in_function and words and words[-1] == ")":
        name = _function_name(words)
        if name:
            return "function", None, name
    return "block", None, None


def _function_name(words: list[str]) -> Optional[str]:
    """The name before the parameter list of a definition's header; trailing
    annotation groups (__releases(x), __must_hold(l), __attribute__((..)))
    are skipped."""
    depth = 0
    for k in range(len(words) - 1, -1, -1):
        if words[k] == ")":
            depth += 1
        elif words[k] == "(":
            depth -= 1
            if depth == 0:
                if k > 0 and re.match(r"[A-Za-z_]\w*$", words[k - 1]):
                    if _ANNOTATION.match(words[k - 1]) and k > 1 and \
                            words[k - 2] == ")":
                        continue
                    return words[k - 1]
                return None
    return None


def _op_sites(lines: list[str], macro: set[int],
              funcs: list[FuncSpan]) -> list[OpSite]:
    text = "\n".join(lines)
    starts = [0]
    for source_line in lines:
        starts.append(starts[-1] + len(source_line) + 1)
    sites: list[OpSite] = []
    for m in _OP_CALL.finditer(text):
        op = atomic_api.decode(m.group(1))
        if op is None:
            continue
        lno = _line_of(starts, m.start())
        col = m.start() - starts[lno - 1]
        args = _balanced(text, m.end() - 1)
        if args is None:
            continue
        fn = function_at(funcs, lno)
        sites.append(OpSite(m.group(1), args, lno, col, fn,
                            (lno - 1) in macro))
    return sites


def _line_of(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1


def matching_paren(code: str, open_at: int, limit: int = 4000) -> int:
    """Offset of the ')' that closes the '(' at OPEN_AT, or -1."""
    depth = 0
    for k in range(open_at, min(len(code), open_at + limit)):
        if code[k] == "(":
            depth += 1
        elif code[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    return -1


def _balanced(text: str, open_at: int) -> Optional[str]:
    close = matching_paren(text, open_at, 2000)
    if close < 0:
        return None
    return " ".join(text[open_at + 1:close].split())


def function_at(funcs: list[FuncSpan], line: int) -> Optional[str]:
    """Name of the function whose body contains LINE, if any."""
    for f in funcs:
        if f.body_start <= line <= f.body_end:
            return f.name
    return None


def scan_text(text: str) -> FileFacts:
    """Run the lexical pass over the text of one C file."""
    clean = strip_comments(text)
    lines = clean.split("\n")
    macro = _macro_lines(lines)
    code = [(" " * len(line)) if i in macro else line
            for i, line in enumerate(lines)]
    code = _blank_else_branches(code, macro) if macro else code
    decls, funcs = _scan_tokens(_tokens(code))
    ops = _op_sites(lines, macro, funcs)
    return FileFacts(decls, ops, funcs)


def reduce_for_spatch(text: str, facts: FileFacts) -> str:
    """TEXT with the bodies of functions that never mention an atomic
    blanked out, lines and columns kept.

    spatch spends most of its time parsing; in a large driver only a few
    functions touch atomics.  An emptied body cannot hide an operation (it
    has none), and positions in the rest of the file stay valid.
    """
    lines = text.split("\n")
    clean = strip_comments(text).split("\n")
    for f in facts.functions:
        first, last = f.body_start, f.body_end - 2   # 0-based interior
        if last < first:
            continue
        body = "\n".join(clean[first:last + 1])
        if "atomic" in body or "#" in body:
            continue
        for k in range(first, last + 1):
            lines[k] = ""
    return "\n".join(lines)
