# SPDX-License-Identifier: GPL-2.0-only
"""The refcount_t contract, checked over a counter's whole lifetime.

refcount_t (include/linux/refcount.h) is not atomic_t under another name:
``refcount_inc()``/``refcount_add()`` on 0 WARN "addition on 0;
use-after-free" and saturate for good, and a ``refcount_dec()`` that
reaches 0 WARNs "decrement hit 0; leaking memory"; only the
``*_and_test``/``*_and_lock`` puts may take a count to 0.  A counter that
counts from 0 (openers, users, pending work) is not a refcount in that
sense however its last put is written.

A counter converts only when the code in sight shows that its lifetime
fits (Documentation/convert.rst, "The refcount_t contract"):

start
    at least one initial value in sight (``ATOMIC_INIT()`` at its
    declaration or in a designated initializer, ``atomic_set()``), every
    one a constant of 1 or more: none is 0 or a value the code computes,
    a static without initializer starts at 0, and no increment follows a
    zeroing allocation of its object (``kzalloc()``, ``memset()`` ...) in
    the same function with no set in between;
puts
    every put that tests for zero frees or releases in its zero branch,
    or hands the test to its caller (the classifier's ``zero-release``
    and ``zero-returned``): after the last put the object is gone, so no
    one takes a reference from 0 again, except ``inc_not_zero``;
plain decrements
    each ``atomic_dec()`` gives back an increment of the same counter
    expression made earlier in the same block of the same function, so it
    returns the count to what it was before, while that block runs.

Operations whose result refcount_t returns differently map only where the
result is used the way the refcount operation returns it (``site_op``).
Everything the code does not show is a refusal, with its reason.
"""

import re
from typing import NamedTuple, Optional

from refsweep import atomic_api, evidence, lexical
from refsweep.sitetext import Call, Source, split_at
from refsweep.verdicts import Record

# refcount_t counterparts of atomic_t operations that map by name
# (include/linux/refcount.h).
RENAMES = {
    "atomic_inc": "refcount_inc", "atomic_dec": "refcount_dec",
    "atomic_add": "refcount_add", "atomic_read": "refcount_read",
    "atomic_set": "refcount_set",
    "atomic_dec_and_test": "refcount_dec_and_test",
    "atomic_sub_and_test": "refcount_sub_and_test",
    "atomic_inc_not_zero": "refcount_inc_not_zero",
    "atomic_dec_and_lock": "refcount_dec_and_lock",
    "atomic_dec_and_lock_irqsave": "refcount_dec_and_lock_irqsave",
    "atomic_dec_and_mutex_lock": "refcount_dec_and_mutex_lock",
    "atomic_set_release": "refcount_set_release",
}

# Operations that map only in one shape of use (see site_op):
#   "zero": the result tested for zero ("== 0", "!x"), "nonzero": for
#   non-zero ("!= 0", a bare condition), "first": the first argument
#   alone, the result used.
SHAPED = {
    "atomic_dec_return": "refcount_dec_and_test",
    "atomic_sub_return": "refcount_sub_and_test",
    "atomic_add_unless": "",      # by its constant arguments, below
}
ADD_UNLESS = {("1", "0"): "refcount_inc_not_zero",
              ("-1", "1"): "refcount_dec_not_one"}

# Puts that may reach 0 (and must then free).
_ZERO_PUTS = frozenset({"dec_and_test", "sub_and_test", "dec_and_lock",
                        "dec_and_lock_irqsave", "dec_and_mutex_lock",
                        "dec_return", "sub_return"})
_RELEASING = frozenset({"zero-release", "zero-returned"})

# An allocation that returns zeroed memory.
_ZEROING = r"(?:\w*(?:zalloc|calloc)\w*|get_zeroed_page)"
_INT = re.compile(r"^\(?\s*(-?\d+)[uUlL]*\s*\)?$")
_MACRO = re.compile(r"^\(?\s*([A-Z][A-Z0-9_]*)\s*\)?$")

# Text around a call: what precedes an operand that nothing binds
# tighter, what follows one.
_OPEN_BEFORE = re.compile(r"(?:[(,;{}?:]|&&|\|\||[^=!<>]=|\breturn)\s*$")
_TRUTH_BEFORE = re.compile(r"(?:\b(?:if|while)\s*\(|\b(?:un)?likely\s*\(|"
                           r"&&|\|\|)\s*$")
_CLOSE_AFTER = re.compile(r"^\s*(?:\)|&&|\|\||;|,|\?|:)")
_NOT_BEFORE = re.compile(r"(?<![=!<>])!\s*$")


class Value(NamedTuple):
    """An initial or set value: N when the code shows a constant."""
    n: Optional[int]
    text: str
    at: str
    how: str            # "atomic_set()", "ATOMIC_INIT()", ...


