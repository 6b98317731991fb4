# SPDX-License-Identifier: GPL-2.0-only
"""The pure functions: op decoding, comparison parsing, data flow, the
lexical pass's tokens and function names, print and address detection."""

from typing import Optional

import pytest

import conftest  # noqa: F401  (puts the checkout on sys.path)
from refsweep import atomic_api, classify, evidence, lexical
from refsweep.atomic_api import Effect
from refsweep.records import CHECKED, Evidence, Use, Verdict


@pytest.mark.parametrize("name,base,counter_last,effect", [
    ("atomic_inc", "inc", False, Effect.INCREASE),
    ("atomic64_dec_return_relaxed", "dec_return", False, Effect.DECREASE),
    ("atomic_long_add_return_acquire", "add_return", True, Effect.INCREASE),
    ("atomic_read_acquire", "read_acquire", False, Effect.READ),
    ("atomic_set_release", "set_release", False, Effect.SET),
    ("atomic_cond_read_acquire", "cond_read", False, Effect.READ),
    ("atomic64_cond_read_relaxed", "cond_read", False, Effect.READ),
    ("raw_atomic_try_cmpxchg", "try_cmpxchg", False, Effect.EXCHANGE),
    ("atomic_fetch_andnot", "fetch_andnot", True, Effect.BITS),
    ("atomic_dec_and_mutex_lock", "dec_and_mutex_lock", False,
     Effect.DECREASE),
])
def test_decode(name: str, base: str, counter_last: bool,
                effect: Effect) -> None:
    op = atomic_api.decode(name)
    assert op is not None
    assert (op.base, op.counter_last, op.effect) == \
        (base, counter_last, effect)


@pytest.mark.parametrize("name", ["atomic_t", "atomic_notifier_call_chain",
                                  "atomic_foo", "refcount_inc", "atomic_"])
def test_decode_rejects(name: str) -> None:
    assert atomic_api.decode(name) is None


def test_every_table_entry_decodes() -> None:
    for base in atomic_api.OPS:
        op = atomic_api.decode("atomic_" + base)
        assert op is not None and op.base == base


def _op_and_args(call: str) -> tuple[atomic_api.AtomicOp, list[str]]:
    name, _sep, rest = call.partition("(")
    op = atomic_api.decode(name)
    assert op is not None
    return op, atomic_api.split_args(rest[:-1])


@pytest.mark.parametrize("call,effect", [
    ("atomic_add(1, &v)", Effect.INCREASE),
    ("atomic_add(-1, &v)", Effect.DECREASE),
    ("atomic_add(- n, &v)", Effect.DECREASE),
    ("atomic_sub(-n, &v)", Effect.INCREASE),
    ("atomic_sub(n - 1, &v)", Effect.DECREASE),
    ("atomic_sub_return(-1, &v)", Effect.INCREASE),
    ("atomic_add_unless(&v, -1, 0)", Effect.DECREASE),
    ("atomic_try_cmpxchg(&v, &old, old - 1)", Effect.DECREASE),
    ("atomic_cmpxchg(&v, old, old + 1)", Effect.INCREASE),
    ("atomic_cmpxchg(&v, 0, FX_BUSY)", Effect.EXCHANGE),
    ("atomic_cmpxchg(&v, old, old | FLAG)", Effect.EXCHANGE),
    ("atomic_set(&v, -1)", Effect.SET),
    ("atomic_inc(&v)", Effect.INCREASE),
])
def test_effect_of_call(call: str, effect: Effect) -> None:
    op, args = _op_and_args(call)
    assert atomic_api.effect_of(op, args) is effect
    assert atomic_api.refine(op, args).effect is effect


@pytest.mark.parametrize("call,signed", [
    ("atomic_long_add_return(new - old, &v)", True),
    ("atomic_add(len-hdr, &v)", True),
    ("atomic_sub((a - b), &v)", True),
    ("atomic_add(-1, &v)", False),          # a negative constant: known
    ("atomic_add(p->len, &v)", False),      # "->" is not a minus
    ("atomic_add(f(a - b), &v)", False),    # inside a call: not known
    ("atomic_add((int)(a) - 1, &v)", True),
    ("atomic_add_return(segs + delta, &v)", False),
    ("atomic_add(i--, &v)", False),
    ("atomic_set(&v, a - b)", False),       # not an amount
    ("atomic_inc_return(&v)", False),
])
def test_signed_amount(call: str, signed: bool) -> None:
    op, args = _op_and_args(call)
    assert atomic_api.signed_amount(op, args) is signed


