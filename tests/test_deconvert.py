# SPDX-License-Identifier: GPL-2.0
#
# Tests for bench/deconvert.py on tiny hand-written C snippets.
#
# Run with: /usr/bin/python3 -m pytest tests/test_deconvert.py

import os
import subprocess
import sys
import tempfile
from typing import Dict, List, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
				'..', 'bench'))

import deconvert  # noqa: E402


def rewrite(text: str) -> str:
	"""Rewrites @text, checking that no line is added or removed."""
	new, _ = deconvert.rewrite_text(text)
	assert new.count('\n') == text.count('\n')
	return new


def decls_of(text: str) -> List[Tuple[int, str, str]]:
	"""Returns (line, name, kind) of the declarations in @text."""
	return [(d.line, d.name, d.kind)
		for d in deconvert.find_declarations('x.c', text)]


# ---------------------------------------------------------------------------
# Rewriting


def test_simple_mapping() -> None:
	src = ('struct s { refcount_t ref; };\n'
	       'static refcount_t g = REFCOUNT_INIT(1);\n'
	       'void f(struct s *p)\n'
	       '{\n'
	       '\trefcount_set(&p->ref, 1);\n'
	       '\trefcount_inc(&p->ref);\n'
	       '\tif (refcount_dec_and_test(&p->ref))\n'
	       '\t\tkfree(p);\n'
	       '\tif (refcount_dec_and_mutex_lock(&p->ref, &m))\n'
	       '\t\tx = refcount_read(&p->ref);\n'
	       '}\n')
	want = ('struct s { atomic_t ref; };\n'
		'static atomic_t g = ATOMIC_INIT(1);\n'
		'void f(struct s *p)\n'
		'{\n'
		'\tatomic_set(&p->ref, 1);\n'
		'\tatomic_inc(&p->ref);\n'
		'\tif (atomic_dec_and_test(&p->ref))\n'
		'\t\tkfree(p);\n'
		'\tif (atomic_dec_and_mutex_lock(&p->ref, &m))\n'
		'\t\tx = atomic_read(&p->ref);\n'
		'}\n')
	assert rewrite(src) == want


def test_word_exact() -> None:
	src = ('my_refcount_t a; refcount_t_x b; xrefcount_inc(c);\n'
	       'refcount_incr(d); refcount_inc_foo(e); REFCOUNT_INIT_X;\n'
	       'ocfs2_refcount_tree t; s.refcount_t2 = 1;\n')
	assert rewrite(src) == src


def test_strings_untouched_comments_renamed() -> None:
	src = ('pr_info("refcount_t: refcount_inc() %c", \'r\');\n'
	       '/* use refcount_inc() on the refcount_t */\n'
	       '// refcount_dec_if_one() is left alone in comments\n')
	want = ('pr_info("refcount_t: refcount_inc() %c", \'r\');\n'
		'/* use atomic_inc() on the atomic_t */\n'
		'// refcount_dec_if_one() is left alone in comments\n')
	new, stats = deconvert.rewrite_text(src)
	assert new == want
	assert stats.left_in_comments['refcount_dec_if_one'] == 1


def test_add_not_zero_reorder() -> None:
	src = 'if (!refcount_add_not_zero(nr, &obj->ref))\n'
	assert rewrite(src) == 'if (!atomic_add_unless(&obj->ref, nr, 0))\n'


def test_add_not_zero_nested_call() -> None:
	src = 'ok = refcount_add_not_zero(f(a, b), &x[i].ref);\n'
	assert rewrite(src) == 'ok = atomic_add_unless(&x[i].ref, f(a, b), 0);\n'


def test_add_not_zero_multi_line_keeps_lines() -> None:
	src = ('\tif (refcount_add_not_zero(nr,\n'
	       '\t\t\t\t  &obj->ref))\n'
	       '\t\tgoto out;\n')
	want = ('\tif (atomic_add_unless(&obj->ref, nr, 0)\n'
		')\n'
		'\t\tgoto out;\n')
	assert rewrite(src) == want


def test_multi_line_in_macro_keeps_continuation() -> None:
	src = ('#define GET(o) refcount_add_not_zero(2, \\\n'
	       '\t&(o)->ref)\n'
	       'int x;\n')
	want = ('#define GET(o) atomic_add_unless(&(o)->ref, 2, 0) \\\n'
		'\n'
		'int x;\n')
	assert rewrite(src) == want