class Lifetime(NamedTuple):
    """What the code shows of one counter's lifetime."""
    starts: list[Value]
    takes: list[str]
    puts: list[str]
    given_back: list[str]
    refusals: list[str]


class Contract:
    """Judge counters of one tree against refcount_t's contract."""

    def __init__(self, src: Source, records: list[Record]) -> None:
        self.src = src
        fields: dict[str, int] = {}
        for r in records:
            if r.get("scope") == "member":
                name = r["key"].rsplit(".", 1)[-1]
                fields[name] = fields.get(name, 0) + 1
        self.fields = fields
        self._macros: dict[str, Optional[int]] = {}
        self._lives: dict[str, Lifetime] = {}
        self._designated: Optional[dict[
            str, list[tuple[str, str, Optional[str]]]]] = None

    # -----------------------------------------------------------------
    # Values
    # -----------------------------------------------------------------

    def designated(self) -> dict[str, list[tuple[str, str,
                                                 Optional[str]]]]:
        """Every ".FIELD = ATOMIC_INIT(VALUE)" of the tree: FIELD ->
        [(PATH:LINE, VALUE, TAG of the struct it initializes, if the code
        says)] (one grep for all members)."""
        if self._designated is None:
            self._designated = {}
            for path, line, text in self.src.grep("ATOMIC_INIT"):
                if path.startswith("tools/"):
                    continue
                for m in re.finditer(r"\.(\w+)\s*=\s*ATOMIC_INIT\s*\(\s*"
                                     r"([^()]*(?:\([^()]*\)[^()]*)*)\)?",
                                     text):
                    value = m.group(2) if m.group(0).endswith(")") else "?"
                    at = self.src.offset(path, line) + m.start()
                    self._designated.setdefault(m.group(1), []).append(
                        (f"{path}:{line}", value,
                         self._initialized_tag(path, at)))
        return self._designated

    def _designated_of(self, rec: Record, name: str
                       ) -> list[tuple[str, str, bool]]:
        """The designated initializers that may set member REC (NAME):
        (PATH:LINE, value, whether the code names its struct).  One of
        "struct TAG x = {" or "(struct TAG){" is its own; one whose
        struct cannot be read (a macro's "{ .refs = ATOMIC_INIT(1) }", a
        nested initializer) may be, when no other struct has a member of
        that name or its file names this struct."""
        key = rec["key"]
        tag = key.split(" ", 1)[1].rsplit(".", 1)[0]
        unique = self.fields.get(name, 0) <= 1
        out = []
        for at, text, itag in self.designated().get(name, []):
            if itag == tag:
                out.append((at, text, True))
            elif itag is None and (unique or re.search(
                    rf"\b{tag}\b", self.src.code(split_at(at)[0]))):
                out.append((at, text, False))
        return out

    def initializers(self, rec: Record, name: str) -> list[str]:
        """PATH:LINE of the designated initializers of member REC that
        its struct's name shows are its own (convert rewrites them)."""
        return [at for at, _t, mine in self._designated_of(rec, name)
                if mine]

    def _initialized_tag(self, path: str, at: int) -> Optional[str]:
        """The struct tag (or typedef name) of the initializer whose
        brace encloses offset AT of PATH's code, if it is written there:
        "struct TAG name[] = {", "(struct TAG) {", "TYPE name = {"."""
        code = self.src.code(path)
        depth, i = 0, at
        while i > 0:
            i -= 1
            if code[i] == "}":
                depth += 1
            elif code[i] == "{":
                if depth == 0:
                    break
                depth -= 1
        head = code[max(0, i - 200):i]
        m = re.search(r"\bstruct\s+(\w+)\s+[\w\s\[\]*]*=\s*$", head) or \
            re.search(r"\(\s*struct\s+(\w+)\s*\)\s*$", head) or \
            re.search(r"(?:^|[;}]|\bstatic|\bconst)\s*(\w+)\s+\**\s*\w+"
                      r"\s*(?:\[[^]]*\]\s*)*=\s*$", head)
        return m.group(1) if m else None

    def value(self, text: str, at: str, how: str) -> Value:
        """The constant TEXT means, if the code shows one."""
        t = text.strip()
        m = _INT.match(t)
        if m:
            return Value(int(m.group(1)), t, at, how)
        m = _MACRO.match(t)
        if m:
            return Value(self.macro(m.group(1), split_at(at)[0]), t, at, how)
        return Value(None, t, at, how)

    def macro(self, name: str, path: str) -> Optional[int]:
        """The integer NAME is #defined to: in PATH, else the one every
        #define of NAME in the tree gives."""
        define = re.compile(rf"^\s*#\s*define\s+{name}\s+(.*?)\s*"
                            r"(?:/[*/].*)?$", re.M)
        found = define.findall(self.src.text(path))
        if not found:
            if name not in self._macros:
                found = [m.group(1) for _p, _l, text in
                         self.src.grep(name, word=True)
                         if (m := define.match(text))]
                values = {int(im.group(1)) if (im := _INT.match(v)) else None
                          for v in found}
                self._macros[name] = values.pop() if len(values) == 1 \
                    else None
            return self._macros[name]
        values = {int(im.group(1)) if (im := _INT.match(v)) else None
                  for v in found}
        return values.pop() if len(values) == 1 else None

    def _call(self, path: str, line: int, op: str, name: str,
              via: bool) -> Optional[Call]:
        """The call of OP on LINE whose counter names NAME (any, for an
        operation inside a helper, whose counter is the parameter)."""
        calls = self.src.calls(path, line, op)
        if not via:
            calls = [c for c in calls
                     if c.counter and names_var(c.counter, name)]
        return calls[0] if len(calls) == 1 else None

    def starts(self, rec: Record, name: str) -> tuple[list[Value],
                                                      list[str]]:
        """(initial and set values in sight, refusals about them)."""
        vals: list[Value] = []
        why: list[str] = []
        key = rec["key"]
        for at in [rec["decl"], *rec.get("also_declared", [])]:
            path, line = split_at(at)
            lines = self.src.lines(path)
            decl = " ".join(lines[line - 1:line + 1]) if 0 < line <= \
                len(lines) else ""
            m = re.search(r"\b" + re.escape(name) +
                          r"\s*(?:\[[^]]*\]\s*)?=\s*ATOMIC_INIT\s*\(([^()]*"
                          r"(?:\([^()]*\)[^()]*)*)\)", decl)
            if m:
                vals.append(self.value(m.group(1), at, "ATOMIC_INIT()"))
            elif not rec.get("pointer") and not re.search(r"\bextern\b",
                                                          decl) and (
                    rec.get("scope") == "file" or
                    (rec.get("scope") == "function" and
                     re.search(r"\bstatic\b", decl))):
                vals.append(Value(0, "no initializer", at, "static storage"))
        if rec.get("scope") == "member" and not rec.get("pointer"):
            for at, text, _mine in self._designated_of(rec, name):
                vals.append(self.value(text, at, "designated ATOMIC_INIT()"))
        for e in _strong(rec):
            dec = atomic_api.decode(str(e["op"]))
            if dec is None or dec.base not in ("set", "set_release"):
                continue
            path, line = split_at(e["at"])
            call = self._call(path, line, e["op"], name, bool(e.get("via")))
            text = call.args[1] if call and len(call.args) == 2 else "?"
            vals.append(self.value(text, e["at"], f"{e['op']}() in "
                                   f"{e.get('function') or 'file scope'}"))
        statics = [v for v in vals if v.how == "static storage"]
        real = [v for v in vals if v.how != "static storage"]
        for v in real:
            if v.n is not None and v.n < 1:
                why.append(f"{key} starts at or is set to {v.n} "
                           f"({v.how} at {v.at}): refcount_inc() on 0 "
                           "WARNs (addition on 0)")
            elif v.n is None:
                why.append(f"{key} is set to {v.text} ({v.how} at {v.at}), "
                           "a value not shown to be 1 or more")
        if not real:
            if statics:
                why.append(f"{key} starts at 0 (static storage without "
                           f"initializer at {statics[0].at}) and is never "
                           "set")
            else:
                why.append(f"{key} has no initial value in sight (no "
                           "ATOMIC_INIT(), no atomic_set(); zeroed memory "
                           "counts as 0)")
        return real, why

    # -----------------------------------------------------------------
    # Increments after a zeroing allocation
    # -----------------------------------------------------------------

    def zeroed_then_taken(self, rec: Record, name: str) -> list[str]:
        """Increments that follow a zeroing allocation of their object in
        the same function with no set of the counter in between."""
        out = []
        for e in _strong(rec):
            dec = atomic_api.decode(str(e["op"]))
            if dec is None or e.get("via") or \
                    e.get("effect") != "increase" or dec.is_guard or \
                    dec.base in ("inc_not_zero",):
                continue
            path, line = split_at(e["at"])
            call = self._call(path, line, e["op"], name, False)
            span = self.src.function_span(path, line)
            if call is None or call.counter is None or span is None:
                continue
            base = _object_of(call.counter)
            if base is None:
                continue
            code = self.src.code(path)
            body = code[span[0]:call.start]
            b = re.escape(base)
            alloc = None
            for m in re.finditer(
                    rf"(?<![\w>.]){b}\s*=\s*(?:\([^;=]*?\)\s*)?"
                    rf"{_ZEROING}\s*\(|(?<![\w>.]){b}\s*=[^;]*__GFP_ZERO|"
                    rf"\bmemset\s*\(\s*\(?\s*&?\s*\(?\s*{b}\s*[,)]", body):
                alloc = m
            if alloc is None:
                continue
            between = body[alloc.end():]
            if re.search(r"\batomic_set\w*\s*\([^;]*\b" + re.escape(name) +
                         r"\b", between):
                continue
            at_alloc = f"{path}:{self.src.line_of(path, span[0] + alloc.start())}"
            what = re.sub(r"\s+", " ", alloc.group(0)).strip()
            out.append(f"{e['op']} at {e['at']} takes {rec['key']} right "
                       f"after a zeroing allocation ({what}... at "
                       f"{at_alloc}) with no set in between: refcount_inc() "
                       "would add on 0")
        return out

    # -----------------------------------------------------------------
    # Allocations of the object that never set the counter
    # -----------------------------------------------------------------

    def unset_allocations(self, rec: Record, name: str) -> list[str]:
        """Allocations of member REC's struct after which the counter is
        not set in the allocating function (nor by a function of its
        evidence that sets it, called there): such an object starts at 0
        (zeroed memory) or at garbage, whatever the other paths set.  A
        function that returns the object it allocated (or got from such
        a function) without setting the counter passes the duty to its
        callers, three levels up; a struct embedded in another is not
        followed and refuses."""
        key = rec["key"]
        if rec.get("scope") != "member":
            return []
        tag = key.split(" ", 1)[1].rsplit(".", 1)[0]
        setters = {str(e.get("function")) for e in _strong(rec)
                   if (d := atomic_api.decode(str(e["op"]))) is not None
                   and d.base in ("set", "set_release") and e.get("function")}
        sets = re.compile(r"\batomic_set\w*\s*\([^;]*\b" + re.escape(name) +
                          r"\b|\." + re.escape(name) + r"\s*=\s*ATOMIC_INIT" +
                          "".join(rf"|\b{re.escape(f)}\s*\(" for f in setters))
        hits = [h for h in self.src.grep(tag, word=True)
                if not h[0].startswith("tools/")]
        # functions of the tree that return a struct TAG *: their own
        # allocations are judged in their bodies, not at their callers
        returning = {m.group(1) for _p, _l, text in hits for m in
                     re.finditer(rf"\bstruct\s+{tag}\s*\*\s*(\w+)\s*\(",
                                 text)}
        out: list[str] = []
        helpers: dict[str, str] = {}
        for path in sorted({p for p, _l, _t in hits}):
            code = self.src.code(path)
            m = re.search(rf"^[ \t]+struct\s+{tag}\s+\w+(?:\[[^]]*\])?\s*;",
                          code, re.M)
            if m and "{" in code[:m.start()]:
                out.append(f"{key}: struct {tag} is embedded in another "
                           f"struct at {path}:{self.src.line_of(path, m.start())}"
                           ", whose allocations are not followed")
                return out
            for f, body, head in self._bodies(path):
                for v, at, callee in _allocated(body, head, tag):
                    if callee in returning or sets.search(body[at:]):
                        continue
                    where = f"{path}:{self.src.line_of(path, self.src.offset(path, f.body_start) + at)}"
                    if _returns(body[at:], v) and f.name in returning:
                        helpers.setdefault(f.name, where)
                        continue
                    out.append(f"{key}: struct {tag} is allocated at {where} "
                               f"({f.name}) and the counter is not set there: "
                               "it starts at 0 or at garbage")
        todo = sorted(helpers.items())
        seen = set(helpers)
        for _level in range(3):
            later: list[tuple[str, str]] = []
            for helper, where in todo:
                for path in sorted({p for p, _l, _t in
                                    self.src.grep(helper, word=True)}):
                    for f, body, _head in self._bodies(path):
                        if f.name == helper:
                            continue
                        for m in re.finditer(
                                rf"(?:\b(\w+)\s*=\s*(?:\([^;=]*?\)\s*)?)?"
                                rf"\b{re.escape(helper)}\s*\(", body):
                            rest = body[m.start():]
                            if sets.search(rest):
                                continue
                            site = f"{path}:{self.src.line_of(path, self.src.offset(path, f.body_start) + m.start())}"
                            if f.name in returning and (
                                    m.group(1) is None and re.search(
                                        r"\breturn\s*$", body[:m.start()])
                                    or m.group(1) and _returns(rest,
                                                               m.group(1))):
                                if f.name not in seen:
                                    seen.add(f.name)
                                    later.append((f.name, site))
                                continue
                            out.append(
                                f"{key}: struct {tag} comes from {helper}() "
                                f"(allocated at {where}) at {site} ({f.name}) "
                                "and the counter is not set there: it starts "
                                "at 0 or at garbage")
            todo = later
        for helper, where in todo:
            out.append(f"{key}: struct {tag} comes from {helper}() at {where}"
                       " and is returned further up than refsweep follows: "
                       "it starts at 0 or at garbage")
        return out

    def _bodies(self, path: str) -> list[tuple[lexical.FuncSpan, str, str]]:
        """(function, body code, header code) of every function of PATH."""
        code = self.src.code(path)
        out = []
        for f in self.src.functions(path):
            start = self.src.offset(path, f.body_start)
            end = self.src.offset(path, f.body_end + 1)
            # the signature: back to the end of what precedes it
            before = code[max(0, start - 600):start]
            head = re.split(r"[;}]", before)[-1]
            out.append((f, code[start:end], head))
        return out

    # -----------------------------------------------------------------
    # Plain decrements
    # -----------------------------------------------------------------

    def given_back(self, rec: Record, name: str, e: Record
                   ) -> Optional[str]:
        """The increment that plain decrement E gives back: one of the
        same counter expression, earlier in the same block of the same
        function (so it runs before E on every path to E)."""
        if e.get("via"):
            return None
        path, line = split_at(e["at"])
        call = self._call(path, line, e["op"], name, False)
        if call is None:
            return None
        code = self.src.code(path)
        for inc in _strong(rec):
            if inc.get("effect") != "increase" or inc.get("via") or \
                    inc.get("function") != e.get("function"):
                continue
            ipath, iline = split_at(inc["at"])
            if ipath != path or iline > line:
                continue
            dec = atomic_api.decode(str(inc["op"]))
            if dec is None:
                continue
            icall = self._call(ipath, iline, inc["op"], name, False)
            if icall is None or icall.counter != call.counter or \
                    icall.start >= call.start:
                continue
            if dec.is_guard:
                # "if (!atomic_inc_not_zero(&x)) return;" or "if
                # (atomic_inc_not_zero(&x)) {": taken where the block runs
                if dec.base == "add_unless" and tuple(
                        re.sub(r"\s+", "", a) for a in icall.args[1:]) != \
                        ("1", "0"):
                    continue
                if dec.base not in ("inc_not_zero", "add_unless"):
                    continue
                start = _taken_from(code, icall)
                if start is not None and _same_block(code, start, call.start):
                    return f"{inc['op']} at {inc['at']}"
                continue
            if dec.returns_value:
                continue
            if _statement_start(code, icall.start) and \
                    _same_block(code, icall.close, call.start):
                return f"{inc['op']} at {inc['at']}"
        return None

    # -----------------------------------------------------------------
    # Last puts
    # -----------------------------------------------------------------

    def put_frees(self, e: Record, name: str) -> tuple[Optional[bool], str]:
        """Whether the code run when put E takes the counter to 0 frees
        or releases the object on every path: (True, what it calls),
        (False, why not), or (None, "") when E is no if condition."""
        path, line = split_at(e["at"])
        call = self._call(path, line, e["op"], name, bool(e.get("via")))
        if call is None:
            return False, "the put is not found in the source line"
        code = self.src.code(path)
        cond = _if_condition(code, call)
        if cond is None:
            return None, ""
        open_at, close = cond
        inner = code[open_at + 1:call.start]
        rest = code[call.close + 1:close]
        if e["op"] in SHAPED:
            # atomic_dec_return() == 0, !atomic_dec_return(), a bare
            # atomic_dec_return(): as site_op reads it
            form = _shape(code, call)
            if form is None:
                return False, "its result is not tested for zero alone"
            inner = re.sub(r"(?:\b0\s*[!=]=|!)\s*$", "", inner)
            rest = re.sub(r"^\s*[!=]=\s*0\b", "", rest)
            negated = form == "nonzero"
        else:
            # the put alone, possibly behind "!", likely()/unlikely() and
            # conditions joined by && before it ("frag && put(...)")
            negated = inner.count("!") % 2 == 1
        if re.search(r"\|\||[=<>?]", inner + rest) or \
                re.search(r"&&", rest) or \
                not re.fullmatch(r"[\s!(]*(?:(?:un)?likely\s*\([\s!(]*)?"
                                 r"(?:.*&&[\s!(]*)?", inner, re.S) or \
                not re.fullmatch(r"[\s)]*", rest):
            return False, "the put is part of a larger condition"
        then_start, then_end = _statement(code, close + 1)
        branch: Optional[str] = None
        if not negated:
            branch = code[then_start:then_end]
        else:
            m = re.match(r"\s*else\b", code[then_end:])
            if m:
                s0, s1 = _statement(code, then_end + m.end())
                branch = code[s0:s1]
            elif _exits(code[then_start:then_end]):
                branch = code[then_end:_block_end(code, then_end)]
        if branch is None:
            return False, "no code runs only when it reaches 0"
        found = _releases(branch)
        if found is None:
            return False, "its zero branch frees or releases only on " \
                "some paths, or not at all"
        return True, f"reaching 0 there calls {found}"

    # -----------------------------------------------------------------
    # The whole lifetime
    # -----------------------------------------------------------------

    def lifetime(self, rec: Record, name: str) -> Lifetime:
        """What the code shows of REC's lifetime (NAME: its variable)."""
        if rec["key"] not in self._lives:
            self._lives[rec["key"]] = self._lifetime(rec, name)
        return self._lives[rec["key"]]

    def _lifetime(self, rec: Record, name: str) -> Lifetime:
        starts, refusals = self.starts(rec, name)
        refusals += self.zeroed_then_taken(rec, name)
        if not refusals:
            # the costly look at every allocation, for counters that
            # otherwise start right
            refusals += self.unset_allocations(rec, name)
        takes: list[str] = []
        puts: list[str] = []
        given: list[str] = []
        for e in _strong(rec):
            dec = atomic_api.decode(str(e["op"]))
            if dec is None or not e.get("parsed", True):
                continue
            where = f"{e['op']} at {e['at']}"
            if e.get("function"):
                where += f" ({e['function']})"
            if e.get("effect") == "increase":
                takes.append(where)
                continue
            if e.get("effect") != "decrease":
                continue
            if dec.base in _ZERO_PUTS:
                frees, what = self.put_frees(e, name)
                if frees:
                    puts.append(f"{where}: {what}")
                elif frees is None and e.get("use") == "zero-returned":
                    puts.append(f"{where}: the zero test is returned to the "
                                "caller")
                elif dec.base not in ("dec_return", "sub_return") or \
                        e.get("use") not in ("value", "id", "limit",
                                             "equality"):
                    # (a *_return whose value is used is no put: site_op
                    # refuses it)
                    refusals.append(
                        f"{where}: {rec['key']} reaching 0 there neither "
                        "frees nor releases on every path "
                        f"({what or e.get('detail', '')}): it may be taken "
                        "again from 0")
            elif dec.base in ("dec", "sub") or dec.base == "add":
                back = self.given_back(rec, name, e)
                if back is None:
                    refusals.append(
                        f"{where}: plain decrement of {rec['key']} not "
                        "shown to stay above 0 (no increment of it earlier "
                        "in the same block): refcount_dec() to 0 WARNs")
                else:
                    given.append(f"{where} gives back {back}")
        return Lifetime(starts, takes, puts, given, refusals)


