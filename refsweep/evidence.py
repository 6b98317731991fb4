# SPDX-License-Identifier: GPL-2.0-only
"""Turn one file's spatch records and lexical facts into evidence.

For every atomic operation this decides its *use* (see
Documentation/classification.rst, "Operations and their uses") from the
innermost context spatch matched around it and from the source text at the
positions spatch gave.  Everything here depends on one file only, so the
result is cached by file content.
"""

import functools
import posixpath
import re
from typing import Any, Optional

from refsweep import atomic_api, lexical
from refsweep.atomic_api import Effect
from refsweep.records import CHECKED_USES, Use

Record = dict[str, Any]

# Callees that print or export whatever they are given.
PRINT_CALLEES = re.compile(
    r"^(printk\w*|pr_\w+|dev_(err|warn|info|dbg|notice|crit|alert|emerg|"
    r"printk|err_probe)\w*|netdev_(err|warn|info|dbg|notice|crit|alert|"
    r"emerg|printk)\w*|netif_\w*(err|warn|info|dbg)\w*|"
    r"seq_\w+|sysfs_emit\w*|v?s?n?c?printf|scnprintf|trace_\w+|nla_put\w*|"
    r"(__)?put_user|copy_to_user|drm_\w*(dbg|info|err|warn)\w*|"
    r"debugfs_\w+|audit_log\w*|WARN\w*_ONCE\w*|pr_cont|ata_\w*printk|"
    r"\w*_stats?(_\w+)?|u64_stats_\w+|put_unaligned\w*|cpu_to_\w+|"
    r"__stringify)$")
# Callees named like printers (foo_err, bar_info, DRM_DEBUG, ethtool_...)
# that count as printing only when the call also takes a format string:
# set_err(d, atomic_read(&v)) is no print.
FORMAT_CALLEES = re.compile(
    r"^(\w+_(dbg|debug|info|err|warn\w*|notice|log|msg|print\w*|printk)|DRM_\w+|"
    r"ethtool_\w+)$")
WAIT_CALLEES = re.compile(
    r"^(wait_event\w*|___?wait_event\w*|wait_var_event\w*|___?wait_var_\w*|"
    r"swait_event\w*|rcuwait_wait_event\w*|read\w*_poll_timeout\w*|"
    r"wait_on_\w+|\w*_wait_event\w*|smp_cond_load\w*)$")
ASSERT_CALLEES = re.compile(
    r"^(WARN_ON\w*|BUG_ON|WARN|WARN_ONCE|VM_BUG_ON\w*|VM_WARN_ON\w*|"
    r"BUILD_BUG_ON|\w*_BUG_ON\w*|\w*_WARN_ON\w*|KUNIT_\w+|lockdep_assert\w*|"
    r"likely|unlikely|WARN_ON_ONCE|data_race|READ_ONCE)$")
RELEASE_CALLS = re.compile(
    r"(\b\w*free\w*|\b\w*_?release\w*|\b\w*destroy\w*|\b\w*_?put\w*|"
    r"\bcall_rcu\w*|\bkref_\w+|\b\w*queue_\w*work\w*|\bschedule_\w*work|"
    r"\b\w*_?del\w*|\b\w*_remove\w*|\b\w*unregister\w*|\b\w*cleanup\w*|"
    r"\b\w*teardown\w*|\b\w*_drop\w*|\b\w*unlink\w*|\b\w*dealloc\w*|"
    r"\b\w*_unmap\w*|\b[idf]put|\b\w*_close\w*|\b\w*_exit\w*|\b\w*detach\w*|"
    r"\b\w*_finish\w*|\b\w*_done\w*|\b\w*_kill\w*|\b\w*_shutdown\w*|"
    r"\b\w*_end\w*|\b\w*_unpin\w*|\b\w*_unuse\w*)\s*\(")
WAKE_CALLS = re.compile(
    r"(\bwake_up\w*|\bcomplete\w*|\bup|\bup_read|\bup_write|\bswake_up\w*|"
    r"\b\w*wake\w*|\b\w*_complete\w*|\b\w*notify\w*|\b\w*_signal\w*|"
    r"\bclear_bit\w*|\bclear_and_wake\w*|\bsmp_store_release|\bmutex_unlock|"
    r"\bspin_unlock\w*|\bsend_sig\w*|\bkill_\w+|\bcomplete_all)\s*\(")
# A relational operator: not part of "<<", ">>", "->", "<<=", ">>=".
_RELOP = r"(==|!=|<=|>=|<(?![<=])|>(?![>=]))"
_OPERAND = r"([-(]?\s*(?:\w+|->|\.|\[\w*\])+)"
_CMP_AFTER = re.compile(r"^\s*\)*\s*" + _RELOP + r"\s*" + _OPERAND)
# Anchored at the end and split in two so that a long expression costs a
# linear scan, not backtracking.
_CMP_BEFORE = re.compile(r"(?<![<>=!-])" + _RELOP + r"\s*\(*\s*$")
_OPERAND_BEFORE = re.compile(r"[\w.\[\]()>-]+$")
_CONSTANT = re.compile(r"^[A-Z][A-Z0-9_]*$")
# Functions that export a counter by address (no atomic op at the site).
_EXPORTS = re.compile(r"\b(debugfs_create_atomic_t)\s*\(")
_EXITS = re.compile(r"\b(return|goto|break|continue)\b")
_ARITH_AROUND = re.compile(r"[-+*/%&|^]\s*$|^\s*\)*\s*[-+*/%&|^<>]")


class Text:
    """Source text addressed by spatch positions (1-based lines,
    0-based columns, end column exclusive)."""

    def __init__(self, text: str) -> None:
        self.lines = lexical.strip_comments(text).split("\n")
        self.raw = text.split("\n")
        self.code = "\n".join(self.lines)
        # Same offsets as code, with string literals kept (formats).
        self.raw_code = "\n".join(self.raw)
        self.memo: dict[tuple[str, int], list[tuple[int, str]]] = {}
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line) + 1)
        # File-scope lines only (declarations of globals), for type lookups.
        self.top_level = "\n".join(
            line for line in self.lines if not line.startswith((" ", "\t")))

    def slice(self, line: int, col: int, line_end: int,
              col_end: int) -> str:
        if line < 1 or line > len(self.lines):
            return ""
        if line == line_end:
            return self.lines[line - 1][col:col_end]
        parts = [self.lines[line - 1][col:]]
        parts.extend(self.lines[line:line_end - 1])
        if line_end <= len(self.lines):
            parts.append(self.lines[line_end - 1][:col_end])
        return "\n".join(parts)

    def span(self, pos: list[Any]) -> str:
        return self.slice(int(pos[1]), int(pos[2]), int(pos[3]),
                          int(pos[4]))

    def before(self, line: int, col: int, n: int = 80) -> str:
        text = self.lines[line - 1][:col] if line <= len(self.lines) else ""
        k = line - 1
        while len(text) < n and k > 0:
            k -= 1
            text = self.lines[k] + "\n" + text
        return text[-n:]

    def lines_between(self, first: int, last: int) -> str:
        return "\n".join(self.lines[max(first - 1, 0):last])

    def offset(self, line: int, col: int = 0) -> int:
        """Offset in code of 1-based LINE, 0-based COL."""
        line = min(max(line, 1), len(self.lines))
        return self.starts[line - 1] + col