@pytest.mark.parametrize("call,constant", [
    ("atomic_inc(&v)", True),               # no amount: one
    ("atomic_dec_and_test(&v)", True),
    ("atomic_read(&v)", True),
    ("atomic_add(4, &v)", True),
    ("atomic_add(FX_STEP, &v)", True),      # an upper-case macro
    ("atomic_add(0x10UL, &v)", True),
    ("atomic_add(n, &v)", False),           # its sign is not in sight
    ("atomic_add(sizeof(x), &v)", False),
    ("atomic_set(&v, 1)", True),
    ("atomic_set(&v, n - 1)", False),
    ("atomic_cmpxchg(&v, old, 1)", True),   # the new value counts
    ("atomic_cmpxchg(&v, 0, old + 1)", False),
    ("atomic_try_cmpxchg(&v, &old, old - 1)", False),
    ("atomic_xchg(&v, 0)", True),
])
def test_constant_operand(call: str, constant: bool) -> None:
    op, args = _op_and_args(call)
    assert atomic_api.constant_operand(op, args) is constant


def test_split_args_and_counter() -> None:
    args = atomic_api.split_args("f(a, b), &x->y[i, j], c")
    assert args == ["f(a, b)", "&x->y[i, j]", "c"]
    op = atomic_api.decode("atomic_add")
    assert op is not None and atomic_api.counter_arg(op, args) == "c"


OP = "atomic_read(&x)"


@pytest.mark.parametrize("expr,operator,other,negated", [
    ("atomic_read(&x) == 1", "==", "1", False),
    ("atomic_read(&x)==1", "==", "1", False),
    ("atomic_read(&x) != p->limit", "!=", "p->limit", False),
    ("(atomic_read(&x)) >= MAX_USERS", ">=", "MAX_USERS", False),
    ("atomic_read(&x) > 0", ">", "0", False),
    ("atomic_read(&x) < -1", "<", "-1", False),
    ("x->y >= atomic_read(&x)", "<=", "x->y", False),
    ("a[3] < atomic_read(&x)", ">", "a[3]", False),
    ("atomic_read(&x) >> 10", None, None, False),
    ("atomic_read(&x) << PAGE_SHIFT", None, None, False),
    ("a >> atomic_read(&x)", None, None, False),
    ("1 << atomic_read(&x)", None, None, False),
    ("atomic_read(&x) >>= 1", None, None, False),
    ("!atomic_read(&x)", None, None, True),
])
def test_compare(expr: str, operator: Optional[str], other: Optional[str],
                 negated: bool) -> None:
    cmp = evidence._Compare(expr, OP)
    assert (cmp.operator, cmp.other, cmp.negated) == \
        (operator, other, negated)


def test_compare_zero_and_constant() -> None:
    assert evidence._Compare("atomic_read(&x) == 0", OP).against_zero
    assert evidence._Compare("atomic_read(&x) < 1", OP).against_zero
    assert not evidence._Compare("atomic_read(&x) > 1", OP).against_zero
    assert evidence._Compare("atomic_read(&x) == FX_MAX", OP) \
        .against_constant
    assert evidence._Compare("atomic_read(&x) <= 0", OP).zero_when_true
    assert not evidence._Compare("atomic_read(&x) > 0", OP).zero_when_true


def flow(source: str, name: str, line: int, base: str = "read"
         ) -> Optional[tuple[Use, str]]:
    text = evidence.Text(source)
    facts = lexical.scan_text(source)
    op = atomic_api.decode("atomic_" + base)
    assert op is not None
    return evidence._follow_local(name, line, text, facts.functions, op)


LOOP = """\
void f(struct b *b)
{
\tint n = 1;

\twhile (n) {
\t\tmsleep(1);
\t\tn = atomic_read(&b->users);
\t\tpr_debug("%d", n);
\t}
}
"""


def test_flow_reaches_the_loop_condition() -> None:
    found = flow(LOOP, "n", 7)
    assert found is not None and found[0] is Use.ZERO_TEST


