// SPDX-License-Identifier: GPL-2.0-only
/// Extract every atomic_t, atomic64_t and atomic_long_t declaration, every
/// call of the atomic API and the syntactic context its result flows into,
/// for refsweep's classifier (refcount, usage, statistic, id, state).
///
/// In the default (refsweep) mode each match is printed as one line
/// "RSREC <json>"; refsweep/spatch.py parses those lines.  In report mode
/// (make coccicheck MODE=report) declarations are reported so that a
/// maintainer can see which counters refsweep will classify.
///
/// The contexts (if/while/return/assignment/call/index) carry positions
/// only; the classifier reads the condition and branch text from the
/// source by position, which keeps this file small and fast: one parse of
/// each file serves every rule.
//
// Confidence: High (records facts, decides nothing)
// Copyright: (C) 2026 The refsweep authors.
// URL: https://coccinelle.gitlabpages.inria.fr/website
// Options: --no-includes --include-headers --timeout 120

virtual report
virtual refsweep

@initialize:python@
@@
import json

def rs_pos(p):
    return [p.file, int(p.line), int(p.column), int(p.line_end),
            int(p.column_end)]

def rs_emit(kind, **fields):
    fields["kind"] = kind
    print("RSREC " + json.dumps(fields, separators=(",", ":")), flush=True)

// ---------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------

// One rule per shape: a disjunction of the three made spatch match large
// structs (fs/ext4/ext4.h) for minutes; apart, each takes a second.
@field_decl@
typedef atomic_t, atomic64_t, atomic_long_t;
identifier tag, x;
type T = {atomic_t, atomic64_t, atomic_long_t};
position p;
@@
struct tag { ... T x@p; ... };

@script:python depends on !report@
tag << field_decl.tag;
x << field_decl.x;
T << field_decl.T;
p << field_decl.p;
@@
rs_emit("decl", scope="member", tag="struct " + str(tag), name=str(x), type=str(T), pos=rs_pos(p[0]))

@script:python depends on report@
tag << field_decl.tag;
x << field_decl.x;
T << field_decl.T;
p << field_decl.p;
@@
coccilib.report.print_report(p[0], "%s member struct %s.%s: refsweep classifies it" % (T, tag, x))

@field_array@
identifier tag, x;
type T = {atomic_t, atomic64_t, atomic_long_t};
position p;
@@
struct tag { ... T x@p[...]; ... };

@script:python depends on !report@
tag << field_array.tag;
x << field_array.x;
T << field_array.T;
p << field_array.p;
@@
rs_emit("decl", scope="member", tag="struct " + str(tag), name=str(x), type=str(T), pos=rs_pos(p[0]))

@script:python depends on report@
tag << field_array.tag;
x << field_array.x;
T << field_array.T;
p << field_array.p;
@@
coccilib.report.print_report(p[0], "%s member struct %s.%s: refsweep classifies it" % (T, tag, x))

@field_union@
identifier tag, x;
type T = {atomic_t, atomic64_t, atomic_long_t};
position p;
@@
union tag { ... T x@p; ... };

@script:python depends on !report@
tag << field_union.tag;
x << field_union.x;
T << field_union.T;
p << field_union.p;
@@
rs_emit("decl", scope="member", tag="union " + str(tag), name=str(x), type=str(T), pos=rs_pos(p[0]))

@script:python depends on report@
tag << field_union.tag;
x << field_union.x;
T << field_union.T;
p << field_union.p;
@@
coccilib.report.print_report(p[0], "%s member union %s.%s: refsweep classifies it" % (T, tag, x))

@var_decl@
identifier x;
type T = {atomic_t, atomic64_t, atomic_long_t};
position p;
@@
(
 T x@p;
|
 T x@p = ...;
|
 T x@p[...];
|
 T x@p[...] = ...;
)

@script:python depends on !report@
x << var_decl.x;
T << var_decl.T;
p << var_decl.p;
@@
rs_emit("decl", scope="var", name=str(x), type=str(T), pos=rs_pos(p[0]),
        function=p[0].current_element)

@script:python depends on report@
x << var_decl.x;
T << var_decl.T;
p << var_decl.p;
@@
coccilib.report.print_report(p[0], "%s variable %s: refsweep classifies it" % (T, x))

// ---------------------------------------------------------------------
// Helpers: functions taking a pointer to an atomic, so that callers can be
// linked into one conversion group.
// ---------------------------------------------------------------------

