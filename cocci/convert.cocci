// SPDX-License-Identifier: GPL-2.0-only
/// Convert chosen atomic_t, atomic64_t and atomic_long_t variables to
/// atomic_unchecked_t (virtual "unchecked") or refcount_t (virtual
/// "refcount"): their declarations, initializers, every operation on them,
/// the atomic_t * parameters of helpers they are passed to, pointers that
/// hold allocated counters and local pointers an operation reaches them
/// through.
///
/// Which variables, which operation sites and which helper parameters is
/// decided by refsweep (refsweep/convert.py) from the classifier's final
/// verdicts and written to a JSON plan named by $REFSWEEP_PLAN:
///   {"members": [[struct|union, TAG, FIELD], ...],
///    "vars": {FILE: [[FUNCTION or "", NAME], ...]},
///    "ops": {FILE: [[LINE, COLUMN, OP, COUNTER, NEWOP, FORM], ...]},
///    "params": [[FUNCTION, PARAM], ...],
///    "inits": [FIELD, ...], "init_names": {"ATOMIC_INIT": NEW, ...}}
/// FORM "" renames the operation; the others rewrite the expression its
/// result is in, as refsweep found it written (refsweep/refcount_contract.py):
/// "zero" a test for zero ("x == 0", "0 == x", "!x") into the new
/// operation, "nonzero" a test for non-zero ("x != 0", "0 != x", a bare
/// condition) into its negation, "first" the call into the new operation
/// of its first argument alone (atomic_add_unless(v, 1, 0) ->
/// refcount_inc_not_zero(v)).
/// A match is applied only when it is in the plan, so this file never
/// decides what may wrap.  Every applied change is
/// printed as "RSDONE <json>" so that refsweep can verify that each
/// conversion group was converted completely, or not at all.
///
/// Run by "refsweep convert"; standalone:
///   REFSWEEP_PLAN=plan.json spatch -D unchecked --sp-file convert.cocci \
///       --no-includes --in-place FILE...
//
// Confidence: High (applies a plan; decides nothing)
// Copyright: (C) 2026 The refsweep authors.
// URL: https://coccinelle.gitlabpages.inria.fr/website
// Options: --no-includes --include-headers

virtual unchecked
virtual refcount

@initialize:python@
@@
import json
import os
import re

with open(os.environ["REFSWEEP_PLAN"], encoding="utf-8") as _f:
    PLAN = json.load(_f)
MEMBERS = {(k, t, x) for k, t, x in PLAN["members"]}
VARS = {(f, fn, x) for f, rows in PLAN["vars"].items() for fn, x in rows}
SITES = {(f, int(l), int(col)): form for f, rows in PLAN["ops"].items()
         for l, col, op, c, new, form in rows}
# The new name of each operation (one per target; atomic_add_unless's
# two refcount_t forms are spelled out in the rule).
NEW = {op: new for rows in PLAN["ops"].values()
       for l, col, op, c, new, form in rows if form != "first"}
PARAMS = {(f, v) for f, v in PLAN["params"]}
INITS = set(PLAN["inits"])
INIT_NAMES = PLAN["init_names"]
MEMBER_NAMES = {(t, x) for _k, t, x in MEMBERS}


def rs_file():
    """The file being converted (one file per spatch file group)."""
    name = cocci.files()[0]
    return name[2:] if name.startswith("./") else name


def rs_done(kind, name, line=0):
    rec = {"kind": kind, "file": rs_file(), "name": name, "line": line}
    print("RSDONE " + json.dumps(rec, separators=(",", ":")), flush=True)


def rs_site(p, form):
    """A planned operation site of FORM starts at position P."""
    return SITES.get((rs_file(), int(p[0].line), int(p[0].column))) == form


def rs_init(x, T):
    """A designated initializer of member X of a value of type T."""
    tag = re.sub(r"^\s*(?:const\s+)?(?:struct|union)\s+", "", str(T)).strip()
    return str(x) in INITS or rs_member(tag, x)