def test_flow_forward_only_without_a_loop() -> None:
    src = LOOP.replace("while (n) {", "if (n) {").replace(
        "\t\tn = atomic_read", "\t}\n\t{\n\t\tn = atomic_read")
    found = flow(src, "n", 8)
    assert found is not None and found[0] is Use.PRINT


def test_flow_printed_only_with_a_format() -> None:
    src = "void f(struct b *b)\n{\n\tint n;\n\n\tn = atomic_read(&b->c);\n" \
          "\tfoo_info(b, \"%d\", n);\n}\n"
    found = flow(src, "n", 5)
    assert found is not None and found[0] is Use.PRINT
    found = flow(src.replace('"%d", ', ""), "n", 5)
    assert found is None


def test_flow_of_a_global_reads_the_whole_file() -> None:
    src = ("static int last;\n\nvoid f(struct b *b)\n{\n"
           "\tlast = atomic_read(&b->c);\n\tpr_info(\"%d\", last);\n}\n\n"
           "int g(void)\n{\n\treturn last ? -EBUSY : 0;\n}\n")
    found = flow(src, "last", 5)
    assert found is not None and found[0] is Use.TESTED_VALUE
    assert "global" in found[1]


_KEPT = ("unsigned long f(struct b *b, unsigned long t)\n{\n"
         "\tint n = atomic_read(&b->c);\n\n\tif (!n)\n\t\treturn 0;\n"
         "\tUSE\n\treturn t;\n}\n")


@pytest.mark.parametrize("use_line,use", [
    ('pr_info("%d", n);', Use.ZERO_TEST),      # tested, otherwise printed
    ("t <<= n - 1;", Use.TESTED_VALUE),         # computed with
    ("g(n);", Use.TESTED_VALUE),                # passed on
    ("return !n;", Use.TESTED_VALUE),           # leaves the function
])
def test_flow_zero_test_of_a_local_and_its_other_uses(use_line: str,
                                                      use: Use) -> None:
    found = flow(_KEPT.replace("USE", use_line), "n", 3)
    assert found is not None and found[0] is use


@pytest.mark.parametrize("statement,only", [
    ('if (v)\n\tp += sprintf(p, "%d", v);\n', True),
    ('if (v) {\n\tseq_printf(m, "%d", v);\n\tpr_info("x %d", v);\n}\n',
     True),
    ('if (!v)\n\tpr_info("none\\n");\nelse\n\tpr_info("%d", v);\n', True),
    ('if (v) {\n\tpr_err("%d", v);\n\treturn -EIO;\n}\n', False),
    ('if (v)\n\tkick(d);\n', False),                # not a printer
    ('if (!v)\n\tpr_debug("idle\\n");\nelse\n\twork(d);\n', False),
    ('if (!v)\n\tpr_debug("a\\n");\nelse if (w)\n\tpr_debug("b\\n");\n',
     False),
    ('if (v) {\n}\n', False),                         # controls nothing
])
def test_guards_only_printing(statement: str, only: bool) -> None:
    code = "void f(int v)\n{\n" + statement + "}\n"
    text = evidence.Text(code)
    cond_open = code.index("(", code.index("if"))
    assert evidence._guards_only_printing(text, cond_open) is only


def test_flow_compares_a_copy() -> None:
    src = ("void f(struct b *b)\n{\n\tint c = atomic_read(&b->c);\n\n"
           "\tif (c > FX_LIMIT)\n\t\treturn;\n}\n")
    found = flow(src, "c", 3)
    assert found is not None and found[0] is Use.LIMIT


@pytest.mark.parametrize("line,function", [
    ("void f(struct q *q) __releases(&q->lock)", "f"),
    ("static int __init g(void)", "g"),
    ("int h(int a) __must_hold(&a->l) __acquires(x)", "h"),
    ("SYSCALL_DEFINE1(close, unsigned int, fd)", "SYSCALL_DEFINE1"),
])
def test_function_name(line: str, function: str) -> None:
    facts = lexical.scan_text(line + "\n{\n\treturn;\n}\n")
    assert [f.name for f in facts.functions] == [function]


def test_tokens_keep_multi_char_operators() -> None:
    toks = [t.text for t in lexical._tokens(["if (a == b && c >>= 2) x++;"])]
    assert "==" in toks and "&&" in toks and ">>=" in toks and "++" in toks
    assert "=" not in toks


