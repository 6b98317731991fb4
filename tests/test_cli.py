# SPDX-License-Identifier: GPL-2.0-only
"""The scan/classify command line: shards over GNU parallel, merge in
place, the scan's tree checked, the plain listing, --strict, progress."""

import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, TOP, make_tree
from refsweep import scan

REFSWEEP = str(TOP / "bin" / "refsweep")
SAMPLE = ["rc_kfree.c", "stat_pr_info.c", "id_generation.c",
          "use_wait_event.c", "state_flag.c", "use_member_copy.c",
          "broken_brace.c"]


def sample_tree(root: Path) -> Path:
    return make_tree(root, {f"d{i}/{name}": (FIXTURES / name).read_text()
                            for i, name in enumerate(SAMPLE)})


def run(*args: str, env: dict[str, str] | None = None,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True,
                          check=False, input=stdin,
                          env={**os.environ, **(env or {})})


def verdicts(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_parallel_shards_merge_to_the_same_verdicts(tmp_path: Path) -> None:
    tree = sample_tree(tmp_path / "t")
    one = tmp_path / "one.jsonl"
    res = run(REFSWEEP, "classify", "--tree", str(tree), "--json", str(one),
              env={"REFSWEEP_WORK": str(tmp_path / "w1")})
    assert res.returncode == 0, res.stderr
    # As documented: every shard on its own "machine" (--sshlogin : is the
    # local one), each with its own work directory, output to stdout.
    cmd = (f"REFSWEEP_WORK={tmp_path}/w-{{}} {REFSWEEP} scan "
           f"--tree {tree} --jobs 1 --shard {{}}/3 --out -")
    res = run("parallel", "--sshlogin", ":", "--halt", "now,fail=1", cmd,
              stdin="1\n2\n3\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout.count('"refsweep_scan"') == 3
    shards = tmp_path / "shards.jsonl"
    shards.write_text(res.stdout)
    merged = tmp_path / "merged.jsonl"
    res = run(REFSWEEP, "merge", "--out", str(merged), str(shards))
    assert res.returncode == 0 and f"{len(SAMPLE)} files" in res.stdout
    sharded = tmp_path / "sharded.jsonl"
    # A work dir of its own: the session's may hold a triage.db by now
    # (test_triage_carryover makes one), which classify would apply.
    res = run(REFSWEEP, "classify", "--tree", str(tree), "--scan",
              str(merged), "--json", str(sharded),
              env={"REFSWEEP_WORK": str(tmp_path / "w-merged")})
    assert res.returncode == 0, res.stderr
    assert verdicts(sharded) == verdicts(one)
    assert len(verdicts(one)) >= len(SAMPLE)


def test_merge_into_one_of_its_inputs(tmp_path: Path) -> None:
    tree = sample_tree(tmp_path / "t")
    names = scan.candidate_files(tree)
    paths = []
    for i in (1, 2):
        p = tmp_path / f"s{i}.jsonl"
        with open(p, "w") as f:
            scan.scan(tree, scan.shard(names, i, 2), 1, f,
                      shard_name=f"{i}/2")
        paths.append(p)
    res = run(REFSWEEP, "merge", "--out", str(paths[0]), str(paths[0]),
              str(paths[1]))
    assert res.returncode == 0, res.stderr
    _header, files = scan.read_scan([paths[0]])
    assert sorted(f["path"] for f in files) == names


def test_scan_of_another_tree_is_refused(tmp_path: Path) -> None:
    tree = sample_tree(tmp_path / "t")
    other = make_tree(tmp_path / "o", {"x.c": "atomic_t fx_o;\n"})
    scanned = tmp_path / "scan.jsonl"
    res = run(REFSWEEP, "scan", "--tree", str(tree), "--out", str(scanned))
    assert res.returncode == 0, res.stderr
    out = tmp_path / "v.jsonl"
    res = run(REFSWEEP, "classify", "--tree", str(other), "--scan",
              str(scanned), "--json", str(out))
    assert res.returncode == 1 and "the scan is of" in res.stderr
    assert not out.exists()


def test_listing_strict_and_inputs(tmp_path: Path) -> None:
    tree = sample_tree(tmp_path / "t")
    out = tmp_path / "v.jsonl"
    listed = tmp_path / "v.txt"
    res = run(REFSWEEP, "classify", "--tree", str(tree), "--json", str(out),
              "--list", str(listed))
    assert res.returncode == 0 and "--strict" in res.stderr
    lines = listed.read_text().splitlines()
    assert len(lines) == len(verdicts(out))
    assert "d0/rc_kfree.c:9: refcount (zero-release) " \
        "struct fx_rc_kfree_obj.refs" in lines
    res = run(REFSWEEP, "list", str(out), "--verdict", "statistic")
    assert res.returncode == 0 and res.stdout
    assert all(": statistic (" in line for line in res.stdout.splitlines())
    res = run(REFSWEEP, "classify", "--tree", str(tree), "--json", str(out),
              "--strict")
    assert res.returncode == 3 and "failed to parse" in res.stderr
    inputs = json.loads((tmp_path / "v.jsonl.inputs.json").read_text())
    assert inputs["scan_header"]["head"] == inputs["head"]
    assert inputs["scan_header"]["cocci_sha256"]


def test_progress_without_a_terminal() -> None:
    stream = io.StringIO()
    progress = scan.Progress(3, stream)
    progress.EVERY = 0.0
    for _ in range(3):
        progress.step(1)
    progress.close()
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith("scan: 3/3 files (100%)")
    assert "\r" not in stream.getvalue()


def test_progress_is_rate_limited_without_a_terminal() -> None:
    stream = io.StringIO()
    progress = scan.Progress(1000, stream)
    for _ in range(999):
        progress.step(1)
    assert stream.getvalue() == ""
    progress.step(1)
    assert stream.getvalue().startswith("scan: 1000/1000")


@pytest.mark.parametrize("args", [["merge", "--out", "x"],
                                  ["list", "/nonexistent/v.jsonl"],
                                  ["check", "--series", "/nonexistent",
                                   "--whole", "--only", "x"],
                                  ["check", "--series", "/nonexistent",
                                   "--whole"]])
def test_bad_arguments_are_one_line_errors(args: list[str]) -> None:
    res = run(REFSWEEP, *args)
    assert res.returncode in (1, 2) and res.stderr.strip()