def _size(pos: list[Any]) -> tuple[int, int]:
    return (int(pos[3]) - int(pos[1]), int(pos[4]) - int(pos[2]))


_CTX_PRIORITY = {"local": 0, "index": 1, "call": 2, "return": 3,
                 "assign": 4, "cond": 5}


def _innermost(ctxs: list[Record]) -> Optional[Record]:
    if not ctxs:
        return None
    return min(ctxs, key=lambda c: (_size(c["span"]),
                                    _CTX_PRIORITY.get(c["ctx"], 9)))


class _Compare:
    """How an operation's value is compared inside an expression."""

    def __init__(self, expr: str, op_text: str) -> None:
        self.negated = False
        self.operator: Optional[str] = None
        self.other: Optional[str] = None
        at = expr.find(op_text)
        if at < 0:
            return
        before, after = expr[:at], expr[at + len(op_text):]
        if re.search(r"!\s*\(*\s*$", before):
            self.negated = True
        m = _CMP_AFTER.match(after)
        if m:
            self.operator = m.group(1)
            self.other = re.sub(r"\s+", "", m.group(2))
            return
        m = _CMP_BEFORE.search(before[-200:])
        if m:
            head = before[-200:][:m.start()].rstrip()
            o = _OPERAND_BEFORE.search(head[-80:])
            if o:
                self.operator = _mirror(m.group(1))
                self.other = o.group(0)

    @property
    def against_zero(self) -> bool:
        return self.other in ("0", "0L", "0UL", "0LL", "NULL") \
            or (self.other == "1" and self.operator in ("<", ">=")) \
            or self.negated

    @property
    def against_constant(self) -> bool:
        return bool(self.other and _CONSTANT.match(self.other))

    @property
    def zero_when_true(self) -> bool:
        """True if the enclosing condition holds when the value is zero."""
        if self.negated:
            return True
        if self.operator in ("==", "<=", "<"):
            return True
        return False