@pytest.mark.parametrize("code,binary", [
    ("return m & c->hits;", True),
    ("x = (a) & b;", True),
    ("x = a[1] & b;", True),
    ("f(a, &c->hits);", False),
    ("return &c->hits;", False),
    ("p = &c->hits;", False),
    ("if (x && &c->hits)", False),
])
def test_binary_and(code: str, binary: bool) -> None:
    at = code.index("&c->hits") if "&c->" in code else code.index("& ")
    assert evidence._binary_and(code, at) is binary


@pytest.mark.parametrize("call,printed", [
    ('pr_info("%d", atomic_read(&v))', True),
    ('seq_printf(m, "%d", atomic_read(&v))', True),
    ('fx_info(d, "x %d", atomic_read(&v))', True),
    ('fx_info(d, atomic_read(&v))', False),
    ('set_power_state(d, atomic_read(&v))', False),
    ('fx_status(d, atomic_read(&v))', False),
    ('u64_stats_add(&s, atomic_read(&v))', True),
    ('fx_stats_update(d, atomic_read(&v))', True),
])
def test_print_callees(call: str, printed: bool) -> None:
    text = evidence.Text(call + ";\n")
    callee = call.split("(")[0]
    assert evidence._is_print_call(text, callee, call.index("(")) is printed


@pytest.mark.parametrize("code, counters", [
    ("int f(struct s *x)\n{\n\treturn x->users.counter;\n}\n", ["x->users"]),
    ("void f(void)\n{\n\tfx_hits.counter = 0;\n}\n", ["fx_hits"]),
    ("void f(atomic_t *v)\n{\n\tv->counter++;\n}\n", ["v"]),
    # an initializer, not an access; a macro definition
    ("static atomic_t a = { .counter = 1 };\n", []),
    ("#define FX_RAW(x) ((x)->cnt.counter)\n", []),
])
def test_raw_counter_access(code: str, counters: list[str]) -> None:
    text = evidence.Text(code)
    facts = lexical.scan_text(code)
    starts = [0]
    for line in text.lines:
        starts.append(starts[-1] + len(line) + 1)
    found = evidence._raw_counter(text, facts, starts)
    assert [r["counter"] for r in found] == counters
    assert all(r["use"] == str(Use.ESCAPE) for r in found)


DECLARATOR_LIST = """\
void f(struct smoke *smoke, int n)
{
\tunsigned long num_waits, num_fences;
\tint idx;

\tnum_fences = 0;
\tfor (idx = 0; idx < n; idx++)
\t\tnum_fences += atomic_long_read(&smoke[idx].num_fences);
\tpr_info("%lu fences\\n", num_fences);
}

void g(struct smoke *t, unsigned int num_fences)
{
\tatomic_long_add(num_fences, &t->num_fences);
}
"""


def test_flow_of_a_later_declarator_stays_in_its_function() -> None:
    """'unsigned long num_waits, num_fences;' declares a local too: its
    flow is the function's, not the whole file's (where another function
    passes a num_fences to atomic_long_add)."""
    assert flow(DECLARATOR_LIST, "num_fences", 8) == \
        (Use.PRINT, "kept in num_fences, only printed")


BASE_TYPES = """\
void put(in_entry *e, struct sess_s *sess)
{
\tstruct se_sess *se_sess;

\tse_sess = sess->se;
\tatomic_dec(&e->use);
\tatomic_inc(&sess->pdus);
}
"""


@pytest.mark.parametrize("counter, line, base", [
    ("&e->use", 6, "struct in_entry"),          # a typedef'd parameter
    ("&sess->pdus", 7, "struct sess_s"),        # not "se_sess = ..."
])
def test_base_type(counter: str, line: int, base: str) -> None:
    text = evidence.Text(BASE_TYPES)
    facts = lexical.scan_text(BASE_TYPES)
    assert evidence._base_type(counter, line, text, facts) == base