def _strong(rec: Record) -> list[Record]:
    return [e for e in rec.get("evidence", []) if not e.get("weak")
            and e.get("use") != "escape"]


def names_var(counter: str, name: str) -> bool:
    """Whether the counter expression COUNTER names variable NAME."""
    m = re.search(r"(\w+)(?:\[[^]]*\])*\)*$", counter)
    if m is not None and m.group(1) == name:
        return True
    # a pointer-held counter plus an offset: "d->hits+i", "(p+n)"
    base = re.match(r"^\(*([\w.>-]+?)\)*\+", counter)
    return base is not None and names_var(base.group(1), name)


def _object_of(counter: str) -> Optional[str]:
    """The pointer (or struct value) whose object holds COUNTER:
    "&o->a.refs" -> "o", "&o->sub->refs" -> "o->sub", "&s.refs" -> "s"."""
    c = counter.strip()
    while c.startswith(("&", "(")):
        c = c[1:].strip()
    c = c.rstrip(")")
    if "->" in c:
        return c[:c.rindex("->")] or None
    if "." in c:
        return c.split(".", 1)[0] or None
    return None


def _allocated(body: str, head: str, tag: str
               ) -> list[tuple[str, int, str]]:
    """(variable, offset in BODY, callee) of every allocation in a
    function (BODY, HEAD: its code) of an object of struct TAG: a "struct
    TAG *v" of the function assigned from an *alloc*() or kmemdup()
    call."""
    names = set(re.findall(rf"\bstruct\s+{tag}\s*\*\s*(\w+)", head + body))
    out = []
    for v in sorted(names):
        for m in re.finditer(rf"(?<![\w>.]){re.escape(v)}\s*=\s*(?:\([^;=]*?\)"
                             rf"\s*)?(\w*(?:alloc|kmemdup)\w*)\s*\(", body):
            out.append((v, m.start(), m.group(1)))
    return out