@helper depends on !report@
identifier f, v;
type R;
parameter list[n] before;
position p;
@@
(
R f@p(before, atomic_t *v, ...) { ... }
|
R f@p(before, atomic64_t *v, ...) { ... }
|
R f@p(before, atomic_long_t *v, ...) { ... }
)

@script:python depends on !report@
f << helper.f;
v << helper.v;
n << helper.n;
p << helper.p;
@@
rs_emit("helper", function=str(f), param=str(v), index=int(n), pos=rs_pos(p[0]))

// ---------------------------------------------------------------------
// Operations: every call of the atomic API.
// ---------------------------------------------------------------------

@op depends on !report@
identifier fn =~ "^(raw_|arch_)?atomic(64|_long)?_[a-z0-9_]+$";
expression list args;
position p;
@@
fn@p(args)

@script:python depends on !report@
fn << op.fn;
args << op.args;
p << op.p;
@@
rs_emit("op", fn=str(fn), args=str(args), pos=rs_pos(p[0]),
        function=p[0].current_element)

// ---------------------------------------------------------------------
// Contexts the result of an operation flows into.  Each records the span
// of the enclosing expression (and of the branches, for conditionals).
// ---------------------------------------------------------------------

@cond depends on !report@
identifier fn =~ "^(raw_|arch_)?atomic(64|_long)?_[a-z0-9_]+$";
expression C;
statement S1, S2;
position pc, p, pt, pe;
@@
(
if (\(C@pc \& <+... fn@p(...) ...+>\)) S1@pt else S2@pe
|
if (\(C@pc \& <+... fn@p(...) ...+>\)) S1@pt
|
while (\(C@pc \& <+... fn@p(...) ...+>\)) S1
)

@script:python depends on !report@
pc << cond.pc;
p << cond.p;
pt << cond.pt = [];
pe << cond.pe = [];
@@
# A while loop binds no branch positions (spatch cannot place one on a
# loop body here); the classifier reads "while" from the source instead.
rs_emit("ctx", ctx="cond", op=rs_pos(p[0]), span=rs_pos(pc[0]),
        then=[rs_pos(t) for t in pt][:1], els=[rs_pos(e) for e in pe][:1])

@ret depends on !report@
identifier fn =~ "^(raw_|arch_)?atomic(64|_long)?_[a-z0-9_]+$";
expression E;
position pc, p;
@@
return \(E@pc \& <+... fn@p(...) ...+>\);

@script:python depends on !report@
pc << ret.pc;
p << ret.p;
@@
rs_emit("ctx", ctx="return", op=rs_pos(p[0]), span=rs_pos(pc[0]))

@assign depends on !report@
identifier fn =~ "^(raw_|arch_)?atomic(64|_long)?_[a-z0-9_]+$";
expression L, E;
position pl, pc, p;
@@
L@pl = \(E@pc \& <+... fn@p(...) ...+>\)

@script:python depends on !report@
pl << assign.pl;
pc << assign.pc;
p << assign.p;
@@
rs_emit("ctx", ctx="assign", op=rs_pos(p[0]), span=rs_pos(pc[0]),
        lhs=rs_pos(pl[0]))

@init depends on !report@
identifier fn =~ "^(raw_|arch_)?atomic(64|_long)?_[a-z0-9_]+$";
identifier x;
type T;
expression E;
position pl, pc, p;
@@
T x@pl = \(E@pc \& <+... fn@p(...) ...+>\);

@script:python depends on !report@
pl << init.pl;
pc << init.pc;
p << init.p;
@@
rs_emit("ctx", ctx="local", op=rs_pos(p[0]), span=rs_pos(pc[0]),
        lhs=rs_pos(pl[0]))

@call depends on !report@
identifier fn =~ "^(raw_|arch_)?atomic(64|_long)?_[a-z0-9_]+$";
identifier g !~ "^(raw_|arch_)?atomic(64|_long)?_[a-z0-9_]+$";
expression E;
position pg, pc, p;
@@
g@pg(..., \(E@pc \& <+... fn@p(...) ...+>\), ...)

@script:python depends on !report@
g << call.g;
pc << call.pc;
p << call.p;
@@
rs_emit("ctx", ctx="call", callee=str(g), op=rs_pos(p[0]), span=rs_pos(pc[0]))

@index depends on !report@
identifier fn =~ "^(raw_|arch_)?atomic(64|_long)?_[a-z0-9_]+$";
expression A, E;
position pc, p;
@@
A[\(E@pc \& <+... fn@p(...) ...+>\)]

@script:python depends on !report@
pc << index.pc;
p << index.p;
@@
rs_emit("ctx", ctx="index", op=rs_pos(p[0]), span=rs_pos(pc[0]))