def rs_member(tag, x):
    """A planned member; struct and union tags are not told apart."""
    return (str(tag), str(x)) in MEMBER_NAMES


def rs_param(fn, v):
    return (str(fn), str(v)) in PARAMS


// ---------------------------------------------------------------------
// Operations come first, all in one rule: the plan names them by line
// and column, and positions are exact only before any rule has changed
// the file.  Most are renamed; those whose result refcount_t returns
// differently are rewritten with the expression the plan says they are
// in (atomic_dec_return(v) == 0 -> refcount_dec_and_test(v)).
// ---------------------------------------------------------------------

@op disable is_zero, isnt_zero, not_int1, not_int2@
identifier f =~ "^atomic";
expression list es;
expression E;
position pr : script:python() { rs_site(pr, "") };
position pz1 : script:python() { rs_site(pz1, "zero") };
position pz2 : script:python() { rs_site(pz2, "zero") };
position pz3 : script:python() { rs_site(pz3, "zero") };
position pn1 : script:python() { rs_site(pn1, "nonzero") };
position pn2 : script:python() { rs_site(pn2, "nonzero") };
position pn3 : script:python() { rs_site(pn3, "nonzero") };
position pf1 : script:python() { rs_site(pf1, "first") };
position pf2 : script:python() { rs_site(pf2, "first") };
fresh identifier g = script:python(f) { NEW.get(str(f), str(f)) };
@@
(
- f@pz1(es) == 0
+ g(es)
|
- 0 == f@pz2(es)
+ g(es)
|
- !f@pz3(es)
+ g(es)
|
- f@pn1(es) != 0
+ !g(es)
|
- 0 != f@pn2(es)
+ !g(es)
|
- f@pn3(es)
+ !g(es)
|
- atomic_add_unless@pf1(E, 1, 0)
+ refcount_inc_not_zero(E)
|
- atomic_add_unless@pf2(E, -1, 1)
+ refcount_dec_not_one(E)
|
- f@pr
+ g
  (...)
)

// Reported once rewritten, for refsweep to verify: a site spatch sees in
// another shape than refsweep did stays as it was, and its group is
// undone.

@script:python@
f << op.f;
q << op.pr;
@@
rs_done("op", str(f), int(q[0].line))

@script:python@
f << op.f;
q << op.pz1;
@@
rs_done("op", str(f), int(q[0].line))

@script:python@
f << op.f;
q << op.pz2;
@@
rs_done("op", str(f), int(q[0].line))

@script:python@
f << op.f;
q << op.pz3;
@@
rs_done("op", str(f), int(q[0].line))

@script:python@
f << op.f;
q << op.pn1;
@@
rs_done("op", str(f), int(q[0].line))

@script:python@
f << op.f;
q << op.pn2;
@@
rs_done("op", str(f), int(q[0].line))

@script:python@
f << op.f;
q << op.pn3;
@@
rs_done("op", str(f), int(q[0].line))

@script:python@
q << op.pf1;
@@
rs_done("op", "atomic_add_unless", int(q[0].line))

@script:python@
q << op.pf2;
@@
rs_done("op", "atomic_add_unless", int(q[0].line))


// ---------------------------------------------------------------------
// Struct and union members, by tag and name.  A constraint rather than
// an inherited binding: "struct tag { ... }" transformations inherited
// from a matching rule were seen to take minutes on headers with many
// atomic members.  The attribute names are those the kernel puts after
// a struct's closing brace that spatch does not know: without them
// "struct net { ... } __randomize_layout;" matches no struct rule.
// ---------------------------------------------------------------------

@depends on unchecked@
typedef atomic_t, atomic64_t, atomic_long_t;
typedef atomic_unchecked_t;
attribute name __randomize_layout, ____cacheline_aligned;
attribute name ____cacheline_aligned_in_smp, __aligned_largest;
attribute name ____cacheline_internodealigned_in_smp;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
struct tag { ...
- atomic_t
+ atomic_unchecked_t
  x;
  ... };