def test_base_type_of_a_global_defined_with_its_struct() -> None:
    code = ("static struct fx_root {\t/* anchor */\n"
            "\tatomic_t refcnt;\n"
            "\tvoid *map;\n"
            "} fx_root;\n\n"
            "void put(void)\n{\n\tatomic_dec(&fx_root.refcnt);\n}\n")
    text = evidence.Text(code)
    facts = lexical.scan_text(code)
    assert evidence._base_type("&fx_root.refcnt", 8, text, facts) == \
        "struct fx_root"


def _raised(op: str, use: Use, effect: Effect, constant: bool = True,
            function: str = "fx_probe", **kw: bool) -> Evidence:
    return Evidence(op=op, at="a.c:1", function=function, use=use,
                    detail="", parsed=True, base=op.split("_", 1)[1],
                    effect=effect, constant=constant, **kw)


_INC = _raised("atomic_inc", Use.MOD, Effect.INCREASE)
_TESTED = _raised("atomic_read", Use.ZERO_TEST, Effect.READ,
                  function="fx_poll")


@pytest.mark.parametrize("name,lifecycle", [
    ("atmel_shutdown", True),
    ("cvm_oct_rx_initialize", True),
    ("__fx_exit", True),
    ("fx_probe", True),
    ("fx_init_request", False),     # per request: the last word counts
    ("fx_stop", False),             # stop, start, open, release may run
    ("fx_release", False),          # per request or per file
    ("fx_isr", False),
    (None, False),                  # outside any function
])
def test_is_lifecycle_function(name: Optional[str], lifecycle: bool) -> None:
    assert classify.is_lifecycle_function(name) is lifecycle


def test_lifecycle_flag_is_a_state() -> None:
    d = classify.decide([_INC, _TESTED])
    assert (d.verdict, d.rule) == (Verdict.STATE, "lifecycle-flag")


def test_lifecycle_flag_needs_every_increase_in_a_lifecycle_path() -> None:
    per_event = _raised("atomic_inc", Use.MOD, Effect.INCREASE,
                        function="fx_irq_handler")
    d = classify.decide([_INC, per_event, _TESTED])
    assert (d.verdict, d.rule) == (Verdict.USAGE, "zero-test")


@pytest.mark.parametrize("other", [
    _raised("atomic_dec", Use.MOD, Effect.DECREASE),
    _raised("atomic_add", Use.MOD, Effect.INCREASE, constant=False),
    _raised("atomic_set", Use.MOD, Effect.SET, constant=False),
    _raised("atomic_or", Use.MOD, Effect.BITS),
    _raised("atomic_inc", Use.MOD, Effect.INCREASE, ambiguous=True),
    _raised("atomic_read", Use.VALUE, Effect.READ),
    _raised("atomic_read", Use.ZERO_RETURNED, Effect.READ),
    _raised("atomic_read", Use.TESTED_VALUE, Effect.READ),
    _raised("atomic_add_unless", Use.ZERO_TEST, Effect.INCREASE),
    _raised("atomic_inc_and_test", Use.ZERO_TEST, Effect.INCREASE),
])
def test_lifecycle_flag_needs_every_op_in_sight(other: Evidence) -> None:
    d = classify.decide([_INC, _TESTED, other])
    assert d.verdict in CHECKED and d.rule != "lifecycle-flag"


def test_lifecycle_flag_blocked_by_a_weak_decrease() -> None:
    weak_dec = _raised("atomic_dec", Use.MOD, Effect.DECREASE, weak=True)
    d = classify.decide([_INC, _TESTED, weak_dec])
    assert (d.verdict, d.rule) == (Verdict.USAGE, "zero-test")


def test_lifecycle_flag_blocked_by_a_weak_per_event_increase() -> None:
    weak_inc = _raised("atomic_inc", Use.MOD, Effect.INCREASE,
                       function="fx_isr", weak=True)
    d = classify.decide([_INC, _TESTED, weak_inc])
    assert (d.verdict, d.rule) == (Verdict.USAGE, "zero-test")


def test_lifecycle_flag_keeps_weak_zero_tests() -> None:
    weak_test = _raised("atomic_read", Use.ZERO_TEST, Effect.READ, weak=True)
    d = classify.decide([_INC, _TESTED, weak_test])
    assert (d.verdict, d.rule) == (Verdict.STATE, "lifecycle-flag")


_CLAIM = _raised("atomic_cmpxchg", Use.ZERO_TEST, Effect.EXCHANGE,
                 function="fx_open")
