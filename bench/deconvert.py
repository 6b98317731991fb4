#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Builds the "de-converted" refsweep correctness benchmark input: a copy of a
# kernel tree in which every refcount_t is turned back into an atomic_t and
# the refcount API into the equivalent atomic_t API.
#
# The rewrite is line-preserving (no line is added or removed, so PATH:LINE
# of every declaration is the same as in the source tree) and token-exact
# (only whole identifiers are rewritten; nothing inside string or character
# literals is touched).
#
# Mapping (6.12 include/linux/refcount.h):
#
#   refcount_t                            -> atomic_t
#   REFCOUNT_INIT(n)                      -> ATOMIC_INIT(n)
#   refcount_set / refcount_set_release   -> atomic_set / atomic_set_release
#   refcount_read                         -> atomic_read
#   refcount_inc / refcount_add           -> atomic_inc / atomic_add
#   refcount_dec                          -> atomic_dec
#   refcount_dec_and_test                 -> atomic_dec_and_test
#   refcount_sub_and_test                 -> atomic_sub_and_test
#   refcount_inc_not_zero(_acquire)       -> atomic_inc_not_zero (fully
#                                            ordered, so at least acquire)
#   refcount_dec_and_lock                 -> atomic_dec_and_lock
#   refcount_dec_and_mutex_lock           -> atomic_dec_and_mutex_lock
#   refcount_add_not_zero(_acquire)(i, r) -> atomic_add_unless(r, i, 0)
#   refcount_dec_if_one(r)                -> (atomic_cmpxchg(r, 1, 0) == 1)
#   refcount_dec_not_one(r)               -> atomic_add_unless(r, -1, 1)
#   refcount_dec_and_lock_irqsave(r, l, &f)
#                                         -> atomic_dec_and_lock_irqsave(r, l, f)
#   __refcount_inc(r, &old)               -> (old = atomic_fetch_inc(r))
#   __refcount_dec(r, &old)               -> (old = atomic_fetch_dec(r))
#   __refcount_add(i, r, &old)            -> (old = atomic_fetch_add(i, r))
#   __refcount_dec_and_test(r, &old)      -> ((old = atomic_fetch_dec(r)) == 1)
#   __refcount_sub_and_test(i, r, &old)   -> ((old = atomic_fetch_sub(i, r)) == (i))
#   __refcount_inc_not_zero(r, &old)      -> ((old = atomic_fetch_add_unless(r, 1, 0)) != 0)
#   __refcount_add_not_zero(i, r, &old)   -> ((old = atomic_fetch_add_unless(r, i, 0)) != 0)
#   (an oldp of NULL gives the plain form; any other oldp p gives *(p))
#   X.refs.counter (peeking into refcount_t) -> X.counter
#
# Calls that need their arguments rearranged are only rewritten in code (not
# in comments).  When such a call spans several lines, the rewritten call is
# put on its first line and the line breaks it contained are emitted right
# after it (with a backslash when inside a macro), so the line count and the
# position of everything outside the call are kept.
#
# Copyright (C) 2026, refsweep project.

import argparse
import bisect
import collections
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Counter, Dict, Iterable, List, Optional, Tuple

COMMIT_SUBJECT = 'refsweep bench: de-convert refcount_t to atomic_t'
DECONVERT_VERSION = '1'
BRANCH = 'refsweep-deconvert'

GREP_PATTERN = r'refcount_|REFCOUNT_INIT'
API_FILES = frozenset((
	'include/linux/refcount.h',
	'include/linux/refcount_types.h',
	'lib/refcount.c',
))
EXCLUDED_DIRS = ('tools/', 'Documentation/', 'scripts/')
C_SUFFIXES = ('.c', '.h')

RENAMES = {
	'refcount_t': 'atomic_t',
	'REFCOUNT_INIT': 'ATOMIC_INIT',
	'refcount_set': 'atomic_set',
	'refcount_set_release': 'atomic_set_release',
	'refcount_read': 'atomic_read',
	'refcount_inc': 'atomic_inc',
	'refcount_add': 'atomic_add',
	'refcount_dec': 'atomic_dec',
	'refcount_sub_and_test': 'atomic_sub_and_test',
	'refcount_dec_and_test': 'atomic_dec_and_test',
	'refcount_inc_not_zero': 'atomic_inc_not_zero',
	'refcount_inc_not_zero_acquire': 'atomic_inc_not_zero',
	'refcount_dec_and_lock': 'atomic_dec_and_lock',
	'refcount_dec_and_mutex_lock': 'atomic_dec_and_mutex_lock',
}  # type: Dict[str, str]