@depends on unchecked@
typedef atomic_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
struct tag { ...
- atomic_t
+ atomic_unchecked_t
  x[...];
  ... };

@depends on unchecked@
typedef atomic_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
union tag { ...
- atomic_t
+ atomic_unchecked_t
  x;
  ... };

@depends on unchecked@
typedef atomic_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
union tag { ...
- atomic_t
+ atomic_unchecked_t
  x[...];
  ... };

@depends on unchecked@
typedef atomic64_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
struct tag { ...
- atomic64_t
+ atomic64_unchecked_t
  x;
  ... };

@depends on unchecked@
typedef atomic64_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
struct tag { ...
- atomic64_t
+ atomic64_unchecked_t
  x[...];
  ... };

@depends on unchecked@
typedef atomic64_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
union tag { ...
- atomic64_t
+ atomic64_unchecked_t
  x;
  ... };

@depends on unchecked@
typedef atomic64_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
union tag { ...
- atomic64_t
+ atomic64_unchecked_t
  x[...];
  ... };

@depends on unchecked@
typedef atomic_long_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
struct tag { ...
- atomic_long_t
+ atomic_long_unchecked_t
  x;
  ... };

@depends on unchecked@
typedef atomic_long_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
struct tag { ...
- atomic_long_t
+ atomic_long_unchecked_t
  x[...];
  ... };

@depends on unchecked@
typedef atomic_long_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
union tag { ...
- atomic_long_t
+ atomic_long_unchecked_t
  x;
  ... };

@depends on unchecked@
typedef atomic_long_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
union tag { ...
- atomic_long_t
+ atomic_long_unchecked_t
  x[...];
  ... };

@depends on refcount@
typedef refcount_t;
attribute name __randomize_layout, ____cacheline_aligned;
attribute name ____cacheline_aligned_in_smp, __aligned_largest;
attribute name ____cacheline_internodealigned_in_smp;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
struct tag { ...
- atomic_t
+ refcount_t
  x;
  ... };

@depends on refcount@
typedef refcount_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
struct tag { ...
- atomic_t
+ refcount_t
  x[...];
  ... };

@depends on refcount@
typedef refcount_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
union tag { ...
- atomic_t
+ refcount_t
  x;
  ... };

@depends on refcount@
typedef refcount_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
union tag { ...
- atomic_t
+ refcount_t
  x[...];
  ... };

// Members that hold a pointer to allocated counters ("atomic_t *hits"
// filled by kcalloc(): refsweep/pointers.py).

@depends on unchecked@
typedef atomic_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
struct tag { ...
- atomic_t
+ atomic_unchecked_t
  *x;
  ... };

@depends on unchecked@
typedef atomic_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
union tag { ...
- atomic_t
+ atomic_unchecked_t
  *x;
  ... };

@depends on unchecked@
typedef atomic64_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
struct tag { ...
- atomic64_t
+ atomic64_unchecked_t
  *x;
  ... };

@depends on unchecked@
typedef atomic64_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
union tag { ...
- atomic64_t
+ atomic64_unchecked_t
  *x;
  ... };

@depends on unchecked@
typedef atomic_long_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
struct tag { ...
- atomic_long_t
+ atomic_long_unchecked_t
  *x;
  ... };

@depends on unchecked@
typedef atomic_long_unchecked_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
union tag { ...
- atomic_long_t
+ atomic_long_unchecked_t
  *x;
  ... };

@depends on refcount@
typedef refcount_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
struct tag { ...
- atomic_t
+ refcount_t
  *x;
  ... };

@depends on refcount@
typedef refcount_t;
identifier tag;
identifier x : script:python(tag) { rs_member(tag, x) };
@@
union tag { ...
- atomic_t
+ refcount_t
  *x;
  ... };

// ---------------------------------------------------------------------
// Globals, statics and locals, with their initializers, by file,
// enclosing function ("" at file scope) and name
// ---------------------------------------------------------------------

