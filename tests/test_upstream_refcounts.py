# SPDX-License-Identifier: GPL-2.0-only
"""bench/upstream_refcounts.py: key matching on two hand-written trees."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "bench"))

import upstream_refcounts as up  # noqa: E402

UPSTREAM = TOP / "tests" / "fixtures" / "upstream"
EXPECTED = {
    "struct fx_conn.refs": "atomic_t",
    "struct fx_conn.users": "atomic64_t",
    "struct fx_conn.inner": "atomic_t",
    "struct fx_moved.count": "atomic_long_t",
    "struct fx_handle_t.pins": "atomic_t",
    "drivers/fx/conn.c:fx_global_refs": "atomic_t",
    "drivers/fx/conn.c:fx_func:local": "atomic_t",
}


def git_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    git = ["git", "-C", str(dst), "-c", "user.name=t", "-c",
           "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "fixture"], check=True)
    return dst


def trees(tmp_path: Path) -> tuple[Path, Path]:
    return (git_tree(UPSTREAM / "old", tmp_path / "old"),
            git_tree(UPSTREAM / "new", tmp_path / "new"))


def test_refcount_decls_keys_and_exclusions() -> None:
    path = "drivers/fx/conn.c"
    text = (UPSTREAM / "new" / path).read_text(encoding="utf-8")
    keys = {f.key for f in up.refcount_decls(path, text)}
    assert keys == {"struct fx_conn.refs", "struct fx_conn.users",
                    "struct fx_conn.inner", "struct fx_handle_t.pins",
                    "drivers/fx/conn.c:fx_global_refs",
                    "drivers/fx/conn.c:fx_func:local",
                    "drivers/fx/conn.c:fx_new_func:fresh"}
    # Atomics of the same file are not refcount_t declarations.
    assert "struct fx_conn.drops" not in keys
    assert all(f.type == "refcount_t" for f in
               up.refcount_decls(path, text))


def test_refcount_decl_lines_are_the_new_tree_lines() -> None:
    path = "drivers/fx/conn.c"
    text = (UPSTREAM / "new" / path).read_text(encoding="utf-8")
    by_key = {f.key: f.decl for f in up.refcount_decls(path, text)}
    line = next(n for n, s in enumerate(text.splitlines(), 1)
                if "refcount_t refs;" in s)
    assert by_key["struct fx_conn.refs"] == f"{path}:{line}"


def test_atomic_decls_skip_pointers() -> None:
    path = "drivers/fx/conn.c"
    text = (UPSTREAM / "old" / path).read_text(encoding="utf-8")
    keys = {f.key for f in up.atomic_decls(path, text)}
    assert "drivers/fx/conn.c:fx_ptr" not in keys
    assert "drivers/fx/conn.c:fx_seq" in keys


def test_converted_on_fixture_trees(tmp_path: Path) -> None:
    old, new = trees(tmp_path)
    items = up.converted(up.tree_atomics(old), up.tree_refcounts(new))
    assert {c.key: c.old_type for c in items} == EXPECTED
    moved = next(c for c in items if c.key == "struct fx_moved.count")
    assert moved.old_decls[0].startswith("drivers/fx/conn.c:")
    assert moved.new_decls[0].startswith("include/fx/moved.h:")


def _verdict(key: str, verdict: str, **extra: object) -> dict[str, object]:
    return {"key": key, "verdict": verdict, "rule": "r", "decl": "x.c:1",
            **extra}


def test_report_lists_every_one_not_checked() -> None:
    items = [up.Converted(k, t, ["a:1"], ["b:1"])
             for k, t in sorted(EXPECTED.items())]
    keys = sorted(EXPECTED)
    found = {keys[0]: _verdict(keys[0], "refcount"),
             keys[1]: _verdict(keys[1], "statistic"),
             keys[2]: _verdict(keys[2], "refcount", wrap_by_design=True),
             keys[3]: _verdict(keys[3], "unknown"),
             keys[4]: _verdict(keys[4], "usage"),
             keys[5]: _verdict(keys[5], "id")}
    lines, bad = up.report(items, found)
    text = "\n".join(lines)
    assert bad == 3
    for k in (keys[1], keys[2], keys[5]):
        assert f"NOT CHECKED {k} " in text
    assert f"missing {keys[6]} " in text
    assert "checked: 3/7" in text


def test_cli_writes_the_list_and_fails_on_a_wrap_safe_one(
        tmp_path: Path) -> None:
    old, new = trees(tmp_path)
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text("".join(
        json.dumps(_verdict(k, "id" if k.endswith(".pins") else "refcount"))
        + "\n" for k in EXPECTED), encoding="utf-8")
    out = tmp_path / "list.tsv"
    rc = up.main(["--old", str(old), "--new", str(new), "--list", str(out),
                  str(verdicts)])
    assert rc == 1
    rows = out.read_text(encoding="utf-8").splitlines()
    assert rows[0].split("\t")[0] == "key"
    assert {r.split("\t")[0] for r in rows[1:]} == set(EXPECTED)


def test_cli_refuses_a_directory_that_is_not_a_tree(tmp_path: Path) -> None:
    assert up.main(["--old", str(tmp_path), "--new", str(tmp_path)]) == 2


def test_from_list_reads_what_list_wrote(tmp_path: Path) -> None:
    old, new = trees(tmp_path)
    out = tmp_path / "list.tsv"
    assert up.main(["--old", str(old), "--new", str(new), "--list",
                    str(out)]) == 0
    assert up.read_list(out) == up.converted(up.tree_atomics(old),
                                             up.tree_refcounts(new))
    bad = tmp_path / "bad.tsv"
    bad.write_text("key\told_type\nstruct a.b\tatomic_t\n", encoding="utf-8")
    assert up.main(["--from-list", str(bad), str(out)]) == 2