def _returns(code: str, v: str) -> bool:
    """Whether CODE returns the pointer V."""
    return bool(re.search(rf"\breturn\s+\(?\s*{re.escape(v)}\s*\)?\s*;",
                          code))


def _if_condition(code: str, call: Call) -> Optional[tuple[int, int]]:
    """(offset of "(", offset of ")") of the if condition CALL is in."""
    head = code[max(0, call.start - 300):call.start]
    for m in reversed(list(re.finditer(r"\bif\s*\(", head))):
        open_at = call.start - len(head) + m.end() - 1
        close = lexical.matching_paren(code, open_at)
        if close > call.close:
            return open_at, close
    return None


def _statement(code: str, at: int) -> tuple[int, int]:
    """(start, end) of the statement that begins at AT (blanks skipped):
    a block, an if with its else, a loop, or up to its ";"."""
    n = len(code)
    i = at
    while i < n and code[i].isspace():
        i += 1
    start = i
    if code.startswith("{", i):
        return start, _close_brace(code, i) + 1
    m = re.match(r"(if|while|for|switch)\s*\(", code[i:])
    if m:
        close = lexical.matching_paren(code, i + m.end() - 1)
        if close < 0:
            return start, n
        _s, end = _statement(code, close + 1)
        if m.group(1) == "if":
            e = re.match(r"\s*else\b", code[end:])
            if e:
                _s, end = _statement(code, end + e.end())
        return start, end
    m = re.match(r"do\b", code[i:])
    if m:
        _s, end = _statement(code, i + m.end())
        semi = code.find(";", end)
        return start, (semi + 1 if semi >= 0 else n)
    depth = 0
    while i < n:
        c = code[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return start, i
        elif c == ";" and depth == 0:
            return start, i + 1
        i += 1
    return start, n


def _close_brace(code: str, open_at: int) -> int:
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(code) - 1


def _block_end(code: str, at: int) -> int:
    """Offset of the "}" that closes the block AT is in."""
    depth = 0
    for k in range(at, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            if depth == 0:
                return k
            depth -= 1
    return len(code)


def _exits(stmt: str) -> bool:
    """Whether STMT always leaves (ends in return or goto)."""
    body = stmt.strip()
    if body.startswith("{"):
        body = body[1:-1]
    return bool(re.search(r"\b(?:return\b[^;]*|goto\s+\w+\s*);\s*$", body))


def _releases(branch: str) -> Optional[str]:
    """The call by which BRANCH frees or releases on every path through
    it (a statement of its own at its top level, or in both arms of an
    if/else), or None."""
    body = branch.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    i = 0
    while i < len(body):
        s0, s1 = _statement(body, i)
        if s1 <= s0:
            break
        stmt = body[s0:s1]
        m = re.match(r"if\s*\(", stmt)
        if m:
            close = lexical.matching_paren(stmt, m.end() - 1)
            t0, t1 = _statement(stmt, close + 1)
            e = re.match(r"\s*else\b", stmt[t1:])
            if e:
                a = _releases(stmt[t0:t1])
                b = _releases(stmt[t1 + e.end():])
                if a and b:
                    return f"{a} or {b}"
        elif stmt.startswith("{"):
            found = _releases(stmt)
            if found:
                return found
        elif not re.match(r"(?:for|while|do|switch)\b", stmt):
            # the classifier's release calls (free, put, destroy,
            # call_rcu, queue_work, *_done ...): refsweep/evidence.py
            m = evidence.RELEASE_CALLS.search(stmt)
            if m:
                return f"{m.group(1)}()"
        i = s1
    return None


def _statement_start(code: str, at: int) -> bool:
    """Whether the call at AT begins a statement of its block (not the
    body of an unbraced if/else/loop, not inside a condition)."""
    head = code[max(0, at - 200):at]
    m = re.search(r"[;{}]\s*(?:\(\s*void\s*\)\s*)?$", head)
    if m is None:
        return False
    # "if (x) atomic_inc(&c);" ends with ")", not ";{}"; "else atomic_inc"
    return True


def _taken_from(code: str, call: Call) -> Optional[int]:
    """Where the code that runs only when the guard CALL took a
    reference starts: after "if (!CALL) return ...;" (or goto) in its
    block, or inside the braces of "if (CALL) {"."""
    head = code[max(0, call.start - 200):call.start]
    tail = code[call.close + 1:call.close + 300]
    if re.search(r"[;{}]\s*if\s*\(\s*!\s*$", head):
        m = re.match(r"\s*\)\s*(\{\s*)?(?:return\b[^;{}]*|goto\s+\w+\s*);"
                     r"\s*", tail)
        if m is None:
            return None
        end = call.close + 1 + m.end()
        if m.group(1):
            if not tail[m.end():].startswith("}"):
                return None
            end += 1
        return end
    if re.search(r"[;{}]\s*if\s*\(\s*$", head):
        m = re.match(r"\s*\)\s*\{", tail)
        return call.close + 1 + m.end() if m else None
    return None


def _same_block(code: str, start: int, end: int) -> bool:
    """Whether END lies in the block of START or one nested in it: the
    braces between never close START's block, no "else" or case label of
    that block lies between, and no loop (a decrement in a loop may run
    more often than the increment before it)."""
    depth = 0
    text = code[start:end]
    for m in re.finditer(r"[{}]|\b(?:else|case|for|while|do)\b|"
                         r"\bdefault\s*:", text):
        tok = m.group(0)
        if tok in ("for", "while", "do"):
            return False
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
            if depth < 0:
                return False
        elif depth == 0:
            return False
    return True


# ---------------------------------------------------------------------
# Operations whose result is used
# ---------------------------------------------------------------------

def _shape(code: str, call: Call) -> Optional[str]:
    """How the result of CALL is used: "zero" when the code tests it for
    zero ("x == 0", "0 == x", "!x"), "nonzero" when for non-zero ("x !=
    0", "if (x)", "a && x"), None otherwise."""
    before = code[max(0, call.start - 200):call.start]
    after = code[call.close + 1:call.close + 80]
    m = re.search(r"\b0\s*(==|!=)\s*$", before)
    if m and _OPEN_BEFORE.search(before[:m.start()]) and \
            _CLOSE_AFTER.match(after):
        return "zero" if m.group(1) == "==" else "nonzero"
    m = _NOT_BEFORE.search(before)
    if m and _OPEN_BEFORE.search(before[:m.start()]) and \
            _CLOSE_AFTER.match(after):
        return "zero"
    if not _OPEN_BEFORE.search(before):
        return None
    m = re.match(r"^\s*(==|!=)\s*0\b", after)
    if m and _CLOSE_AFTER.match(after[m.end():]):
        return "zero" if m.group(1) == "==" else "nonzero"
    if _TRUTH_BEFORE.search(before) and \
            re.match(r"^\s*(?:\)|&&|\|\|)", after):
        return "nonzero"
    if re.match(r"^\s*(?:&&|\|\|)", after):
        return "nonzero"
    return None


def _used(code: str, call: Call) -> bool:
    """Whether the result of CALL is used (not a statement of its own)."""
    head = code[max(0, call.start - 200):call.start]
    tail = code[call.close + 1:call.close + 20]
    return not (re.search(r"[;{}]\s*$", head) and re.match(r"^\s*;", tail))


def site_op(src: Source, e: Record, name: str
            ) -> tuple[Optional[str], str, str]:
    """(refcount_t operation, form, why not) for operation evidence E on
    the counter NAME: a rename (form ""), a shaped rewrite ("zero",
    "nonzero", "first"), or None and the reason."""
    op = str(e["op"])
    at = e.get("at", "?")
    effect = e.get("effect")
    if op in RENAMES:
        if op == "atomic_add" and effect == "decrease":
            return None, "", (f"{op} at {at} adds a negative amount: "
                              "has no refcount_t counterpart")
        return RENAMES[op], "", ""
    if op not in SHAPED:
        return None, "", f"{op} at {at} has no refcount_t counterpart"
    path, line = split_at(at)
    calls = src.calls(path, line, op)
    if not e.get("via"):
        calls = [c for c in calls if c.counter and names_var(c.counter, name)]
    if len(calls) != 1:
        return None, "", (f"{op} at {at}: the call is not found in the "
                          "source line: has no refcount_t counterpart")
    call = calls[0]
    code = src.code(path)
    if op == "atomic_add_unless":
        args = tuple(re.sub(r"\s+", "", a) for a in call.args[1:])
        new = ADD_UNLESS.get(args)  # type: ignore[arg-type]
        if new is None:
            return None, "", (f"{op}(v, {', '.join(args)}) at {at} has no "
                              "refcount_t counterpart (only (v, 1, 0) and "
                              "(v, -1, 1) have)")
        if not _used(code, call):
            return None, "", (f"{op} at {at}: its result is not used, and "
                              f"{new}() must be checked: has no refcount_t "
                              "counterpart")
        return new, "first", ""
    form = _shape(code, call)
    if form is None:
        return None, "", (f"{op} at {at}: its result is used as a count, "
                          "not only tested for zero: has no refcount_t "
                          "counterpart")
    return SHAPED[op], form, ""