# name -> (number of arguments, template).  "{N}" is argument N, "{N*}" is
# the object argument N points to (for oldp / flags pointers).
CALL_TEMPLATES = {
	'refcount_add_not_zero': (2, 'atomic_add_unless({1}, {0}, 0)'),
	'refcount_add_not_zero_acquire': (2, 'atomic_add_unless({1}, {0}, 0)'),
	'refcount_dec_if_one': (1, '(atomic_cmpxchg({0}, 1, 0) == 1)'),
	'refcount_dec_not_one': (1, 'atomic_add_unless({0}, -1, 1)'),
	'refcount_dec_and_lock_irqsave':
		(3, 'atomic_dec_and_lock_irqsave({0}, {1}, {2*})'),
	'__refcount_add': (3, '({2*} = atomic_fetch_add({0}, {1}))'),
	'__refcount_add_not_zero':
		(3, '(({2*} = atomic_fetch_add_unless({1}, {0}, 0)) != 0)'),
	'__refcount_add_not_zero_acquire':
		(3, '(({2*} = atomic_fetch_add_unless({1}, {0}, 0)) != 0)'),
	'__refcount_inc': (2, '({1*} = atomic_fetch_inc({0}))'),
	'__refcount_inc_not_zero':
		(2, '(({1*} = atomic_fetch_add_unless({0}, 1, 0)) != 0)'),
	'__refcount_inc_not_zero_acquire':
		(2, '(({1*} = atomic_fetch_add_unless({0}, 1, 0)) != 0)'),
	'__refcount_dec': (2, '({1*} = atomic_fetch_dec({0}))'),
	'__refcount_dec_and_test': (2, '(({1*} = atomic_fetch_dec({0})) == 1)'),
	'__refcount_sub_and_test':
		(3, '(({2*} = atomic_fetch_sub({0}, {1})) == ({0}))'),
}  # type: Dict[str, Tuple[int, str]]

# Templates for the __refcount_*() forms when oldp is NULL.
NULL_OLDP_TEMPLATES = {
	'__refcount_add': 'atomic_add({0}, {1})',
	'__refcount_add_not_zero': 'atomic_add_unless({1}, {0}, 0)',
	'__refcount_add_not_zero_acquire': 'atomic_add_unless({1}, {0}, 0)',
	'__refcount_inc': 'atomic_inc({0})',
	'__refcount_inc_not_zero': 'atomic_inc_not_zero({0})',
	'__refcount_inc_not_zero_acquire': 'atomic_inc_not_zero({0})',
	'__refcount_dec': 'atomic_dec({0})',
	'__refcount_dec_and_test': 'atomic_dec_and_test({0})',
	'__refcount_sub_and_test': 'atomic_sub_and_test({0}, {1})',
}  # type: Dict[str, str]

REFS_COUNTER = '.refs.counter'

_TOKEN_RE = re.compile(r'\b(?:%s)\b|\.refs\.counter\b' % '|'.join(
	sorted(list(RENAMES) + list(CALL_TEMPLATES), key=len, reverse=True)))
_SIMPLE_RE = re.compile(r'\b(?:%s)\b' % '|'.join(
	sorted(RENAMES, key=len, reverse=True)))
_LITERAL_RE = re.compile(
	r'//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
	re.S)
_TEMPLATE_FIELD_RE = re.compile(r'\{(\d)(\*?)\}')
_ADDRESS_OF_RE = re.compile(
	r'&\s*([A-Za-z_]\w*(?:\s*(?:\.|->)\s*[A-Za-z_]\w*|\s*\[[^\[\]]*\])*)')
_DIRECTIVE_RE = re.compile(r'^[ \t]*#[ \t]*(\w*)(?:[^\n]*\\\n)*[^\n]*', re.M)

COMMENT = 'comment'
STRING = 'string'


@dataclass
class Span:
	"""A comment or a string/character literal in a C file."""
	start: int
	end: int
	kind: str


