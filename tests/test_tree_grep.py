# SPDX-License-Identifier: GPL-2.0-only
"""Whole-tree greps kept per file content, and the include closure."""

import random
import subprocess
from pathlib import Path

import pytest

from conftest import make_tree
from refsweep import resolve, tree_grep


def _grep(tree: Path, spy: list[list[str]], monkeypatch: pytest.MonkeyPatch
          ) -> list[tree_grep.Hit]:
    """tree_grep.grep for two words, recording which files it read."""
    real = tree_grep._grep

    def recording(tree: Path, args: list[str], paths: list[str]
                  ) -> list[tree_grep.Hit]:
        spy.append(paths)
        return real(tree, args, paths)
    monkeypatch.setattr(tree_grep, "_grep", recording)
    return tree_grep.grep(tree, ["-wF"], ["fx_get", "fx_put"], ("*.c", "*.h"))


def test_regrep_reads_only_changed_files(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    tree = make_tree(tmp_path / "t", {
        "a.c": "void f(void)\n{\n\tfx_get(x);\n}\n",
        "b.c": "void g(void)\n{\n\tfx_put(x);\n}\n",
        "c.h": "int fx_getter;\n",          # not the word
        "tools/d.c": "fx_get();\n",         # not kernel code
    })
    spy: list[list[str]] = []
    first = _grep(tree, spy, monkeypatch)
    assert first == [("a.c", 3, "\tfx_get(x);"), ("b.c", 3, "\tfx_put(x);")]
    assert sorted(spy[-1]) == ["a.c", "b.c", "c.h"]

    assert _grep(tree, spy, monkeypatch) == first
    assert spy[-1] == []                # nothing changed: nothing read

    (tree / "b.c").write_text("void g(void)\n{\n}\n")          # changed
    (tree / "e.h").write_text("#define E fx_get(y)\n")        # untracked
    (tree / "a.c").unlink()                                     # deleted
    third = _grep(tree, spy, monkeypatch)
    assert third == [("e.h", 1, "#define E fx_get(y)")]
    assert sorted(spy[-1]) == ["b.c", "e.h"]


def test_a_worktree_of_the_same_commit_reuses_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = make_tree(tmp_path / "t", {"a.c": "fx_get();\n",
                                      "b.c": "fx_put();\n"})
    spy: list[list[str]] = []
    first = _grep(tree, spy, monkeypatch)
    other = tmp_path / "wt"
    subprocess.run(["git", "-C", str(tree), "worktree", "add", "-q",
                    "--detach", str(other)], check=True)
    (other / "b.c").write_text("fx_put();\nfx_get();\n")
    assert _grep(other, spy, monkeypatch) == [*first, ("b.c", 2, "fx_get();")]
    assert spy[-1] == ["b.c"]


def test_a_torn_cache_greps_everything_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = make_tree(tmp_path / "t", {"a.c": "fx_get();\n"})
    spy: list[list[str]] = []
    first = _grep(tree, spy, monkeypatch)
    for cache in (Path(tree_grep._cache_file("x")).parent).glob("*.json"):
        cache.write_text('{"ids": {"a.c"')
    assert _grep(tree, spy, monkeypatch) == first
    assert spy[-1] == ["a.c"]


def test_a_tree_outside_git_is_grepped_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "plain"
    (plain / "tools").mkdir(parents=True)
    (plain / "a.c").write_text("fx_get();\n")
    (plain / "tools" / "b.c").write_text("fx_get();\n")
    assert _grep(plain, [], monkeypatch) == [("a.c", 1, "fx_get();")]


def _walk(edges: dict[str, list[str]], start: str) -> set[str]:
    seen = {start}
    todo = [start]
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_include_closure_with_a_cycle() -> None:
    graph = resolve.IncludeGraph(None)
    graph.edges = {"a.c": ["x.h"], "x.h": ["y.h"], "y.h": ["x.h", "z.h"]}
    assert set(graph.sees("y.h")) == {"x.h", "y.h", "z.h"}
    assert set(graph.sees("a.c")) == {"a.c", "x.h", "y.h", "z.h"}
    assert set(graph.sees("z.h")) == {"z.h"}
    assert "a.c" not in graph.sees("x.h")
    assert {"a.c", "z.h", "q.h"} & graph.sees("x.h") == {"z.h"}


@pytest.mark.parametrize("seed", range(20))
def test_include_closure_matches_a_plain_walk(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"f{i}.h" for i in range(30)]
    edges = {n: rng.sample(names, rng.randint(0, 4)) for n in names}
    graph = resolve.IncludeGraph(None)
    graph.edges = edges
    # Asked in a random order, so that later walks reuse earlier closures.
    for name in rng.sample(names, len(names)):
        assert set(graph.sees(name)) == _walk(edges, name), name


def test_a_failing_grep_is_an_error(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "t", {"a.c": "fx_get();\n"})
    with pytest.raises(tree_grep.GrepError, match="grep failed in"):
        tree_grep.grep(tree, ["--no-such-option"], ["fx_get"], ("*.c",))


def test_chunks_grepped_in_parallel_keep_every_hit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"d{i}.c": f"int x{i};\nfx_get({i});\n" for i in range(9)}
    tree = make_tree(tmp_path / "t", files)
    whole = tree_grep._grep(tree, ["-wF", "-e", "fx_get"], sorted(files))
    monkeypatch.setattr(tree_grep, "_CHUNK", 2)
    chunked = tree_grep._grep(tree, ["-wF", "-e", "fx_get"], sorted(files))
    assert chunked == whole
    assert sorted(whole) == [(f"d{i}.c", 2, f"fx_get({i});")
                             for i in range(9)]
