# SPDX-License-Identifier: GPL-2.0-only
"""Scan mechanics with the real spatch: failures, cache, shards, bad input."""

import hashlib
import io
import json
import subprocess
from pathlib import Path

import pytest

from conftest import TOP, make_tree, scan_tree, slow_source
from refsweep import resolve, scan

GOOD = """\
struct sc_obj {
\tatomic_t refs;
\tatomic_t hits;
};

void sc_put(struct sc_obj *o)
{
\tif (atomic_dec_and_test(&o->refs))
\t\tkfree(o);
}
"""

BROKEN = """\
struct sc_bad {
\tatomic_t refs;
};

void sc_bad_put(struct sc_bad *b)
{
\tif (atomic_dec_and_test(&b->refs)) {
\t\tkfree(b);
\t@@@ garbage ((( ;
}
"""


def test_parse_failure_is_listed_and_ops_are_kept(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "t", {"good.c": GOOD, "bad.c": BROKEN})
    _header, files = scan_tree(tree)
    by_path = {f["path"]: f for f in files}
    assert by_path["good.c"]["unparsed_ops"] == 0
    bad = by_path["bad.c"]
    assert bad["unparsed_ops"] == 1
    op = [o for o in bad["ops"] if o["counter"] == "&b->refs"]
    assert op and not op[0]["parsed"] and op[0]["use"] == "zero-test"
    assert [d["name"] for d in bad["decls"]] == ["refs"]


def scan_once(tree: Path) -> tuple[dict[str, int], list[dict[str, object]]]:
    out = io.StringIO()
    stats = scan.scan(tree, scan.candidate_files(tree), 2, out)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    return stats, lines[1:]


def test_cache_rescans_only_changed_files(tmp_path: Path) -> None:
    files = {f"f{i}.c": GOOD.replace("sc_", f"s{i}_") for i in range(4)}
    tree = make_tree(tmp_path / "t", files)
    first, _ = scan_once(tree)
    assert first["scanned"] == 4 and first["cached"] == 0
    second, records = scan_once(tree)
    assert second["scanned"] == 0 and second["cached"] == 4
    assert {r["path"] for r in records} == set(files)
    (tree / "f2.c").write_text(GOOD.replace("sc_", "s2_") + "\n/* x */\n")
    third, _ = scan_once(tree)
    assert third["scanned"] == 1 and third["cached"] == 3


def test_before_spatch_is_told_what_spatch_gets(tmp_path: Path) -> None:
    """The count a prefetch is started on (cli.run_scan): the files
    neither cache holds, known before spatch runs."""
    files = {f"f{i}.c": GOOD.replace("sc_", f"b{i}_") for i in range(3)}
    tree = make_tree(tmp_path / "t", files)
    told: list[int] = []

    def scan_telling() -> None:
        scan.scan(tree, scan.candidate_files(tree), 2, io.StringIO(),
                  before_spatch=told.append)
    scan_telling()
    scan_telling()
    (tree / "f1.c").write_text(GOOD.replace("sc_", "b1_") + "\n/* x */\n")
    scan_telling()
    assert told == [3, 0, 1]


def test_shards_cover_the_tree_and_merge(tmp_path: Path) -> None:
    files = {f"d{i}/f.c": GOOD.replace("sc_", f"s{i}_") for i in range(7)}
    tree = make_tree(tmp_path / "t", files)
    names = scan.candidate_files(tree)
    parts = [scan.shard(names, i, 3) for i in (1, 2, 3)]
    assert sorted(sum(parts, [])) == names
    assert all(parts) and not set(parts[0]) & set(parts[1])
    outs = []
    for i, part in enumerate(parts, 1):
        p = tmp_path / f"s{i}.jsonl"
        with open(p, "w") as f:
            scan.scan(tree, part, 1, f, shard_name=f"{i}/3")
        outs.append(p)
    merged = io.StringIO()
    assert scan.write_merged(outs, merged) == 7
    with pytest.raises(scan.ScanError, match="need 1 <= I <= N"):
        scan.shard(names, 4, 3)


def test_corrupt_scan_input_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"refsweep_scan": "0.1", "tree": "/t"}\n{oops\n')
    with pytest.raises(scan.ScanError, match=r"bad.jsonl:2: not a scan"):
        scan.read_scan([bad])


def test_scan_of_other_evidence_code_is_refused(tmp_path: Path) -> None:
    """Evidence records are read only by the code that wrote them: an
    older scan may lack fields or judge uses otherwise."""
    tree = make_tree(tmp_path / "tree", {"a.c": "static atomic_t n;\n"})
    out = tmp_path / "scan.jsonl"
    with open(out, "w") as f:
        scan.scan(tree, ["a.c"], 1, f)
    header, files = scan.read_scan([out])
    assert header["evidence_sha256"] and len(files) == 1
    old = tmp_path / "old.jsonl"
    lines = out.read_text().splitlines(keepends=True)
    lines[0] = json.dumps(dict(header, evidence_sha256="0" * 64)) + "\n"
    old.write_text("".join(lines))
    with pytest.raises(scan.ScanError,
                       match=r"old.jsonl: scan written by other refsweep"):
        scan.read_scan([old])


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TOP / "bin" / "refsweep"), *args],
                          capture_output=True, text=True, check=False)