@dataclass
class RewriteStats:
	"""What a rewrite did, summed over files."""
	files: int = 0
	calls: Counter[str] = field(default_factory=collections.Counter)
	unmapped: Counter[str] = field(default_factory=collections.Counter)
	left_in_comments: Counter[str] = field(
		default_factory=collections.Counter)

	def merge(self, other: 'RewriteStats') -> None:
		"""Adds the counts of @other to these."""
		self.files += other.files
		self.calls.update(other.calls)
		self.unmapped.update(other.unmapped)
		self.left_in_comments.update(other.left_in_comments)


@dataclass(frozen=True)
class Declaration:
	"""A refcount_t variable declaration: PATH:LINE, name and kind."""
	path: str
	line: int
	name: str
	kind: str

	def __str__(self) -> str:
		return f'{self.path}:{self.line}\t{self.name}\t{self.kind}'


class DeconvertError(Exception):
	"""The de-converted tree cannot be built."""


# ---------------------------------------------------------------------------
# Lexing helpers


def find_literals(text: str) -> List[Span]:
	"""Returns the comments and string/char literals of C @text, in order.

	Literals never span lines (except via backslash-newline), so a stray
	quote (e.g. in "#error don't") does not swallow the rest of the file.
	"""
	spans = []
	for m in _LITERAL_RE.finditer(text):
		kind = COMMENT if m.group().startswith('/') else STRING
		spans.append(Span(m.start(), m.end(), kind))
	return spans


def blank(text: str, spans: Iterable[Span]) -> str:
	"""Replaces the inside of @spans in @text by spaces, keeping newlines."""
	parts = []
	pos = 0
	for s in spans:
		parts.append(text[pos:s.start])
		parts.append(re.sub(r'[^\n]', ' ', text[s.start:s.end]))
		pos = s.end
	parts.append(text[pos:])
	return ''.join(parts)


def span_kind_at(spans: List[Span], starts: List[int], pos: int) -> str:
	"""Returns COMMENT, STRING or '' (code) for offset @pos."""
	i = bisect.bisect_right(starts, pos) - 1
	if i >= 0 and spans[i].start <= pos < spans[i].end:
		return spans[i].kind
	return ''


def match_paren(code: str, open_pos: int) -> int:
	"""Returns the offset just past the bracket closing code[@open_pos].

	@code must have comments and literals blanked.  Returns -1 if unbalanced.
	"""
	depth = 0
	for i in range(open_pos, len(code)):
		c = code[i]
		if c in '([{':
			depth += 1
		elif c in ')]}':
			depth -= 1
			if depth == 0:
				return i + 1
	return -1


def split_args(code: str, start: int, end: int) -> List[Tuple[int, int]]:
	"""Splits code[@start:@end] (inside a call's parens) at top-level commas.

	Returns the (start, end) offsets of every argument.
	"""
	args = []
	depth = 0
	arg_start = start
	for i in range(start, end):
		c = code[i]
		if c in '([{':
			depth += 1
		elif c in ')]}':
			depth -= 1
		elif c == ',' and depth == 0:
			args.append((arg_start, i))
			arg_start = i + 1
	args.append((arg_start, end))
	return args


def normalize_arg(arg: str) -> str:
	"""Joins a (possibly multi-line) argument into one line."""
	arg = re.sub(r'\\\n', ' ', arg)
	return re.sub(r'\s+', ' ', arg).strip()


def deref(arg: str) -> str:
	"""Returns C for the object that pointer expression @arg points to."""
	m = _ADDRESS_OF_RE.fullmatch(arg)
	if m:
		return re.sub(r'\s+', '', m.group(1))
	return f'*({arg})'


def fill_template(template: str, args: List[str]) -> str:
	"""Substitutes {N} / {N*} fields of @template with @args."""
	def field_value(m: 're.Match[str]') -> str:
		arg = args[int(m.group(1))]
		return deref(arg) if m.group(2) else arg
	return _TEMPLATE_FIELD_RE.sub(field_value, template)


# ---------------------------------------------------------------------------
# Rewriting


def is_statement(code: str, start: int, end: int) -> bool:
	"""Is code[@start:@end] a whole expression statement?"""
	before = code[:start].rstrip()
	return (not before or before[-1] in ';{}') and \
		code[end:end + 200].lstrip().startswith(';')