def test_dec_if_one_dec_not_one() -> None:
	src = ('if (refcount_dec_if_one(&p->ref)) a();\n'
	       'while (refcount_dec_not_one(&p->ref)) b();\n')
	want = ('if ((atomic_cmpxchg(&p->ref, 1, 0) == 1)) a();\n'
		'while (atomic_add_unless(&p->ref, -1, 1)) b();\n')
	assert rewrite(src) == want


def test_dec_and_lock_irqsave_flags() -> None:
	src = ('if (refcount_dec_and_lock_irqsave(&p->ref, &l, &flags)) x();\n'
	       'if (refcount_dec_and_lock_irqsave(&p->ref, &l, fp)) x();\n'
	       'if (refcount_dec_and_lock(&p->ref, &l)) x();\n')
	want = ('if (atomic_dec_and_lock_irqsave(&p->ref, &l, flags)) x();\n'
		'if (atomic_dec_and_lock_irqsave(&p->ref, &l, *(fp))) x();\n'
		'if (atomic_dec_and_lock(&p->ref, &l)) x();\n')
	assert rewrite(src) == want


def test_oldp_forms() -> None:
	src = ('\t__refcount_inc(&c->ref, &r);\n'
	       '\tzero = __refcount_dec_and_test(&c->ref, &r);\n'
	       '\tif (__refcount_inc_not_zero(&c->ref, &r)) a();\n'
	       '\t__refcount_inc(&c->ref, NULL);\n'
	       '\tok = __refcount_add_not_zero(2, &c->ref, &s->old);\n')
	want = ('\tr = atomic_fetch_inc(&c->ref);\n'
		'\tzero = ((r = atomic_fetch_dec(&c->ref)) == 1);\n'
		'\tif (((r = atomic_fetch_add_unless(&c->ref, 1, 0)) != 0)) a();\n'
		'\tatomic_inc(&c->ref);\n'
		'\tok = ((s->old = atomic_fetch_add_unless(&c->ref, 2, 0)) != 0);\n')
	assert rewrite(src) == want


def test_refs_counter_peek() -> None:
	src = 'pr_debug("%d", cnt.refs.counter);\n'
	assert rewrite(src) == 'pr_debug("%d", cnt.counter);\n'


def test_unmapped_counted() -> None:
	src = 'refcount_t o = REFCOUNT_INIT(REFCOUNT_MAX);\n'
	new = rewrite(src)
	assert new == 'atomic_t o = ATOMIC_INIT(REFCOUNT_MAX);\n'
	counts = deconvert.count_unmapped(new, ['REFCOUNT_MAX', 'refcount_inc'])
	assert dict(counts) == {'REFCOUNT_MAX': 1}


def test_api_names() -> None:
	header = ('#define REFCOUNT_MAX INT_MAX\n'
		  'static inline void refcount_inc(refcount_t *r) { }\n'
		  'bool __refcount_add_not_zero(int i, refcount_t *r, int *o);\n')
	assert deconvert.api_names(header) == [
		'REFCOUNT_MAX', '__refcount_add_not_zero', 'refcount_inc']


# ---------------------------------------------------------------------------
# Declarations


DECL_SRC = '''\
struct foo {
	refcount_t ref;
	refcount_t *ptr;
	refcount_t a, *b, c[4];
	union {
		refcount_t inner;
	};
	refcount_t aligned ____cacheline_aligned;
};
typedef struct {
	refcount_t users;
} node_t;
static refcount_t global = REFCOUNT_INIT(1);
refcount_t arr[2];
extern refcount_t ext;
typedef refcount_t myref_t;
refcount_t *global_ptr;
refcount_t make_ref(int n);
#define DEFINE_REF(n) refcount_t n = REFCOUNT_INIT(1)
/* refcount_t in_comment; */
static void f(refcount_t *p, refcount_t q)
{
	refcount_t local = REFCOUNT_INIT(1);
	refcount_t *lp = p;
	size_t s = sizeof(refcount_t);
	struct { refcount_t in_local_struct; } tmp;
	static refcount_t slocal;
	refcount_inc((refcount_t *)lp);
}
#if 0
refcount_t dead;
#endif
#ifdef CONFIG_A
static void g(int a) {
#else
static void g(void) {
#endif
	refcount_t in_g;
}
refcount_t after_g;
'''