@variable@
identifier x;
type T = {atomic_t, atomic64_t, atomic_long_t};
position p;
@@
(
T x@p;
|
T x@p[...];
|
T x@p = ...;
|
T x@p[...] = ...;
|
T *x@p;
|
T *x@p = ...;
)

@script:python variable_ok@
x << variable.x;
p << variable.p;
@@
fn = p[0].current_element
fn = "" if fn in ("something_else", str(x)) else fn
if (rs_file(), fn, str(x)) not in VARS:
    cocci.include_match(False)

@variable_u depends on unchecked && variable_ok@
identifier variable.x;
position variable.p;
expression E;
@@
(
- atomic_t
+ atomic_unchecked_t
  x@p =
- ATOMIC_INIT(E)
+ ATOMIC_UNCHECKED_INIT(E)
  ;
|
- atomic64_t
+ atomic64_unchecked_t
  x@p =
- ATOMIC64_INIT(E)
+ ATOMIC64_UNCHECKED_INIT(E)
  ;
|
- atomic_long_t
+ atomic_long_unchecked_t
  x@p =
- ATOMIC_LONG_INIT(E)
+ ATOMIC_LONG_UNCHECKED_INIT(E)
  ;
|
- atomic_t
+ atomic_unchecked_t
  x@p;
|
- atomic_t
+ atomic_unchecked_t
  x@p[...];
|
- atomic_t
+ atomic_unchecked_t
  x@p[...] = ...;
|
- atomic64_t
+ atomic64_unchecked_t
  x@p;
|
- atomic64_t
+ atomic64_unchecked_t
  x@p[...];
|
- atomic64_t
+ atomic64_unchecked_t
  x@p[...] = ...;
|
- atomic_long_t
+ atomic_long_unchecked_t
  x@p;
|
- atomic_long_t
+ atomic_long_unchecked_t
  x@p[...];
|
- atomic_long_t
+ atomic_long_unchecked_t
  x@p[...] = ...;
|
- atomic_t
+ atomic_unchecked_t
  *x@p;
|
- atomic_t
+ atomic_unchecked_t
  *x@p = E;
|
- atomic64_t
+ atomic64_unchecked_t
  *x@p;
|
- atomic64_t
+ atomic64_unchecked_t
  *x@p = E;
|
- atomic_long_t
+ atomic_long_unchecked_t
  *x@p;
|
- atomic_long_t
+ atomic_long_unchecked_t
  *x@p = E;
)

@variable_r depends on refcount && variable_ok@
identifier variable.x;
position variable.p;
expression E;
@@
(
- atomic_t
+ refcount_t
  x@p =
- ATOMIC_INIT(E)
+ REFCOUNT_INIT(E)
  ;
|
- atomic_t
+ refcount_t
  x@p;
|
- atomic_t
+ refcount_t
  x@p[...];
|
- atomic_t
+ refcount_t
  x@p[...] = ...;
|
- atomic_t
+ refcount_t
  *x@p;
|
- atomic_t
+ refcount_t
  *x@p = E;
)

// Designated initializers of converted members: { .x = ATOMIC_INIT(0) }.
// The member name decides (refsweep lists only names that no checked
// atomic member shares), or the type the initializer is of: a planned
// member of that struct.  spatch reads the type from the code it
// matches, so the plan need not list the sites.

@init@
identifier x, s;
identifier I = {ATOMIC_INIT, ATOMIC64_INIT, ATOMIC_LONG_INIT};
type T;
expression E;
position p;
@@
T s = { ..., .x@p = I(E), ... };

@script:python init_ok@
x << init.x;
I << init.I;
T << init.T;
J;
@@
if rs_init(x, T) and str(I) in INIT_NAMES:
    coccinelle.J = cocci.make_ident(INIT_NAMES[str(I)])
    rs_done("init", str(x))
else:
    cocci.include_match(False)

@@
identifier init.x, init.s, init.I, init_ok.J;
position init.p;
type T;
expression E;
@@
T s = { ..., .x@p =
- I
+ J
  (E), ... };