def strip_outer_parens(expr: str) -> str:
	"""Drops one pair of parentheses enclosing all of @expr (if any)."""
	body = expr.rstrip('\\\n ')
	if body.startswith('(') and match_paren(body, 0) == len(body):
		return body[1:-1] + expr[len(body):]
	return expr


def rewrite_call(name: str, text: str, code: str,
		 pos: int) -> Optional[Tuple[int, str]]:
	"""Rewrites the call to @name whose arguments start after @pos.

	Returns (end offset of the call, replacement) or None if the call
	cannot be rewritten (not a call, wrong arity, comments inside a
	multi-line call).
	"""
	m = re.compile(r'\s*\(').match(code, pos)
	if not m:
		return None
	open_pos = m.end() - 1
	end = match_paren(code, open_pos)
	if end < 0:
		return None
	extent = text[pos:end]
	newlines = extent.count('\n')
	if newlines and code[pos:end] != extent:
		return None
	raw_args = [text[a:b] for a, b in split_args(code, open_pos + 1, end - 1)]
	args = [_SIMPLE_RE.sub(lambda t: RENAMES[t.group()], normalize_arg(a))
		for a in raw_args]
	arity, template = CALL_TEMPLATES[name]
	if len(args) != arity:
		return None
	if name in NULL_OLDP_TEMPLATES and args[-1] == 'NULL':
		template = NULL_OLDP_TEMPLATES[name]
	new = fill_template(template, args)
	if newlines:
		breaks = re.findall(r'\\?\n', extent)
		new += ''.join(' \\\n' if b != '\n' else '\n' for b in breaks)
	return end, new


def rewrite_text(text: str) -> Tuple[str, RewriteStats]:
	"""De-converts one C file; returns the new text and what was done."""
	stats = RewriteStats()
	spans = find_literals(text)
	starts = [s.start for s in spans]
	code = blank(text, spans)
	parts = []
	pos = 0
	repl = ''
	for m in _TOKEN_RE.finditer(text):
		if m.start() < pos:
			continue	# inside a call rewritten already
		name = m.group()
		kind = span_kind_at(spans, starts, m.start())
		if kind == STRING:
			continue
		if name == REFS_COUNTER:
			if kind:
				continue
			repl = '.counter'
			end = m.end()
		elif name in RENAMES:
			repl = RENAMES[name]
			end = m.end()
		elif kind:
			stats.left_in_comments[name] += 1
			continue
		else:
			done = rewrite_call(name, text, code, m.end())
			if done is None:
				stats.unmapped[name] += 1
				continue
			end, repl = done
			if is_statement(code, m.start(), end):
				repl = strip_outer_parens(repl)
		stats.calls[name] += 1
		parts.append(text[pos:m.start()])
		parts.append(repl)
		pos = end
	parts.append(text[pos:])
	new = ''.join(parts)
	if new.count('\n') != text.count('\n'):
		raise DeconvertError('rewrite changed the number of lines')
	if new != text:
		stats.files = 1
	return new, stats


def api_names(refcount_h: str) -> List[str]:
	"""Returns the functions, macros and enumerators of refcount.h."""
	names = set(re.findall(r'\b(_*refcount_\w+)\s*\(', refcount_h))
	names.update(re.findall(r'\b(REFCOUNT_[A-Z_]+)\b', refcount_h))
	names.discard('REFCOUNT_H')
	return sorted(names)


def count_unmapped(text: str, names: Iterable[str]) -> Counter[str]:
	"""Counts code (not comment/literal) uses of @names left in @text."""
	wanted = [n for n in names if n not in RENAMES and
		  n not in CALL_TEMPLATES]
	counts = collections.Counter()	# type: Counter[str]
	if not wanted:
		return counts
	code = blank(text, find_literals(text))
	pattern = r'\b(?:%s)\b' % '|'.join(sorted(wanted, key=len, reverse=True))
	counts.update(re.findall(pattern, code))
	return counts


# ---------------------------------------------------------------------------
# Declarations


@dataclass
class _CondFrame:
	"""State saved at an #if for the brace-stack heuristic."""
	saved: List[List[int]]
	first_result: Optional[List[List[int]]] = None
	dead: bool = False


MEMBER = 'member'
GLOBAL = 'global'
LOCAL = 'local'