def _mirror(operator: str) -> str:
    return {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(operator,
                                                           operator)


def _zero_branch(text: Text, ctx: Record, zero_when_true: bool,
                 functions: list[lexical.FuncSpan]) -> str:
    """Source of the code run when the counter reached zero."""
    then = ctx.get("then") or []
    els = ctx.get("els") or []
    if zero_when_true:
        return text.span(then[0]) if then else ""
    if els:
        return text.span(els[0])
    # "if (!atomic_dec_and_test(&x->ref)) return; kfree(x);": the rest of
    # the function is the zero path when the other branch leaves.
    if then and _EXITS.search(text.span(then[0])):
        end_line = int(then[0][3])
        for f in functions:
            if f.body_start <= end_line <= f.body_end:
                return text.lines_between(end_line + 1, f.body_end)
    return ""


def _branch_use(branch: str) -> Use:
    if RELEASE_CALLS.search(branch):
        return Use.ZERO_RELEASE
    if WAKE_CALLS.search(branch):
        return Use.ZERO_WAKE
    return Use.ZERO_TEST


def classify_use(op: atomic_api.AtomicOp, op_pos: list[Any],
                 ctx: Optional[Record], text: Text,
                 functions: list[lexical.FuncSpan],
                 args: list[str],
                 outer: Optional[Record] = None) -> tuple[Use, str]:
    """The use of one operation and a short detail for reviewers.

    CTX is the innermost context spatch recorded around the operation,
    OUTER the next enclosing condition, return or call, if any (the
    assignment in "while ((n = atomic_read(&v)) > 0)" is itself tested).
    """
    if op.waits:
        return Use.WAIT_ZERO, f"waited on with {op.name}()"
    # Only a counter that moves up makes identifiers: the new value of
    # "atomic_long_add_return(new - old, &v)" is a running total of
    # something that also shrinks (an accounting delta), not an ID.
    counts_up = op.increases and not op.is_read and \
        not atomic_api.signed_amount(op, args)
    op_text = _call_text(text, op_pos)
    if ctx is None:
        return _bare_use(op, op_pos, text, args, functions)
    kind = ctx["ctx"]
    expr = text.span(ctx["span"])
    cmp = _Compare(expr, op_text)
    if kind == "cond":
        head = text.before(int(ctx["span"][1]), int(ctx["span"][2]), 12)
        is_loop = bool(re.search(r"\bwhile\s*\(\s*$", head))
        return _condition_use(op, cmp, ctx, text, functions, args, is_loop)
    if kind == "return":
        if op.is_zero_test or (cmp.operator and cmp.against_zero):
            return Use.ZERO_RETURNED, "zero test returned to the caller"
        if cmp.operator:
            return _compare_use(op, cmp)
        if counts_up and op.returns_value:
            return Use.ID, "new value returned"
        if expr.strip() == op_text.strip():
            fn = lexical.function_at(functions, int(op_pos[1]))
            followed = _follow_getter(fn, text, op)
            if followed:
                return followed
        return Use.VALUE, "value returned"
    if kind in ("assign", "local"):
        if op.is_zero_test or (cmp.operator and cmp.against_zero):
            return Use.ZERO_TEST, "zero test stored"
        if cmp.operator:
            return _compare_use(op, cmp)
        if outer is not None:
            use, detail = classify_use(op, op_pos, outer, text, functions,
                                       args)
            if use in CHECKED_USES and use is not Use.VALUE:
                return use, "assigned and " + detail
        lhs = text.span(ctx["lhs"]) if ctx.get("lhs") else ""
        if re.match(r"^\s*\w+\s*$", lhs) and _strip_casts(expr) == \
                op_text.strip():
            followed = _follow_local(lhs.strip(), int(op_pos[1]), text,
                                     functions, op)
            if followed:
                return followed
        if counts_up:
            return Use.ID, f"new value stored in {lhs.strip()}"
        if op.is_exchange and op.base != "try_cmpxchg" and \
                _constant_args(args[1:]):
            return Use.STATE_TEST, "exchange of constants"
        if op.is_read and kind == "assign" and re.search(r"->|\.|\[|^\s*\*",
                                                          lhs):
            followed = _follow_copy(lhs.strip(), int(op_pos[1]), text,
                                    functions, op)
            if followed:
                return followed
            return Use.PRINT, f"copied out to {lhs.strip()}"
        return Use.VALUE, f"stored in {lhs.strip()}"
    if kind == "call":
        callee = str(ctx.get("callee", ""))
        if WAIT_CALLEES.match(callee):
            return Use.WAIT_ZERO, f"waited on in {callee}()"
        if ASSERT_CALLEES.match(callee):
            if op.is_zero_test or cmp.against_zero:
                return Use.ZERO_TEST, f"asserted in {callee}()"
            if cmp.operator:
                return _compare_use(op, cmp)
            return Use.VALUE, f"in {callee}()"
        if cmp.operator:
            return _compare_use(op, cmp)
        if op.is_zero_test:
            return Use.ZERO_TEST, f"zero test passed to {callee}()"
        if counts_up:
            return Use.ID, f"new value passed to {callee}()"
        if _is_print_call(text, callee, _call_open(
                text, text.offset(int(op_pos[1]), int(op_pos[2])), callee)):
            return Use.PRINT, f"printed by {callee}()"
        return Use.VALUE, f"passed to {callee}()"
    if kind == "index":
        if counts_up:
            return Use.ID, "new value used as an index"
        return Use.VALUE, "used as an index"
    return Use.VALUE, kind


def _call_text(text: Text, op_pos: list[Any]) -> str:
    """The whole call expression 'fn(args)' starting at OP_POS."""
    line, col = int(op_pos[1]), int(op_pos[2])
    rest = text.lines_between(line, line + 20)
    rest = rest[col:] if rest else ""
    open_at = rest.find("(")
    close = lexical.matching_paren(rest, open_at) if open_at >= 0 else -1
    return rest[:close + 1] if close > 0 else text.span(op_pos)


def _condition_use(op: atomic_api.AtomicOp, cmp: _Compare, ctx: Record,
                   text: Text, functions: list[lexical.FuncSpan],
                   args: list[str], is_loop: bool) -> tuple[Use, str]:
    if is_loop:
        if op.is_exchange:
            return Use.VALUE, "compare-and-exchange loop"
        return _loop_use(op, cmp, "loop condition")
    if op.is_zero_test:
        zero_true = not cmp.negated
        if op.is_guard:
            return Use.ZERO_TEST, f"{op.base} guard"
        branch = _zero_branch(text, ctx, zero_true, functions)
        use = _branch_use(branch)
        return use, f"{op.base}: zero branch {_summary(branch)}"
    if cmp.operator is None and not cmp.negated:
        if op.is_exchange and \
                _constant_args(args[1:]):
            return Use.STATE_TEST, "exchange of constants tested"
        computed = _computed_and_compared(text.span(ctx["span"]),
                                          _call_text(text, ctx["op"])
                                          if "op" in ctx else "")
        if computed:
            # "if (atomic_read(&done) - wakeups < batch)": a sum or a
            # difference compared with a bound, not a truth value.
            return Use.LIMIT, f"computed with and compared {computed}"
        # "if (atomic_read(&x))": true when non-zero.
        branch = _zero_branch(text, ctx, False, functions)
        use = _branch_use(branch) if op.decreases else Use.ZERO_TEST
        if use is Use.ZERO_TEST and op.is_read and \
                _if_guards_only_printing(text, ctx):
            return Use.PRINT_GUARD, "value tested for non-zero only to print"
        return use, "value tested for non-zero"
    if cmp.against_zero:
        branch = _zero_branch(text, ctx, cmp.zero_when_true, functions)
        use = _branch_use(branch)
        if use != Use.ZERO_TEST and not (op.decreases or op.is_read):
            use = Use.ZERO_TEST
        if use is Use.ZERO_TEST and op.is_read and \
                _if_guards_only_printing(text, ctx):
            return Use.PRINT_GUARD, "compared with zero only to print"
        return use, f"compared with zero: zero branch {_summary(branch)}"
    return _compare_use(op, cmp)


_RELATIONAL = re.compile(r"(<=|>=|<(?![<=])|>(?![>=]))")


def _computed_and_compared(expr: str, op_text: str) -> Optional[str]:
    """The relational operator of EXPR when the operation OP_TEXT in it
    is a term of a sum or difference ("atomic_read(&c) - w < batch",
    "n + atomic_read(&c) >= max"), else None."""
    at = expr.find(op_text) if op_text else -1
    if at < 0:
        return None
    before, after = expr[:at], expr[at + len(op_text):]
    if not (re.match(r"\s*[-+](?![-+>=])", after) or
            re.search(r"(?<![-+])[-+]\s*\(*\s*$", before)):
        return None
    m = _RELATIONAL.search(expr.replace("->", ".."))
    return m.group(1) if m else None


def _if_guards_only_printing(text: Text, ctx: Record) -> bool:
    """Is CTX the condition of an if statement that controls nothing
    but printing ("if (atomic_read(&x)) seq_printf(m, ...);")?"""
    at = text.offset(int(ctx["span"][1]), int(ctx["span"][2]))
    lo = max(0, at - 40)
    head = re.search(r"\bif\s*(\()\s*$", text.code[lo:at])
    if not head:
        return False
    return _guards_only_printing(text, lo + head.start(1))


def _strip_casts(expr: str) -> str:
    return re.sub(r"^\s*(\(\s*(unsigned|signed|int|long|u\d+|s\d+|bool|"
                  r"size_t|unsigned int|unsigned long)\s*\)\s*)+", "",
                  expr).strip()


def _tests_of(pattern: str, code: str, op: atomic_api.AtomicOp,
              label: str, text: Optional[Text] = None,
              base: int = 0) -> Optional[tuple[Use, str]]:
    """How CODE tests what the regex PATTERN names (a local, a global,
    a member copy), as a use, if it does.  A zero test is TESTED_VALUE
    when the copy is also used otherwise, or when that cannot be told
    (no TEXT, whose code CODE starts at offset BASE of)."""
    for m in re.finditer(pattern, code):
        before = code[max(0, m.start() - 60):m.start()]
        after = code[m.end():m.end() + 60]
        if re.match(_REASSIGNED, after):
            continue            # assigned again, not tested
        if _in_atomic_call(code, m.start()):
            continue            # the counter itself, not a copy of it
        cmp = _Compare(before + "\x00" + after, "\x00")
        if cmp.operator:
            use, detail = _compare_use(op, cmp)
            if use is Use.ZERO_TEST and (
                    text is None or _used_beyond_tests(pattern, code, text,
                                                       base)):
                return Use.TESTED_VALUE, \
                    f"kept in {label}, {detail}, and used otherwise"
            return use, f"kept in {label}, {detail}"
        if _zero_tested(before, after, cmp):
            if text is None or _used_beyond_tests(pattern, code, text, base):
                return Use.TESTED_VALUE, \
                    f"kept in {label}, tested for zero and used otherwise"
            head = re.search(r"\bif\s*(\()\s*!?\s*$", before)
            if head and re.match(r"\s*\)", after) and _guards_only_printing(
                    text, base + m.start() - len(before) + head.start(1)):
                return Use.PRINT_GUARD, \
                    f"kept in {label}, tested for zero only to print"
            return Use.ZERO_TEST, f"kept in {label}, tested for zero"
    return None


_REASSIGNED = r"\s*(=(?!=)|[-+*/%&|^]=|<<=|>>=|\+\+|--)"


def _zero_tested(before: str, after: str, cmp: "_Compare") -> bool:
    """Is the expression between BEFORE and AFTER a truth value: "!x",
    "if (x)", "x && ...", "x ? a : b"?"""
    in_cond = re.search(r"\b(if|while)\s*\(\s*!?\s*$", before) or \
        re.search(r"(&&|\|\|)\s*!?\s*$", before) or \
        re.search(r"\?\s*$", before)
    return bool(cmp.negated or (in_cond and re.match(r"\s*(\)|&&|\|\||\?)",
                                                     after)) or
                re.match(r"\s*\?", after))


def _used_beyond_tests(pattern: str, code: str, text: Text,
                       base: int) -> bool:
    """Is what PATTERN names used in CODE (at offset BASE of TEXT's code)
    other than tested for zero or printed: computed with, passed on,
    stored?"""
    for m in re.finditer(pattern, code):
        before = code[max(0, m.start() - 60):m.start()]
        after = code[m.end():m.end() + 60]
        if re.match(_REASSIGNED, after) or _in_atomic_call(code, m.start()):
            continue
        if re.search(r"\breturn\s*!?\s*$", before):
            return True         # the value leaves the function
        cmp = _Compare(before + "\x00" + after, "\x00")
        if (cmp.operator and cmp.against_zero) or \
                (not cmp.operator and _zero_tested(before, after, cmp)):
            continue
        found = _enclosing_call(code, m.start())
        if found and _is_print_call(text, found[0], base + found[1]):
            continue
        return True
    return False


def _word(name: str) -> str:
    """A regex for the C expression NAME, any spacing."""
    parts = re.findall(r"\w+|->|\S", name)
    return r"(?<![\w>.])" + r"\s*".join(re.escape(p) for p in parts) + \
        r"(?!\w)"


def _in_atomic_call(code: str, at: int) -> bool:
    callee = _enclosing_callee(code, at)
    return bool(callee and atomic_api.decode(callee))


def _function_of(functions: list[lexical.FuncSpan], line: int
                 ) -> Optional[lexical.FuncSpan]:
    for f in functions:
        if f.body_start <= line <= f.body_end:
            return f
    return None


_LOOP = re.compile(r"\b(while|for)\s*\(|\bdo\s*\{")


def _flow_start(text: Text, f: lexical.FuncSpan, line: int) -> int:
    """Where data flow from LINE starts: the outermost loop of F around
    LINE (its condition runs after the body), else LINE itself."""
    at = text.offset(line)
    body = text.offset(f.body_start)
    code = text.code
    for m in _LOOP.finditer(code, body, at):
        if m.group(0).startswith("do"):
            end = _matching(code, m.end() - 1, "{", "}")
        else:
            close = lexical.matching_paren(code, m.end() - 1)
            if close < 0:
                continue
            k = close + 1
            while k < len(code) and code[k] in " \t\n":
                k += 1
            if k < len(code) and code[k] == "{":
                end = _matching(code, k, "{", "}")
            else:
                end = code.find(";", k)
        if end >= at:
            return code.count("\n", 0, m.start()) + 1
    return line


def _matching(code: str, open_at: int, open_ch: str, close_ch: str) -> int:
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == open_ch:
            depth += 1
        elif code[k] == close_ch:
            depth -= 1
            if depth == 0:
                return k
    return -1


# One statement that only prints: "seq_printf(m, ...);", and the
# length-keeping forms "p += sprintf(p, ...);", "len = scnprintf(...);".
_PRINT_STATEMENT = re.compile(r"\s*(?:\w+\s*\+?=\s*)?(\w+)\s*\(")


def _statement_end(code: str, at: int) -> int:
    """The offset of the ';' that ends the statement starting at AT, or
    of the '}' that closes a block starting there; -1 when neither."""
    k = at
    while k < len(code) and code[k] in " \t\n":
        k += 1
    if k < len(code) and code[k] == "{":
        return _matching(code, k, "{", "}")
    depth = 0
    for k in range(at, len(code)):
        c = code[k]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c in "{}":
            return -1
        elif c == ";" and depth == 0:
            return k
    return -1


def _prints_only(text: Text, start: int, end: int) -> bool:
    """Is the code of TEXT between START and END (one statement or a
    block) nothing but calls that print?"""
    segment = text.code[start:end + 1]
    body = segment.strip()
    inner = start + len(segment) - len(segment.lstrip())
    if body.startswith("{"):
        body, inner = body[1:-1], inner + 1
    k, found = 0, False
    while body[k:].strip():
        m = _PRINT_STATEMENT.match(body, k)
        if not m:
            return False
        open_at = m.end() - 1
        close = lexical.matching_paren(body, open_at)
        if close < 0 or not re.match(r"\s*;", body[close + 1:]) or \
                not _is_print_call(text, m.group(1), inner + open_at):
            return False
        k = body.index(";", close) + 1
        found = True
    return found


def _guards_only_printing(text: Text, cond_open: int) -> bool:
    """Does the if statement whose condition opens at COND_OPEN (the
    '(' after "if") control nothing but printing, in both branches?"""
    code = text.code
    close = lexical.matching_paren(code, cond_open)
    if close < 0:
        return False
    end = _statement_end(code, close + 1)
    if end < 0 or not _prints_only(text, close + 1, end):
        return False
    m = re.match(r"\s*else\b", code[end + 1:end + 80])
    if not m:
        return True
    start = end + 1 + m.end()
    if re.match(r"\s*if\b", code[start:start + 20]):
        return False
    else_end = _statement_end(code, start)
    return else_end > 0 and _prints_only(text, start, else_end)


def _is_local(name: str, text: Text, f: lexical.FuncSpan, line: int) -> bool:
    """Is NAME declared in F (a parameter or a local) before LINE?"""
    body = text.offset(f.body_start)
    head = text.code[max(0, body - 600):body]
    head = head[max(head.rfind(";"), head.rfind("}")) + 1:]
    region = head + text.code[body:text.offset(line + 1)]
    if re.search(
            r"(?:^|[;{(,])\s*(?:(?:const|volatile|unsigned|signed|static|"
            r"register|struct|union|enum)\s+)*\w+[\s*]+(?:const\s+)?" +
            re.escape(name) + r"\s*(?:[;,=)]|\[)", region, re.M):
        return True
    # A later declarator of a list: "unsigned long num_waits, num_fences;"
    return bool(re.search(
        r"(?:^|[;{])\s*(?!return\b|goto\b|case\b)(?:(?:const|volatile|"
        r"unsigned|signed|static|register|struct|union|enum)\s+)*"
        r"\w+\s+[^;(){}=]*?,\s*\**\s*" + re.escape(name) +
        r"\s*(?:[;,=]|\[)", region, re.M))


def _follow_local(name: str, line: int, text: Text,
                  functions: list[lexical.FuncSpan],
                  op: atomic_api.AtomicOp) -> Optional[tuple[Use, str]]:
    """A value stored in a variable: how the code after it (the rest of
    the function from the loop around it, for a local; the whole file,
    for a global) tests it, or that it is only printed."""
    f = _function_of(functions, line)
    if f is None:
        return None
    if _is_local(name, text, f, line):
        code = text.lines_between(_flow_start(text, f, line), f.body_end)
        base = text.offset(_flow_start(text, f, line))
        found = _tests_of(_word(name), code, op, name, text, base)
    else:
        # A global outlives the function: other readers may be out of
        # sight, so its zero tests are never the whole story.
        code, base = text.code, 0
        found = _tests_of(_word(name), code, op, f"global {name}")
    if found or op.increases:
        return found
    return _only_printed(name, text, base, code)


def _follow_copy(lhs: str, line: int, text: Text,
                 functions: list[lexical.FuncSpan],
                 op: atomic_api.AtomicOp) -> Optional[tuple[Use, str]]:
    """A value copied out to a member or array element: tested by the
    rest of the function, or through a member of that name anywhere in
    the file ("r->pending = atomic_read(&x); if (r->pending)")."""
    f = _function_of(functions, line)
    if f is not None:
        start = _flow_start(text, f, line)
        found = _tests_of(_word(lhs), text.lines_between(start, f.body_end),
                          op, lhs, text, text.offset(start))
        if found:
            return found
    m = re.search(r"(?:->|\.)\s*(\w+)\s*$", lhs)
    if m:
        # A member outlives the function: who else reads it is not in
        # sight, so its zero tests are never the whole story.
        return _tests_of(r"(?:\b\w+(?:\[[^\]\n]*\])?\s*(?:->|\.)\s*)+" +
                         re.escape(m.group(1)) + r"(?!\w)", text.code, op,
                         "member " + m.group(1))
    return None


def _only_printed(name: str, text: Text, base: int, code: str
                  ) -> Optional[tuple[Use, str]]:
    """If every read of NAME in CODE (at offset BASE of TEXT's code) is
    an argument of a printing call, the value is only printed."""
    reads = 0
    for m in re.finditer(_word(name), code):
        after = code[m.end():m.end() + 4]
        if re.match(r"\s*[-+|]?=(?!=)", after):
            continue            # (re)assigned
        found = _enclosing_call(code, m.start())
        if not found or not _is_print_call(text, found[0], base + found[1]):
            return None
        reads += 1
    return (Use.PRINT, f"kept in {name}, only printed") if reads else None


def _follow_getter(fn: Optional[str], text: Text,
                   op: atomic_api.AtomicOp) -> Optional[tuple[Use, str]]:
    """'return atomic_read(&x->n);' in FN: how callers in this file test
    FN's result (one call level)."""
    if not fn:
        return None
    code = text.code
    for m in re.finditer(r"\b" + re.escape(fn) + r"\s*\(", code):
        close = lexical.matching_paren(code, m.end() - 1)
        if close < 0 or re.match(r"\s*\{", code[close + 1:close + 40]):
            continue
        call = code[m.start():close + 1]
        before = code[max(0, m.start() - 60):m.start()]
        after = code[close + 1:close + 60]
        if re.search(r"[\w*]\s+$", before) and not re.search(
                r"\b(return|if|while)\s*\(?\s*$", before):
            continue            # a declaration or definition
        found = _tests_of(r"\b__refsweep_call__\b",
                          before + "__refsweep_call__" + after, op,
                          "__refsweep_call__")
        if found:
            return found[0], f"returned; caller {call[:40]} " + \
                found[1].split(", ", 1)[-1]
    return None


_LIMIT_WORDS = re.compile(r"MAX|LIMIT|THRESH|MIN|HIGH|LOW|BUDGET|QUOTA|WATER|"
                          r"SIZE|NUM|NR_|COUNT|DEPTH|LEN|CAP")


def _compare_use(op: atomic_api.AtomicOp, cmp: _Compare) -> tuple[Use, str]:
    if cmp.against_zero:
        return Use.ZERO_TEST, "compared with zero"
    other = cmp.other or ""
    if cmp.operator in ("==", "!=") and op.increases and not op.is_read \
            and not (cmp.against_constant and not _LIMIT_WORDS.search(other)):
        # "atomic_inc_return(&x->errors) == 1", "== size": counting up to
        # a mark; a named sentinel ("== AUDIT_SID_UNSET") is an equality.
        return Use.LIMIT, f"new value compared {cmp.operator} {other}"
    if cmp.operator in ("==", "!="):
        if cmp.against_constant and _LIMIT_WORDS.search(other):
            return Use.LIMIT, f"compared {cmp.operator} {other}"
        if cmp.against_constant and not (op.increases or op.decreases):
            return Use.STATE_TEST, f"compared with {other}"
        # A sequence or generation number checked against a snapshot or a
        # sentinel, or a count checked against a value: the classifier
        # tells them apart by whether the variable is ever decremented.
        return Use.EQUALITY, f"compared {cmp.operator} {other}"
    return Use.LIMIT, f"compared {cmp.operator} {other}"


def _summary(branch: str) -> str:
    calls = re.findall(r"\b(\w+)\s*\(", branch)
    calls = [c for c in calls if c not in ("if", "while", "for", "switch",
                                           "return", "sizeof")]
    return "calls " + ", ".join(dict.fromkeys(calls[:4])) if calls \
        else "has no call"


def _constant_args(args: list[str]) -> bool:
    return bool(args) and all(atomic_api.is_constant(a) for a in args)


def _in_formatted_call(text: Text, line: int, col: int) -> bool:
    """Is (LINE, COL) an argument of a call that also takes a printf
    format ("%d", ...)?  Macros such as DEBUGFS_READONLY_FILE(name, 20,
    "%d", atomic_read(&x)) print the value without a call spatch sees."""
    first = max(0, line - 4)
    raw = "\n".join(text.raw[first:line - 1] + [text.raw[line - 1][:col]])
    clean = "\n".join(text.lines[first:line - 1] + [text.lines[line - 1][:col]])
    depth = 0
    for k in range(len(clean) - 1, -1, -1):
        ch = clean[k]
        if ch == ")":
            depth += 1
        elif ch == "(":
            if depth == 0:
                return bool(re.search(r'"[^"\n]*%[-+ #0-9.]*[a-z]', raw[k:]))
            depth -= 1
        elif ch in ";{}" and depth == 0:
            return False
    return False


_SET_CALL_BEFORE = re.compile(
    r"\b(?:raw_|arch_)?atomic(?:64|_long)?_set(?:_release)?\s*\(\s*&?\s*"
    r"([^,;]*?)\s*,\s*$")


def _copied_into_own_kind(before: str, args: list[str]) -> bool:
    """Is the read the new-value argument of an atomic_set() of a counter
    of the same name ("atomic_set(&t->n, atomic_read(&c->n))")?"""
    m = _SET_CALL_BEFORE.search(before)
    if not m or not args:
        return False
    target = re.search(r"(\w+)\s*\)?\s*$", m.group(1))
    source = re.search(r"(\w+)\s*\)?\s*$", args[0])
    return bool(target and source and target.group(1) == source.group(1))


def _loop_use(op: atomic_api.AtomicOp, cmp: _Compare,
              where: str) -> tuple[Use, str]:
    """The value in a loop condition: compared with a bound ("while
    (atomic_read(&started) < nr)", a rendezvous) the loop waits for the
    bound, a limit; otherwise it waits for zero."""
    if cmp.operator and not cmp.against_zero:
        return Use.LIMIT, \
            f"{where} {_compare_use(op, cmp)[1]} (waits for a bound)"
    return Use.WAIT_ZERO, f"{where} (busy wait)"


def _do_while_use(op: atomic_api.AtomicOp, op_pos: list[Any], text: Text,
                  before: str) -> tuple[Use, str]:
    """OP in the condition of a do-while loop, BEFORE the text up to it
    (ending in "while (" or "while (!")."""
    at = text.offset(int(op_pos[1]), int(op_pos[2]))
    opens = at - len(before) + before.rindex("(")
    close = lexical.matching_paren(text.code, opens)
    op_text = _call_text(text, op_pos)
    condition = text.code[opens + 1:close] if close > 0 else op_text
    return _loop_use(op, _Compare(condition, op_text), "do-while condition")


def _bare_use(op: atomic_api.AtomicOp, op_pos: list[Any], text: Text,
              args: list[str],
              functions: list[lexical.FuncSpan]) -> tuple[Use, str]:
    """An operation spatch saw in no recorded context."""
    before = text.before(int(op_pos[1]), int(op_pos[2]), 40)
    if re.search(r"\bswitch\s*\(\s*$", before):
        return Use.STATE_TEST, "switch on the value"
    if re.search(r"\bwhile\s*\(\s*!?\s*$", before) and op.returns_value \
            and not op.is_exchange:
        # do { ... } while (atomic_read(&x)): spatch records no context.
        return _do_while_use(op, op_pos, text, before)
    statement = re.search(r"[;{}:]\s*$", before) or not before.strip()
    if not op.returns_value or (statement and not op.is_read
                                and not op.is_zero_test):
        if op.is_state_write and _constant_args(args[1:]) and (
                op.base not in ("set", "set_release")
                or _CONSTANT.match(args[-1].strip())):
            # atomic_set(&x, 0) resets a counter; atomic_set(&x, FX_BUSY)
            # or an exchange of literals moves a state word.
            return Use.STATE_TEST, f"{op.base} of a constant"
        if op.base in ("set", "set_release"):
            return Use.MOD, "set"
        return Use.MOD, op.base
    if op.is_zero_test:
        return Use.ZERO_TEST, f"{op.base} in an unrecorded context"
    if op.is_read:
        if _copied_into_own_kind(text.before(int(op_pos[1]),
                                             int(op_pos[2]), 160), args):
            # atomic_set(&child->n, atomic_read(&parent->n)): the value
            # only becomes the same variable's value in another instance.
            return Use.MOD, "copied into another instance"
        acc = re.search(r"\b(\w+)\s*[-+|]=\s*$", before)
        if acc:
            # "sum += atomic_read(&x->n);": judged by what sum is used for.
            found = _follow_local(acc.group(1), int(op_pos[1]), text,
                                  functions, op)
            if found:
                return found
        if _in_formatted_call(text, int(op_pos[1]), int(op_pos[2])):
            return Use.PRINT, "formatted by a printf-style macro"
    return Use.VALUE, "value used in an unrecorded context"


def analyse_file(path: str, source: str, records: list[Record],
                 facts: lexical.FileFacts) -> Record:
    """All evidence of one file, as a JSON-able dictionary."""
    text = Text(source)
    ctx_by_op: dict[tuple[int, int], list[Record]] = {}
    spatch_decls: set[tuple[str, int]] = set()
    helpers = []
    spatch_ops = []
    for rec in records:
        kind = rec.get("kind")
        if kind == "ctx":
            key = (int(rec["op"][1]), int(rec["op"][2]))
            ctx_by_op.setdefault(key, []).append(rec)
        elif kind == "decl":
            spatch_decls.add((rec["name"], int(rec["pos"][1])))
        elif kind == "helper":
            helpers.append({"function": rec["function"],
                            "param": rec["param"], "index": rec["index"]})
        elif kind == "op":
            spatch_ops.append(rec)
    ops = []
    seen_sites: set[tuple[int, int]] = set()
    for rec in spatch_ops:
        op = atomic_api.decode(rec["fn"])
        if op is None:
            continue
        pos = rec["pos"]
        args = atomic_api.split_args(_normalise(rec["args"]))
        op = atomic_api.refine(op, args)
        counter = atomic_api.counter_arg(op, args)
        if counter is None:
            continue
        site = (int(pos[1]), int(pos[2]))
        seen_sites.add(site)
        ctxs = ctx_by_op.get(site, [])
        inner = _innermost(ctxs)
        outer = _innermost([c for c in ctxs if c is not inner and
                            c["ctx"] in ("cond", "return", "call")])
        use, detail = classify_use(op, pos, inner, text, facts.functions,
                                   args, outer)
        ops.append(_op_record(op, counter, args, site[0], rec.get("function"),
                              use, detail, True, text, facts))
    missed = 0
    for s in facts.ops:
        if (s.line, s.column) in seen_sites:
            continue
        op = atomic_api.decode(s.fn)
        if op is None:
            continue
        args = atomic_api.split_args(s.args)
        op = atomic_api.refine(op, args)
        counter = atomic_api.counter_arg(op, args)
        if counter is None:
            continue
        if not s.in_macro:
            missed += 1
        if op.is_zero_test:
            use, detail = Use.ZERO_TEST, "seen by text only"
        elif not op.returns_value:
            use, detail = Use.MOD, "seen by text only"
        else:
            use, detail = Use.VALUE, "value-returning op seen by text only"
        ops.append(_op_record(op, counter, args, s.line, s.function, use, detail,
                              False, text, facts))
    for m in _EXPORTS.finditer(text.code):
        args = atomic_api.split_args(_balanced_args(text, m))
        if args:
            lno = text.code.count("\n", 0, m.start()) + 1
            ops.append({"op": m.group(1), "base": "read",
                        "effect": str(Effect.READ),
                        "counter": _normalise(args[-1]), "guard": False,
                        "constant": True,
                        "line": lno,
                        "function": lexical.function_at(facts.functions, lno),
                        "use": str(Use.PRINT), "detail": f"exported by {m.group(1)}()",
                        "parsed": True,
                        "base_type": _base_type(_normalise(args[-1]), lno,
                                                text, facts)})
    ops.extend(_escapes(text, facts))
    decls = []
    for d in facts.decls:
        decls.append({"name": d.name, "type": d.type, "line": d.line,
                      "scope": d.scope, "tag": d.tag,
                      "function": d.function, "static": d.static,
                      "extern": d.extern,
                      "found_by": (["spatch", "lexical"]
                                   if (d.name, d.line) in spatch_decls
                                   else ["lexical"])})
    return {"path": path, "decls": decls, "ops": ops, "helpers": helpers,
            "unparsed_ops": missed, "includes": _includes(path, source),
            "functions": [[f.name, f.body_start, f.body_end]
                          for f in facts.functions]}


_ADDRESS = re.compile(
    r"(?<![&\w)\]])&\s*(\(?\s*[A-Za-z_]\w*\s*\)?(?:\s*(?:->|\.)\s*\w+|"
    r"\s*\[[^\]\n]*\])*)")


def _escapes(text: Text, facts: lexical.FileFacts) -> list[Record]:
    """Addresses taken outside atomic operations ("f(&x->users)",
    "p = &x->users"): the counter may be changed out of sight."""
    code = text.code
    inside: list[tuple[int, int]] = []
    for m in re.finditer(r"\b(?:raw_|arch_)?atomic(?:64|_long)?_\w+\s*\(",
                         code):
        close = lexical.matching_paren(code, m.end() - 1)
        if close > 0:
            inside.append((m.start(), close))
    starts = [0]
    for line in text.lines:
        starts.append(starts[-1] + len(line) + 1)
    out: list[Record] = _raw_counter(text, facts, starts)
    k = 0
    inside.sort()
    for m in _ADDRESS.finditer(code):
        while k < len(inside) and inside[k][1] < m.start():
            k += 1
        if k < len(inside) and inside[k][0] <= m.start() <= inside[k][1]:
            continue
        counter = _normalise(m.group(1))
        if not re.search(r"(->|\.)\w+$|^\(?\w+\)?$", counter):
            continue
        if _binary_and(code, m.start()):
            continue
        lno = lexical._line_of(starts, m.start())
        if text.lines[lno - 1].lstrip().startswith("#"):
            continue
        callee = _enclosing_callee(code, m.start())
        if callee in ("sizeof", "typeof", "offsetof", "__typeof__",
                      "container_of", "ARRAY_SIZE") or \
                (callee and _EXPORTS.match(callee + "(")):
            continue
        out.append({"op": f"&{counter}", "base": "escape", "effect": str(Effect.READ),
                    "counter": counter, "guard": False, "constant": True,
                    "line": lno,
                    "function": lexical.function_at(facts.functions, lno),
                    "use": str(Use.ESCAPE), "callee": callee,
                    "detail": (f"address passed to {callee}()" if callee
                               else "address taken"),
                    "parsed": True,
                    "base_type": _base_type(counter, lno, text, facts)})
    return out


_RAW_COUNTER = re.compile(
    r"(?<![\w.>])([A-Za-z_]\w*(?:\s*(?:->|\.)\s*\w+|\s*\[[^\]\n]*\])*)"
    r"\s*(?:->|\.)\s*counter\b")


def _raw_counter(text: Text, facts: lexical.FileFacts,
                 starts: list[int]) -> list[Record]:
    """Direct accesses to the value field ("x->users.counter"), which
    bypass the atomic API: read or written out of the rules' sight, so
    recorded as an escape."""
    out: list[Record] = []
    if "counter" not in text.code:
        return out      # the pattern needs the word: spare the search
    for m in _RAW_COUNTER.finditer(text.code):
        lno = lexical._line_of(starts, m.start())
        if text.lines[lno - 1].lstrip().startswith("#"):
            continue
        counter = _normalise(m.group(1))
        out.append({"op": f"{counter}.counter", "base": "escape",
                    "effect": str(Effect.READ), "counter": counter,
                    "guard": False, "constant": True, "line": lno,
                    "function": lexical.function_at(facts.functions, lno),
                    "use": str(Use.ESCAPE), "callee": None,
                    "detail": "value field accessed directly",
                    "parsed": True,
                    "base_type": _base_type(counter, lno, text, facts)})
    return out


def _binary_and(code: str, at: int) -> bool:
    """Is the '&' at AT a binary and ("m & c->hits"), not address-of?"""
    k = at - 1
    while k >= 0 and code[k] in " \t\n":
        k -= 1
    if k < 0 or not (code[k].isalnum() or code[k] in "_)]"):
        return False
    word = re.search(r"(\w+)$", code[max(0, k - 20):k + 1])
    return not (word and word.group(1) in ("return", "case", "sizeof",
                                            "typeof", "else", "do"))


def _enclosing_call(code: str, at: int) -> Optional[tuple[str, int]]:
    """Name and '(' offset of the innermost call whose arguments hold
    offset AT, within the statement."""
    depth = 0
    for k in range(at - 1, max(0, at - 400), -1):
        ch = code[k]
        if ch == ")":
            depth += 1
        elif ch == "(":
            if depth == 0:
                m = re.search(r"(\w+)\s*$", code[max(0, k - 60):k])
                return (m.group(1), k) if m else None
            depth -= 1
        elif ch in ";{}" and depth == 0:
            return None
    return None


def _enclosing_callee(code: str, at: int) -> Optional[str]:
    found = _enclosing_call(code, at)
    return found[0] if found else None


def _call_open(text: Text, at: int, callee: str) -> int:
    """The '(' offset of the call of CALLEE around offset AT, or -1."""
    k = at
    for _level in range(6):
        found = _enclosing_call(text.code, k)
        if found is None:
            return -1
        if found[0] == callee:
            return found[1]
        k = found[1]
    return -1


_FORMAT = re.compile(r'"[^"\n]*%[-+ #0-9.]*[a-zA-Z]')


def _is_print_call(text: Text, callee: str, open_at: int) -> bool:
    """Does the call of CALLEE whose '(' is at OPEN_AT print its
    arguments?  Printer-like names need a format string among them."""
    if PRINT_CALLEES.match(callee):
        return True
    if not FORMAT_CALLEES.match(callee) or open_at < 0:
        return False
    close = lexical.matching_paren(text.code, open_at)
    return bool(close > 0 and _FORMAT.search(text.raw_code[open_at:close]))


def _balanced_args(text: Text, m: "re.Match[str]") -> str:
    code = text.code
    close = lexical.matching_paren(code, m.end() - 1)
    return code[m.end():close] if close > 0 else ""


_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def _includes(path: str, source: str) -> list[str]:
    """Tree paths of the headers PATH includes directly (best effort)."""
    out = []
    here = posixpath.dirname(path)
    for m in _INCLUDE.finditer(source):
        name = m.group(2)
        if m.group(1) == '"':
            out.append(posixpath.normpath(posixpath.join(here, name)))
        else:
            out.append("include/" + name)
            out.append("include/uapi/" + name)
    return out


def _normalise(expr: str) -> str:
    """spatch prints tokens separated by spaces: '& f -> refs'."""
    expr = re.sub(r"\s*(->|\.|\[|\]|\(|\)|&|\*)\s*", r"\1", expr)
    return expr.strip()


def _is_not_zero_guard(op: atomic_api.AtomicOp, args: list[str]) -> bool:
    """inc_not_zero(v), or add_unless(v, 1, 0): take a reference only
    while the count is not zero (lookup under RCU)."""
    if op.base == "inc_not_zero":
        return True
    return op.base in ("add_unless", "fetch_add_unless") and len(args) == 3 \
        and args[1].replace(" ", "") == "1" and args[2].replace(" ", "") == "0"


def _op_record(op: atomic_api.AtomicOp, counter: str, args: list[str],
               line: int, function: Optional[str], use: Use, detail: str,
               parsed: bool, text: Text,
               facts: lexical.FileFacts) -> Record:
    counter = _normalise(counter)
    return {"op": op.name, "base": op.base, "effect": str(op.effect),
            "counter": counter,
            "guard": _is_not_zero_guard(op, args),
            "constant": atomic_api.constant_operand(op, args),
            "line": line, "function": function, "use": str(use),
            "detail": detail, "parsed": parsed,
            "base_type": _base_type(counter, line, text, facts)}


def _base_type(counter: str, line: int, text: Text,
               facts: lexical.FileFacts) -> Optional[str]:
    """'struct TAG' of X in '&X->field' when the function declares X."""
    m = re.match(r"^&?\(?(\w+)\)?(->|\.)(\w+)(\[[^\]]*\])?\)?$", counter)
    if not m:
        return None
    var = m.group(1)
    start, end = line, line
    for f in facts.functions:
        if f.body_start <= line <= f.body_end:
            start, end = f.body_start, f.body_end
    # Every file has hundreds of "&x->member": the declarations of X in
    # one function are looked up once (memo on TEXT).
    key = (var, start)
    found = text.memo.get(key)
    if found is None:
        # "struct foo *x", or a typedef name in a declaration ("foo_t *x",
        # "(in_cache_entry *entry,"): refsweep keys a typedef'd struct as
        # "struct NAME", and a name that is no struct's matches no
        # member and changes nothing.
        first = max(start - 6, 1)
        region = text.lines_between(first, end)
        found = [(first + region.count("\n", 0, d.start()),
                  f"{d.group(1) or 'struct'} {d.group(2)}")
                 for d in _local_decl(var).finditer(region)] \
            if var in region else []
        text.memo[key] = found
    local = [tag for at, tag in found if at <= line]
    if local:
        return local[-1]
    # A file-scope object ("static struct foo_table tbl = {...}").
    top = text.memo.get((var, 0))
    if top is None:
        # "static struct foo *var;", or the struct defined with the
        # variable ("static struct foo { ... } var;": its indented
        # members are not in top_level, so the braces are adjacent).
        top = [(0, f"{d.group(1)} {d.group(2)}")
               for d in _top_decl(var).finditer(text.top_level)] \
            if var in text.top_level else []
        text.memo[(var, 0)] = top
    return top[-1][1] if top else None


# Compiled once per name for the whole scan: re's own cache (512
# patterns) is far smaller than the names of one kernel tree.
@functools.lru_cache(maxsize=16384)
def _local_decl(var: str) -> "re.Pattern[str]":
    """A declaration of VAR in a function ("struct foo *VAR;", "foo_t
    *VAR," in a parameter list)."""
    return re.compile(
        r"(?:\b(struct|union)\s+|(?:^|(?<=[;{(,]))\s*(?:const\s+)?"
        r"(?!return\b|sizeof\b|case\b|goto\b|else\b))(\w+)"
        r"(?:\s*\*\s*|\s+)(?:const\s+)?" + re.escape(var) +
        r"\s*[;,=)\[]", re.M)


@functools.lru_cache(maxsize=16384)
def _top_decl(var: str) -> "re.Pattern[str]":
    """A file-scope "struct foo *VAR" (or "struct foo { ... } VAR")."""
    return re.compile(
        r"\b(struct|union)\s+(\w+)\s*(?:\*?|\{[^{}]*\})\s*"
        r"(?:const\s+)?" + re.escape(var) + r"\s*[;,=)\[]")
