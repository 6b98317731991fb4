# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of the pure functions behind helpers, macros, pointer-held
counters and wrap-by-design signs."""

import concurrent.futures
import concurrent.futures.process
from pathlib import Path

from conftest import make_tree

from refsweep.atomic_api import Effect
from refsweep.records import Evidence, Use
from refsweep import macros, pointers, resolve, summaries, wrap_design
from refsweep.sources import Sources, strip_expr


def test_evaluate_bias_constants() -> None:
    defines = {"BIAS": "(1LU << (BITS_PER_LONG - 1))", "HALF": "BIAS / 2",
               "SMALL": "256"}
    assert wrap_design.evaluate("BIAS", defines) == 2**63
    assert wrap_design.evaluate("(long)BIAS", defines) == 2**63
    assert wrap_design.evaluate("INT_MIN", {}) == -2**31
    assert wrap_design.evaluate("BIT(31)", {}) == 2**31
    assert wrap_design.evaluate("0x80000000U", {}) == 2**31
    assert wrap_design.evaluate("SMALL", defines) == 256
    assert wrap_design.evaluate("count", defines) is None
    assert wrap_design.evaluate("f(1)", defines) is None


def test_near_min() -> None:
    assert wrap_design.near_min(2**63) == "LONG_MIN"
    assert wrap_design.near_min(-2**63) == "LONG_MIN"
    assert wrap_design.near_min(-2**31) == "INT_MIN"
    assert wrap_design.near_min(2**31 + 1) == "INT_MIN"
    assert wrap_design.near_min(2**30) is None        # INT_MIN / 2
    assert wrap_design.near_min(0xdeadbeefdeafcafe) is None
    assert wrap_design.near_min(256) is None
    assert wrap_design.near_min(2**31 - 1) is None    # INT_MAX: no limit
    assert wrap_design.near_min(2**63 - 1) is None


def test_terms_split_at_top_level() -> None:
    assert wrap_design.terms("(long)count - BIAS") == ["(long)count",
                                                      "BIAS"]
    assert wrap_design.terms("a + (b - c)") == ["a", "(b - c)"]
    assert wrap_design.terms("1 << -x") == ["1 << -x"]


def test_comment_signs_need_no_negation(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "t", {"a.c": (
        "/* the id may wrap, that is fine */\n"
        "atomic_t a;\n"
        "/* must not overflow */\n"
        "atomic_t b;\n"
        "/* never wraps around */\n"
        "atomic_t c;\n"
        "atomic_t d; /* allowed to overflow */\n")})
    finder = wrap_design.Finder(Sources(tree), tree)
    assert finder.comment_signs("a.c", 2, "x")
    assert not finder.comment_signs("a.c", 4, "x")
    assert not finder.comment_signs("a.c", 6, "x")
    assert finder.comment_signs("a.c", 7, "x")


def test_macro_substitute_pastes_tokens() -> None:
    [d] = macros.parse_defines(
        "a.c", "#define STAT(name) atomic_long_inc(&st.name##_count)\n")
    assert macros.substitute(d, ["rx"]) == " atomic_long_inc(&st.rx_count)"
    assert macros.parse_defines("a.c", "#define N(x) atomic_inc(&g)\n") == []


def test_macro_substitute_variadic() -> None:
    """Named parameters take their arguments; __VA_ARGS__ the rest (the
    first variadic argument was dropped)."""
    [d] = macros.parse_defines(
        "a.c", "#define ADD(s, ...) atomic_add(__VA_ARGS__, &(s)->n)\n")
    assert macros.substitute(d, ["p", "x + y"]) == " atomic_add(x + y, &(p)->n)"
    [alias] = macros.parse_op_aliases("a.c", "#define stats_inc atomic_inc\n")
    assert macros.substitute(alias, ["&t->hits"]) == "atomic_inc(&t->hits)"
    assert macros.parse_op_aliases("a.c", "#define inc_fn my_inc\n") == []


def test_macro_multiline_body() -> None:
    code = ("#define PUT(o) do {\t\\\n"
            "\tif (atomic_dec_and_test(&(o)->refs))\t\\\n"
            "\t\tkfree(o);\t\\\n} while (0)\n")
    [d] = macros.parse_defines("a.c", code)
    [(op, counter, _args, at)] = macros.ops_in(macros.substitute(d, ["p"]))
    assert op.base == "dec_and_test" and counter == "&(p)->refs"


def test_pointer_declarations() -> None:
    code = ("static atomic_t *ids __read_mostly;\n"
            "struct s { atomic_t *c; atomic64_t __percpu *p; int n; };\n"
            "void f(atomic_t *v) { atomic_t *local = v; }\n")
    found = {(d.name, d.scope, d.tag) for d in pointers.declarations(code)}
    assert found == {("ids", "file", None), ("c", "member", "struct s"),
                     ("p", "member", "struct s")}


def test_storage_expr_and_strip_expr() -> None:
    assert resolve._storage_expr("per_cpu_ptr(x->cnt, cpu)") == "x->cnt"
    assert resolve._storage_expr("ids + (h & mask)") == "ids"
    assert strip_expr("(atomic_t *) v") == "v"
    assert strip_expr("((v))") == "v"


def test_summary_reaches_through_levels(tmp_path: Path) -> None:
    code = ("void put1(atomic_t *v, void *o)\n{\n"
            "\tif (atomic_dec_and_test(v))\n\t\tkfree(o);\n}\n"
            "void put2(atomic_t *w, void *o)\n{\n\tput1(w, o);\n}\n"
            "void leak(atomic_t *x)\n{\n\tregister_it(x);\n}\n")
    tree = make_tree(tmp_path / "t", {"a.c": code})
    files = [{"path": "a.c", "functions": [["put1", 2, 5], ["put2", 7, 9],
                                           ["leak", 11, 13]],
              "helpers": [{"function": "put1", "param": "v", "index": 0},
                          {"function": "put2", "param": "w", "index": 0},
                          {"function": "leak", "param": "x", "index": 0}]}]
    summ = summaries.Summaries(files, Sources(tree), lambda p: frozenset())
    summ.find_edges()
    put2 = [d for d in summ.defs["put2"]][0]
    assert summ.edges[("a.c", "put2", 0)] == [("put1", 0, "a.c:8")]
    leak = summ.effects(summ.defs["leak"][0])
    assert [e.use for e in leak] == ["escape"]
    put = Evidence(op="atomic_dec_and_test", at="a.c:3", function="put1",
                   use=Use.ZERO_RELEASE, detail="", parsed=True,
                   base="dec_and_test", effect=Effect.DECREASE)
    summ.add_direct("a.c", "put1", 0, put)
    [got] = summ.effects(put2)
    assert got.use is Use.ZERO_RELEASE and got.via == "put1() at a.c:8"


def test_may_name_decides_as_resolve_does() -> None:
    """An address with no word naming a variable is skipped before
    resolve(); that must never skip one resolve() would attribute."""
    variables = {k: resolve.Variable(k, "atomic_t", "a.c:1", scope, {"spatch"})
                 for k, scope in (("struct s.users", "member"),
                                  ("a.c:ids", "file"),
                                  ("a.c:f:n", "function"))}
    index = resolve.Index(variables)
    for counter in ("&pdev->dev", "&x->users", "&(ids)", "&n", "&p->users[2]",
                    "&q->dev.users", "&users_lock", "per_cpu_ptr(ids, c)",
                    "&lock"):
        keys, _amb = index.resolve("a.c", "f", counter, None)
        assert index.may_name(counter) or not keys, counter
    assert not index.may_name("&pdev->dev")
    assert not index.may_name("&users_lock")
    assert index.may_name("&q->dev.users") and index.may_name("&n")


def test_prefetched_text_is_the_stripped_text(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "t", {
        "a.c": "/* atomic_inc(&x) */\nint a; // b\nchar *s = \"c\";\n",
        "b.h": "#define B 1 /* two\nlines */\n"})
    plain, fetched = Sources(tree), Sources(tree)
    fetched.prefetch(["a.c", "b.h", "gone.c"])
    for path in ("a.c", "b.h", "gone.c", "c.c"):
        assert fetched.code(path) == plain.code(path)
    assert fetched.code("a.c") == ("                    \nint a;     \n"
                                   "char *s = \" \";\n")
    assert [fetched.commented("b.h", n) for n in (0, 1, 2, 3, 4)] == \
        [False, True, True, False, False]
    assert [fetched.commented("a.c", n) for n in (1, 2, 3, 4)] == \
        [True, True, True, False]
    assert fetched.raw_lines("a.c", 2, 9) == ["int a; // b",
                                              "char *s = \"c\";", ""]
    assert fetched.raw_lines("a.c", 0, 1) == ["/* atomic_inc(&x) */"]
    assert fetched.raw_lines("a.c", 5, 9) == []
    assert fetched.offset("a.c", 2) == 21 and fetched.offset("a.c", 9) == 48


def test_a_failed_prefetch_costs_only_time(tmp_path: Path) -> None:
    """A prefetch whose worker dies leaves the text to be read lazily."""
    tree = make_tree(tmp_path / "t", {"a.c": "int a; /* x */\n"})
    sources = Sources(tree)
    sources.prefetch(["a.c"])
    assert sources._pending is not None
    sources._pending.cancel()
    failed: concurrent.futures.Future[object] = concurrent.futures.Future()
    failed.set_exception(concurrent.futures.process.BrokenProcessPool("x"))
    sources._pending = failed       # type: ignore[assignment]  # a fake
    assert sources.code("a.c") == "int a;        \n"
    assert sources.offset("a.c", 2) == 15