// ... and of compound literals: *ctx = (struct tag){ .x = ATOMIC_INIT(1) }.

@init_cl@
identifier x;
identifier I = {ATOMIC_INIT, ATOMIC64_INIT, ATOMIC_LONG_INIT};
type T;
expression E;
position p;
@@
  (T){ ..., .x@p = I(E), ... }

@script:python init_cl_ok@
x << init_cl.x;
I << init_cl.I;
T << init_cl.T;
J;
@@
if rs_init(x, T) and str(I) in INIT_NAMES:
    coccinelle.J = cocci.make_ident(INIT_NAMES[str(I)])
    rs_done("init", str(x))
else:
    cocci.include_match(False)

@@
identifier init_cl.x, init_cl.I, init_cl_ok.J;
position init_cl.p;
type T;
expression E;
@@
  (T){ ..., .x@p =
- I
+ J
  (E), ... }

// ---------------------------------------------------------------------
// Helper parameters: atomic_t *v of a function to which every caller
// passes a converted variable (one conversion group), in its definition
// and its prototypes.
// ---------------------------------------------------------------------

@depends on unchecked@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- atomic_t
+ atomic_unchecked_t
  *v, ...) { ... }

@depends on unchecked@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- const atomic_t
+ const atomic_unchecked_t
  *v, ...) { ... }

@depends on unchecked@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- atomic64_t
+ atomic64_unchecked_t
  *v, ...) { ... }

@depends on unchecked@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- const atomic64_t
+ const atomic64_unchecked_t
  *v, ...) { ... }

@depends on unchecked@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- atomic_long_t
+ atomic_long_unchecked_t
  *v, ...) { ... }

@depends on unchecked@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- const atomic_long_t
+ const atomic_long_unchecked_t
  *v, ...) { ... }

@depends on refcount@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- atomic_t
+ refcount_t
  *v, ...) { ... }

@depends on refcount@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- const atomic_t
+ const refcount_t
  *v, ...) { ... }

@depends on unchecked@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- atomic_t
+ atomic_unchecked_t
  *v, ...);

@depends on unchecked@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- const atomic_t
+ const atomic_unchecked_t
  *v, ...);

@depends on unchecked@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- atomic64_t
+ atomic64_unchecked_t
  *v, ...);

@depends on unchecked@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- const atomic64_t
+ const atomic64_unchecked_t
  *v, ...);

@depends on unchecked@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- atomic_long_t
+ atomic_long_unchecked_t
  *v, ...);

@depends on unchecked@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- const atomic_long_t
+ const atomic_long_unchecked_t
  *v, ...);

@depends on refcount@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- atomic_t
+ refcount_t
  *v, ...);

@depends on refcount@
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R;
@@
R fn(...,
- const atomic_t
+ const refcount_t
  *v, ...);

// Which helper parameters were rewritten, for refsweep to verify.

@param_definition@
typedef atomic_unchecked_t, atomic64_unchecked_t, atomic_long_unchecked_t;
typedef refcount_t;
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R, T = {atomic_unchecked_t, atomic64_unchecked_t,
             atomic_long_unchecked_t, refcount_t};
@@
(
R fn(..., T *v, ...) { ... }
|
R fn(..., const T *v, ...) { ... }
)

@script:python@
fn << param_definition.fn;
v << param_definition.v;
@@
rs_done("param", str(fn) + ":" + str(v))

@param_prototype@
typedef atomic_unchecked_t, atomic64_unchecked_t, atomic_long_unchecked_t;
typedef refcount_t;
identifier fn;
identifier v : script:python(fn) { rs_param(fn, v) };
type R, T = {atomic_unchecked_t, atomic64_unchecked_t,
             atomic_long_unchecked_t, refcount_t};
@@
(
R fn(..., T *v, ...);
|
R fn(..., const T *v, ...);
)

@script:python@
fn << param_prototype.fn;
v << param_prototype.v;
@@
rs_done("param", str(fn) + ":" + str(v))