_AGGR = 0
_BLOCK = 1
_INIT = 2
_ENUM = 3

_DECL_EVENT_RE = re.compile(r'[{}();]|\brefcount_t\b')
_SKIP_WORDS = frozenset(('const', 'volatile', '__rcu', '__percpu',
			 '__randomize_layout', '__data_racy'))


def _brace_kind(head: str, outer: int) -> int:
	"""Classifies a '{' from the text @head since the previous ;{}."""
	if outer == _INIT:
		return _INIT
	head = re.sub(r'__attribute__\s*\(\(.*?\)\)', ' ', head, flags=re.S)
	head = re.sub(r'\b__aligned\s*\([^()]*\)', ' ', head).strip()
	if head.endswith('=') or re.search(r'=\s*\([^()]*\)$', head):
		return _INIT
	if head.endswith(')'):
		return _BLOCK
	if re.search(r'\b(struct|union)\b', head):
		return _AGGR
	if re.search(r'\benum\b', head):
		return _ENUM
	return _BLOCK


def _declarators(code: str, pos: int) -> List[Tuple[int, str]]:
	"""Returns (offset, name) of the plain (non-pointer) declarators.

	@pos is just after 'refcount_t'.  Function declarations and
	declarations that cannot be parsed give [].
	"""
	result = []
	depth = 0
	i = pos
	decl_start = pos
	while i < len(code):
		c = code[i]
		if c in '([':
			depth += 1
		elif c in ')]':
			depth -= 1
			if depth < 0:
				return []
		elif depth == 0 and c in ',;':
			decl = _one_declarator(code, decl_start, i)
			if decl is None:
				return []
			if decl[1]:
				result.append(decl)
			if c == ';':
				return result
			decl_start = i + 1
		elif depth == 0 and c in '{}':
			return []
		i += 1
	return []


def _one_declarator(code: str, start: int,
		    end: int) -> Optional[Tuple[int, str]]:
	"""Parses one declarator; (offset, '') for pointers, None for functions."""
	tokens = list(re.finditer(r'[A-Za-z_]\w*|\S', code[start:end]))
	for i, m in enumerate(tokens):
		word = m.group()
		if word in _SKIP_WORDS:
			continue
		if not re.fullmatch(r'[A-Za-z_]\w*', word):
			return start, ''
		if i + 1 < len(tokens) and tokens[i + 1].group() == '(':
			return None
		return start + m.start(), word
	return start, ''


def _directive_events(code: str) -> Tuple[str, List[Tuple[int, str]]]:
	"""Blanks preprocessor directives; returns the text and #if events."""
	events = []
	spans = []
	for m in _DIRECTIVE_RE.finditer(code):
		word = m.group(1)
		if word in ('if', 'ifdef', 'ifndef'):
			dead = bool(re.fullmatch(r'\s*#\s*if\s+0\s*', m.group()))
			events.append((m.start(), 'if0' if dead else 'if'))
		elif word in ('elif', 'else', 'endif'):
			events.append((m.start(), word))
		spans.append(Span(m.start(), m.end(), 'directive'))
	return blank(code, spans), events


def find_declarations(path: str, text: str) -> List[Declaration]:
	"""Lists the refcount_t variables declared in C file @text.

	Struct/union members, globals and locals are listed; pointers,
	parameters, casts, sizeof(), function return types, typedefs, extern
	declarations, macro bodies and #if 0 code are not.  Kinds come from a
	brace-stack heuristic; at #else/#elif the stack is reset to its state
	at the #if, and after #endif the first branch's state is kept.
	"""
	code, events = _directive_events(blank(text, find_literals(text)))
	tokens = [(m.start(), m.group()) for m in _DECL_EVENT_RE.finditer(code)]
	merged = sorted(tokens + events)
	stack = [[-1, 0]]	# [brace kind, paren depth]; -1: file scope
	conds = []	# type: List[_CondFrame]
	last_delim = -1
	decls = []
	for pos, tok in merged:
		if tok in ('if', 'if0'):
			conds.append(_CondFrame([f[:] for f in stack],
						dead=tok == 'if0'))
		elif tok in ('elif', 'else'):
			if conds:
				cond = conds[-1]
				if cond.first_result is None:
					cond.first_result = stack
				stack = [f[:] for f in cond.saved]
				cond.dead = False
		elif tok == 'endif':
			if conds:
				cond = conds.pop()
				if cond.first_result is not None:
					stack = cond.first_result
		elif tok == '(':
			stack[-1][1] += 1
		elif tok == ')':
			stack[-1][1] = max(0, stack[-1][1] - 1)
		elif tok == '{':
			brace = _brace_kind(code[last_delim + 1:pos], stack[-1][0])
			stack.append([brace, 0])
			last_delim = pos
		elif tok == '}':
			if len(stack) > 1:
				stack.pop()
			last_delim = pos
		elif tok == ';':
			last_delim = pos
		elif stack[-1][1] == 0 and not any(c.dead for c in conds):
			head = code[last_delim + 1:pos]
			if re.search(r'\b(typedef|extern)\b', head):
				continue
			scope = {_AGGR: MEMBER, _BLOCK: LOCAL, -1: GLOBAL}.get(
				stack[-1][0])
			if scope is None:
				continue
			for off, name in _declarators(code, pos + len(tok)):
				line = code.count('\n', 0, off) + 1
				decls.append(Declaration(path, line, name, scope))
	return decls