_UNCLAIM = _raised("atomic_dec", Use.MOD, Effect.DECREASE,
                   function="fx_release")


def test_exchange_flag_is_a_state() -> None:
    d = classify.decide([_CLAIM, _UNCLAIM])
    assert (d.verdict, d.rule) == (Verdict.STATE, "exchange-flag")


@pytest.mark.parametrize("other", [
    _raised("atomic_inc", Use.MOD, Effect.INCREASE),    # counted up too
    _raised("atomic_cmpxchg", Use.ZERO_TEST, Effect.EXCHANGE,
            constant=False),                            # to a computed value
    _raised("atomic_set", Use.MOD, Effect.SET, constant=False),
    _raised("atomic_sub", Use.MOD, Effect.DECREASE, constant=False),
    _raised("atomic_dec", Use.MOD, Effect.DECREASE, ambiguous=True),
    _raised("atomic_read", Use.LIMIT, Effect.READ),
    _raised("atomic_read", Use.VALUE, Effect.READ),
    _raised("atomic_dec_and_test", Use.ZERO_TEST, Effect.DECREASE),
])
def test_exchange_flag_needs_every_op_bounded(other: Evidence) -> None:
    d = classify.decide([_CLAIM, _UNCLAIM, other])
    assert d.verdict in CHECKED and d.rule != "exchange-flag"


_GUARD = _raised("atomic_read", Use.PRINT_GUARD, Effect.READ,
                 function="fx_show")


def test_print_guard_of_a_counter_never_lowered_prints() -> None:
    d = classify.decide([_raised("atomic_inc", Use.MOD, Effect.INCREASE,
                                 function="fx_rx"), _GUARD])
    assert (d.verdict, d.rule) == (Verdict.STATISTIC, "print-only")


@pytest.mark.parametrize("lowering", [
    _raised("atomic_dec", Use.MOD, Effect.DECREASE),
    _raised("atomic_add", Use.MOD, Effect.INCREASE, constant=False),
    _raised("atomic_set", Use.MOD, Effect.SET, constant=False),
    _raised("atomic_xchg", Use.VALUE, Effect.EXCHANGE, constant=False),
    _raised("fx_release_later", Use.ESCAPE, Effect.READ),
], ids=["dec", "add-computed", "set-computed", "xchg-computed", "escape"])
def test_print_guard_of_a_counter_maybe_lowered_is_a_zero_test(
        lowering: Evidence) -> None:
    d = classify.decide([_raised("atomic_inc", Use.MOD, Effect.INCREASE),
                         lowering, _GUARD])
    assert d.verdict in CHECKED and d.rule != "print-only"


def test_weak_print_guard_is_a_zero_test() -> None:
    weak = _raised("atomic_read", Use.PRINT_GUARD, Effect.READ, weak=True)
    d = classify.decide([_raised("atomic_inc", Use.MOD, Effect.INCREASE),
                         _raised("atomic_read", Use.PRINT, Effect.READ),
                         weak])
    assert d.verdict in CHECKED


def test_exchange_flag_blocked_by_a_weak_increase() -> None:
    weak_inc = _raised("atomic_inc", Use.MOD, Effect.INCREASE, weak=True)
    d = classify.decide([_CLAIM, _UNCLAIM, weak_inc])
    assert d.verdict in CHECKED and d.rule != "exchange-flag"


def test_a_human_checked_decision_overrules_the_flag() -> None:
    """A counter the classifier flags wrap-by-design converts, unless a
    human decided it stays checked (then it neither converts nor counts
    as converted in the forecast)."""
    from refsweep import verdicts
    rec = {"key": "k", "verdict": "usage", "rule": "limit",
           "wrap_by_design": True}
    assert verdicts.may_wrap(rec) and verdicts.wraps_by_design(rec)
    human = {**rec, "final": "usage", "source": "human",
             "decision": "usage", "reason": "bounded"}
    assert not verdicts.may_wrap(human)
    assert not verdicts.wraps_by_design(human)
    stale = {**human, "source": "stale"}
    assert not verdicts.may_wrap(stale)
    wraps = {**rec, "final": "wraps", "source": "human", "decision": "wraps"}
    assert verdicts.may_wrap(wraps) and verdicts.wraps_by_design(wraps)