def test_cli_rejects_wrong_options(tmp_path: Path) -> None:
    res = run_cli("scan", "--tree", str(tmp_path), "--shard", "3/2")
    assert res.returncode == 2 and "need 1 <= I <= N" in res.stderr
    res = run_cli("scan", "--tree", str(tmp_path / "nope"))
    assert res.returncode == 2 and "no such directory" in res.stderr


def test_cli_classify_keeps_old_output_on_error(tmp_path: Path) -> None:
    out = tmp_path / "v.jsonl"
    out.write_text("previous\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    res = run_cli("classify", "--tree", str(tmp_path), "--scan", str(bad),
                  "--json", str(out))
    assert res.returncode == 1 and "bad.jsonl:1" in res.stderr
    assert out.read_text() == "previous\n"


def test_cli_lists_parse_failures_next_to_verdicts(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "t", {"good.c": GOOD, "bad.c": BROKEN})
    out = tmp_path / "v.jsonl"
    res = run_cli("classify", "--tree", str(tree), "--json", str(out))
    assert res.returncode == 0, res.stderr
    assert "1 files partly unparsed" in res.stdout
    listed = (tmp_path / "v.jsonl.failures").read_text()
    assert listed.startswith("bad.c\tpartly unparsed\t1 operations")
    keys = {json.loads(line)["key"] for line in out.read_text().splitlines()}
    assert {"struct sc_obj.refs", "struct sc_bad.refs"} <= keys


def test_spatch_timeout_is_recorded_and_not_cached_as_clean(
        tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "t", {"slow.c": slow_source(),
                                      "good.c": GOOD})
    for _run in (1, 2):         # the second run reads the cache
        out = io.StringIO()
        stats = scan.scan(tree, scan.candidate_files(tree), 1, out,
                          timeout=1)
        files = {r["path"]: r for r in map(json.loads,
                                           out.getvalue().splitlines()[1:])}
        assert "Timeout" in files["slow.c"]["trouble"]
        assert "trouble" not in files["good.c"]
        assert stats["troubles"] == 1


def test_git_grep_failure_is_an_error(tmp_path: Path) -> None:
    plain = tmp_path / "not-git"
    plain.mkdir()
    with pytest.raises(resolve.ResolveError, match="git grep failed"):
        resolve.IncludeGraph(plain)


def test_kept_objects_merge_as_the_output_reads(tmp_path: Path) -> None:
    """classify uses the objects a scan keeps instead of reading the scan
    back: they must be what read_scan() makes of the output."""
    tree = make_tree(tmp_path / "t", {"good.c": GOOD, "bad.c": BROKEN,
                                      "b.c": GOOD.replace("sc_", "b_")})
    out = tmp_path / "scan.jsonl"
    for _run in ("scanned", "cached"):
        kept: list[dict[str, object]] = []
        with open(out, "w", encoding="utf-8") as f:
            scan.scan(tree, scan.candidate_files(tree), 2, f, keep=kept)
        assert scan.merge_records(((str(n), o) for n, o in enumerate(kept)),
                                  "kept") == scan.read_scan([out])


def test_cache_key_is_the_hash_of_salt_and_content() -> None:
    """The salted hash is reused across files: the keys must stay those
    of the caches already on disk."""
    salt = "refsweep\0" * 1000
    for content in (b"", b"atomic_inc(&x);\n"):
        assert scan._cache_key(content, salt) == hashlib.sha256(
            salt.encode() + b"\0" + content).hexdigest()


def test_identical_files_share_evidence_not_location(tmp_path: Path) -> None:
    """One cache entry serves files of the same content; each scan line
    names its own file, also for entries stored with a location."""
    tree = make_tree(tmp_path / "t", {"a/x.c": GOOD, "b/x.c": GOOD})
    for _run in ("scanned", "cached"):
        _stats, records = scan_once(tree)
        assert sorted(r["path"] for r in records) == ["a/x.c", "b/x.c"]
        assert all(r["sha256"] == hashlib.sha256(GOOD.encode()).hexdigest()
                   for r in records)
    key = scan._cache_key(GOOD.encode(), scan._salts()[1])
    entry = json.loads(scan._cache_path(key).read_text())
    assert "path" not in entry and entry["decls"]
    scan._cache_path(key).write_text(json.dumps({"path": "old.c", **entry}))
    for entry_written in ("before", "after"):     # the old entry is kept
        out = io.StringIO()
        scan.scan(tree, scan.candidate_files(tree), 1, out)
        lines = out.getvalue().splitlines()[1:]
        assert sorted(json.loads(x)["path"] for x in lines) == \
            ["a/x.c", "b/x.c"]
        assert [x.count('"path"') for x in lines] == [1, 1], entry_written