# ---------------------------------------------------------------------------
# Git plumbing


def git(repo: str, *args: str, stdin: Optional[bytes] = None) -> bytes:
	"""Runs git in @repo and returns its stdout; raises on failure."""
	proc = subprocess.run(['git', '-C', repo] + list(args), input=stdin,
			      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
			      check=False)
	if proc.returncode:
		raise DeconvertError(f'git {" ".join(args)} in {repo}: '
				     f'{proc.stderr.decode(errors="replace").strip()}')
	return proc.stdout


def is_candidate(path: str) -> bool:
	"""Is @path a C file outside the API files and excluded directories?"""
	return (path.endswith(C_SUFFIXES) and path not in API_FILES and
		not path.startswith(EXCLUDED_DIRS))


def grep_files(repo: str, rev: str) -> List[str]:
	"""Lists the candidate files of @rev that mention the refcount API."""
	out = git(repo, 'grep', '-l', '-E', GREP_PATTERN, rev, '--', '*.c', '*.h')
	prefix = rev + ':'
	paths = [p[len(prefix):] if p.startswith(prefix) else p
		 for p in out.decode('utf-8', 'surrogateescape').splitlines()]
	return sorted(p for p in paths if is_candidate(p))


def read_blobs(repo: str, rev: str, paths: List[str]) -> Dict[str, str]:
	"""Reads @paths at @rev with one 'git cat-file --batch'."""
	request = ''.join(f'{rev}:{p}\n' for p in paths).encode(
		'utf-8', 'surrogateescape')
	out = git(repo, 'cat-file', '--batch', stdin=request)
	blobs = {}
	pos = 0
	for p in paths:
		nl = out.index(b'\n', pos)
		header = out[pos:nl].split()
		if len(header) != 3:
			raise DeconvertError(f'cannot read {rev}:{p}')
		size = int(header[2])
		blobs[p] = out[nl + 1:nl + 1 + size].decode(
			'utf-8', 'surrogateescape')
		pos = nl + 1 + size + 1
	return blobs


def commit_message(src_head: str) -> str:
	"""The message of the de-convert commit for source commit @src_head."""
	return (f'{COMMIT_SUBJECT}\n\nSource-commit: {src_head}\n'
		f'Deconvert-version: {DECONVERT_VERSION}\n')


def reusable(dst: str, src_head: str) -> bool:
	"""Does @dst already hold the de-convert commit on top of @src_head?"""
	if not os.path.exists(dst):
		return False
	try:
		info = git(dst, 'log', '-1', '--format=%P%n%B').decode()
	except DeconvertError:
		return False
	parent, _, body = info.partition('\n')
	return parent == src_head and body.strip() == \
		commit_message(src_head).strip()