def test_declarations() -> None:
	assert decls_of(DECL_SRC) == [
		(2, 'ref', 'member'),
		(4, 'a', 'member'),
		(4, 'c', 'member'),
		(6, 'inner', 'member'),
		(8, 'aligned', 'member'),
		(11, 'users', 'member'),
		(13, 'global', 'global'),
		(14, 'arr', 'global'),
		(23, 'local', 'local'),
		(26, 'in_local_struct', 'member'),
		(27, 'slocal', 'local'),
		(38, 'in_g', 'local'),
		(40, 'after_g', 'global'),
	]


def test_declaration_name_on_next_line() -> None:
	src = 'struct s {\n\trefcount_t\n\t\tcount;\n};\n'
	assert decls_of(src) == [(3, 'count', 'member')]


# ---------------------------------------------------------------------------
# End to end, on a temporary git repository


FILES = {
	'drivers/foo.c': ('#include <linux/refcount.h>\n'
			  'struct foo {\n'
			  '\trefcount_t ref;\n'
			  '\tint my_refcount_t;\n'
			  '};\n'
			  'static refcount_t users;\n'
			  'int get(struct foo *f)\n'
			  '{\n'
			  '\treturn refcount_add_not_zero(2, &f->ref);\n'
			  '}\n'),
	'include/linux/refcount.h': ('#define REFCOUNT_MAX INT_MAX\n'
				     'void refcount_inc(refcount_t *r);\n'),
	'lib/refcount.c': 'void refcount_inc(refcount_t *r) { }\n',
	'tools/x.c': 'refcount_t tools_ref;\n',
	'README': 'no refcount_t here\n',
	'drivers/plain.c': 'int x;\n',
}  # type: Dict[str, str]


def sh(cwd: str, *args: str, check: bool = True) -> str:
	"""Runs a command in @cwd and returns its stdout."""
	return subprocess.run(list(args), cwd=cwd, check=check,
			      stdout=subprocess.PIPE, text=True).stdout


def make_src(root: str) -> str:
	"""Creates a tiny source git repository under @root."""
	src = os.path.join(root, 'src')
	for path, text in FILES.items():
		os.makedirs(os.path.dirname(os.path.join(src, path)),
			    exist_ok=True)
		with open(os.path.join(src, path), 'w') as f:
			f.write(text)
	sh(src, 'git', 'init', '-q', '-b', 'base')
	sh(src, 'git', 'add', '.')
	sh(src, 'git', '-c', 'user.name=t', '-c', 'user.email=t@t',
	   'commit', '-q', '-m', 'base')
	return src


def test_end_to_end() -> None:
	with tempfile.TemporaryDirectory() as root:
		src = make_src(root)
		dst = os.path.join(root, 'dst')
		lst = os.path.join(root, 'decls.tsv')
		logs = []  # type: List[str]
		stats, decls = deconvert.run(src, dst, lst, logs.append)
		assert stats.files == 1
		assert stats.calls['refcount_add_not_zero'] == 1
		with open(lst) as f:
			assert f.read() == ('drivers/foo.c:3\tref\tmember\n'
					    'drivers/foo.c:6\tusers\tglobal\n')
		assert sh(dst, 'git', 'log', '-1', '--format=%s').strip() == \
			deconvert.COMMIT_SUBJECT
		assert sh(dst, 'git', 'status', '--porcelain') == ''
		with open(os.path.join(dst, 'drivers/foo.c')) as f:
			new = f.read()
		assert new.count('\n') == FILES['drivers/foo.c'].count('\n')
		assert 'atomic_add_unless(&f->ref, 2, 0)' in new
		assert 'int my_refcount_t;' in new
		for path in ('include/linux/refcount.h', 'lib/refcount.c',
			     'tools/x.c', 'README'):
			with open(os.path.join(dst, path)) as f:
				assert f.read() == FILES[path]
		left = sh(dst, 'git', 'grep', '-l', '-w', 'refcount_t', '--',
			  '*.c', ':!tools', ':!lib/refcount.c',
			  ':!include/linux/refcount.h', check=False)
		assert left == ''

		logs.clear()
		deconvert.run(src, dst, None, logs.append)
		assert logs[0].startswith('deconvert: reusing')


def test_refuses_foreign_destination() -> None:
	with tempfile.TemporaryDirectory() as root:
		src = make_src(root)
		dst = os.path.join(root, 'dst')
		os.makedirs(dst)
		with open(os.path.join(dst, 'keep'), 'w') as f:
			f.write('x\n')
		try:
			deconvert.run(src, dst, None, lambda s: None)
		except deconvert.DeconvertError:
			pass
		else:
			assert False, 'existing destination was overwritten'
		assert os.listdir(dst) == ['keep']