def create_tree(src: str, dst: str, src_head: str,
		files: Dict[str, str]) -> None:
	"""Clones @src to @dst at @src_head and commits the rewritten @files."""
	if os.path.exists(dst) and os.listdir(dst):
		raise DeconvertError(f'{dst} exists and is not a de-converted '
				     f'tree of {src_head}; remove it first')
	git(src, 'clone', '-q', '--shared', '--no-checkout', src, dst)
	git(dst, 'checkout', '-q', '-b', BRANCH, src_head)
	for path, text in files.items():
		with open(os.path.join(dst, path), 'wb') as f:
			f.write(text.encode('utf-8', 'surrogateescape'))
	git(dst, 'add', '--', *files)
	git(dst, '-c', 'user.name=refsweep', '-c', 'user.email=refsweep@localhost',
	    'commit', '-q', '--no-verify', '-F', '-',
	    stdin=commit_message(src_head).encode())


# ---------------------------------------------------------------------------
# Driver


def deconvert_files(blobs: Dict[str, str],
		    api: Iterable[str]) -> Tuple[Dict[str, str], RewriteStats]:
	"""Rewrites @blobs; returns the changed files and the summed stats."""
	changed = {}
	total = RewriteStats()
	names = list(api)
	for path, text in blobs.items():
		new, stats = rewrite_text(text)
		stats.unmapped.update(count_unmapped(new, names))
		total.merge(stats)
		if new != text:
			changed[path] = new
	return changed, total


def list_declarations(blobs: Dict[str, str]) -> List[Declaration]:
	"""Lists the refcount_t variable declarations of all @blobs."""
	decls = []
	for path in sorted(blobs):
		if re.search(r'\brefcount_t\b', blobs[path]):
			decls.extend(find_declarations(path, blobs[path]))
	return decls


def format_counter(counts: Counter[str]) -> str:
	"""Formats @counts as 'a=3,b=1' (most common first) or 'none'."""
	if not counts:
		return 'none'
	return ','.join(f'{k}={v}' for k, v in counts.most_common())


def summary(stats: RewriteStats, decls: List[Declaration]) -> str:
	"""The one-line summary printed by the CLI."""
	kinds = collections.Counter(d.kind for d in decls)
	return (f'deconvert: {stats.files} files rewritten; '
		f'{sum(stats.calls.values())} rewrites '
		f'({format_counter(stats.calls)}); '
		f'{len(decls)} declarations listed ({format_counter(kinds)}); '
		f'{sum(stats.unmapped.values())} unmapped in code '
		f'({format_counter(stats.unmapped)}); '
		f'left in comments: {format_counter(stats.left_in_comments)}')


def run(src: str, dst: str, list_file: Optional[str],
	log: Callable[[str], None] = print) -> Tuple[RewriteStats,
						     List[Declaration]]:
	"""Builds (or reuses) the de-converted tree @dst of @src."""
	t0 = time.monotonic()
	src = os.path.abspath(src)
	dst = os.path.abspath(dst)
	src_head = git(src, 'rev-parse', 'HEAD').decode().strip()
	paths = grep_files(src, src_head)
	blobs = read_blobs(src, src_head, paths)
	try:
		refcount_h = read_blobs(src, src_head,
					['include/linux/refcount.h'])
		api = api_names(refcount_h['include/linux/refcount.h'])
	except DeconvertError:
		api = []
	changed, stats = deconvert_files(blobs, api)
	decls = list_declarations(blobs)
	if reusable(dst, src_head):
		log(f'deconvert: reusing {dst} (already de-converted {src_head[:12]})')
	else:
		create_tree(src, dst, src_head, changed)
		log(f'deconvert: created {dst} from {src_head[:12]}')
	if list_file:
		with open(list_file, 'w') as f:
			f.writelines(f'{d}\n' for d in decls)
	log(summary(stats, decls))
	log(f'deconvert: done in {time.monotonic() - t0:.1f}s')
	return stats, decls


def main(argv: List[str]) -> int:
	"""CLI entry point."""
	parser = argparse.ArgumentParser(
		description='Build a kernel tree with refcount_t de-converted '
			    'to atomic_t (refsweep benchmark input).')
	parser.add_argument('--tree', required=True, help='source git tree')
	parser.add_argument('--out', required=True,
			    help='destination (created as a git clone)')
	parser.add_argument('--list', metavar='FILE',
			    help='write PATH:LINE<TAB>NAME<TAB>KIND of every '
				 'refcount_t variable declaration')
	args = parser.parse_args(argv)
	try:
		run(args.tree, args.out, args.list)
	except DeconvertError as e:
		print(f'deconvert: error: {e}', file=sys.stderr)
		return 1
	return 0


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
