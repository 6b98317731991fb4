# SPDX-License-Identifier: GPL-2.0-only
"""bin/refsweep triage end to end: export/import, bad input, triage next."""

import contextlib
import filecmp
import os
import pty
import select
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from conftest import TOP
from refsweep import triage_db, triage_text
from triage_helpers import REVIEWER, make_tree, record, refsweep, \
    write_records


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A database holding one recorded scan of 6 variables."""
    tree = make_tree(tmp_path / "tree", 6)
    verdicts = write_records(tmp_path / "v.jsonl",
                             [record(i) for i in range(6)])
    path = tmp_path / "t.db"
    res = refsweep("triage", "record", "--db", str(path), "--tree",
                   str(tree), str(verdicts))
    assert res.returncode == 0, res.stderr
    assert "6 undecided" in res.stdout
    return path


def _set(db: Path, key: str, verdict: str, reason: str,
         reviewer: str = REVIEWER) -> None:
    res = refsweep("triage", "set", "--db", str(db), key, verdict,
                   "--reason", reason, "--reviewer", reviewer)
    assert res.returncode == 0, res.stderr


def _one_line_error(res: subprocess.CompletedProcess[str], *words: str
                    ) -> None:
    assert res.returncode != 0
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("refsweep: error: ")
    for w in words:
        assert w in lines[0]


def test_export_import_round_trips(db: Path, tmp_path: Path) -> None:
    _set(db, "struct tri.f0", "usage", "waits for zero in tri_fn0")
    _set(db, "struct tri.f0", "refcount", "actually frees: see tri_fn0")
    _set(db, "struct tri.f1", "wraps", "biased by LONG_MIN, ünïcode ok")
    _set(db, "struct tri.f2", "statistic", "printed in /proc",
         "Bob <bob@example.org>")
    first = tmp_path / "first"
    res = refsweep("triage", "export", "--db", str(db), "--out", str(first))
    assert res.returncode == 0, res.stderr
    text = (first / "include-linux.txt").read_text(encoding="utf-8")
    assert text.count("\n") == 4 + 2      # header + 4 decisions
    assert text.index("\tusage\t") < text.index("\trefcount\t")
    empty = tmp_path / "empty.db"
    res = refsweep("triage", "import", "--db", str(empty), str(first))
    assert res.returncode == 0, res.stderr
    assert "imported 4 decisions" in res.stdout
    second = tmp_path / "second"
    refsweep("triage", "export", "--db", str(empty), "--out", str(second))
    cmp = filecmp.dircmp(first, second)
    assert cmp.left_list == cmp.right_list == ["evidence.jsonl",
                                               "include-linux.txt"]
    for name in cmp.left_list:
        assert (first / name).read_bytes() == (second / name).read_bytes()
    # The imported database can show what a decision was based on.
    conn = triage_db.connect(empty)
    fp = triage_db.current_decisions(conn)["struct tri.f1"].fingerprint
    assert triage_db.summary_of(conn, fp) == \
        triage_db.summary_of(triage_db.connect(db), fp)
    a = [d.same(b) for d, b in zip(
        triage_db.history(triage_db.connect(db)),
        triage_db.history(triage_db.connect(empty)))]
    assert a == [True] * 4
    # Importing again adds nothing.
    res = refsweep("triage", "import", "--db", str(empty), str(first))
    assert "imported 0 decisions (4 already present" in res.stdout


def test_bad_input_is_one_line_error(db: Path, tmp_path: Path) -> None:
    _one_line_error(refsweep("triage", "set", "--db", str(db),
                             "struct tri.nope", "usage", "--reason", "x",
                             "--reviewer", REVIEWER),
                    "unknown key", "struct tri.nope")
    _one_line_error(refsweep("triage", "set", "--db", str(db),
                             "struct tri.f1", "sometimes", "--reason", "x",
                             "--reviewer", REVIEWER),
                    "unknown verdict", "sometimes")
    _one_line_error(refsweep("triage", "show", "--db", str(db),
                             "struct tri.nope"), "unknown key")
    assert triage_db.history(triage_db.connect(db)) == []


def test_malformed_import_names_file_and_line(db: Path,
                                              tmp_path: Path) -> None:
    _set(db, "struct tri.f3", "id", "a serial")
    good = f"struct tri.f4\tstatistic\t{'0' * 16}\t2026-01-01T00:00:00Z\t" \
        f"{REVIEWER}\tonly printed\n"
    cases = {
        "fields": "struct tri.f5\tusage\tonly three\n",
        "verdict": good.replace("statistic", "maybe"),
        "fingerprint": good.replace("0" * 16, "xyz"),
        "date": good.replace("2026-01-01T00:00:00Z", "yesterday"),
    }
    for what, bad in cases.items():
        d = tmp_path / what
        d.mkdir()
        (d / "a.txt").write_text(triage_text.HEADER + good)
        (d / "b.txt").write_text(triage_text.HEADER + good.replace(
            "f4", "f0") + bad)
        before = triage_db.history(triage_db.connect(db))
        res = refsweep("triage", "import", "--db", str(db), str(d))
        _one_line_error(res, f"{d / 'b.txt'}:4:")
        # The good file was not imported either: one transaction.
        assert triage_db.history(triage_db.connect(db)) == before
    # An evidence line that does not hash to its fingerprint.
    d = tmp_path / "evidence"
    d.mkdir()
    (d / "a.txt").write_text(triage_text.HEADER + good)
    (d / "evidence.jsonl").write_text(
        '{"decls": [], "fingerprint": "0000000000000001", "ops": [], '
        '"type": "atomic_t"}\n')
    _one_line_error(refsweep("triage", "import", "--db", str(db), str(d)),
                    f"{d / 'evidence.jsonl'}:1:", "does not match")


def test_newer_schema_is_one_line_error(db: Path) -> None:
    conn = triage_db.connect(db)
    conn.execute("PRAGMA user_version = 42")
    conn.close()
    for args in (["list"], ["status"], ["set", "struct tri.f1", "usage",
                                        "--reason", "x", "--reviewer", "a"]):
        _one_line_error(refsweep("triage", *args, "--db", str(db)),
                        "schema version 42 is newer")


def test_conflicting_imports_are_reported(db: Path, tmp_path: Path) -> None:
    """Two reviewers decide one key apart; the second import conflicts."""
    line = "struct tri.f2\t{v}\t{fp}\t2026-0{m}-01T00:00:00Z\t{r}\t{why}\n"
    fp = triage_db.latest_machine(triage_db.connect(db), "struct tri.f2")
    assert fp is not None
    for name, v, m, why in (("alice", "refcount", 1, "frees at zero"),
                            ("bob", "statistic", 2, "only printed")):
        d = tmp_path / name
        d.mkdir()
        (d / "include-linux.txt").write_text(
            triage_text.HEADER + line.format(v=v, fp=fp[0], m=m, r=name,
                                             why=why))
    assert refsweep("triage", "import", "--db", str(db),
                    str(tmp_path / "alice")).returncode == 0
    res = refsweep("triage", "import", "--db", str(db),
                   str(tmp_path / "bob"))
    assert res.returncode == 3
    assert "conflict: struct tri.f2: database has refcount" in res.stderr
    assert "has statistic" in res.stderr
    conn = triage_db.connect(db)
    assert triage_db.current_decisions(conn)["struct tri.f2"].verdict == \
        "refcount"
    listed = refsweep("triage", "list", "--conflicts", "--db", str(db))
    assert "struct tri.f2" in listed.stdout
    # Refcount against statistic is uncertain: stays checked either way.
    scan = triage_db.current_scan(conn)
    f2 = [e for e in triage_db.entries(conn, scan)
          if e.key == "struct tri.f2"][0]
    assert (f2.final, f2.source) == ("refcount", "human")
    # A history that contains the database's is a fast-forward.
    both = tmp_path / "both"
    both.mkdir()
    (both / "include-linux.txt").write_text(
        triage_text.HEADER +
        line.format(v="refcount", fp=fp[0], m=1, r="alice",
                    why="frees at zero") +
        line.format(v="usage", fp=fp[0], m=3, r="carol", why="waits"))
    res = refsweep("triage", "import", "--db", str(db), str(both))
    assert res.returncode == 0, res.stderr
    assert triage_db.current_decisions(conn)["struct tri.f2"].verdict == \
        "usage"
    # Where the database's side is the wrap-safe one, the key is unknown
    # (checked) until decided again.
    fp3 = triage_db.latest_machine(conn, "struct tri.f3")
    assert fp3 is not None
    for name, v, m in (("erin", "statistic", 1), ("frank", "refcount", 2)):
        d = tmp_path / name
        d.mkdir()
        (d / "include-linux.txt").write_text(
            triage_text.HEADER + line.format(v=v, fp=fp3[0], m=m, r=name,
                                             why="read it").replace(
                                                 "tri.f2", "tri.f3"))
        refsweep("triage", "import", "--db", str(db), str(d))
    f3 = [e for e in triage_db.entries(conn, scan)
          if e.key == "struct tri.f3"][0]
    assert (f3.decision.verdict if f3.decision else None) == "statistic"
    assert (f3.final, f3.source) == ("unknown", "human")
    # A new decision resolves the open conflict.
    _set(db, "struct tri.f2", "refcount", "read it again: frees")
    assert [c["key"] for c in triage_db.open_conflicts(conn)] == \
        ["struct tri.f3"]


def test_reviewer_defaults_to_git_identity(db: Path, tmp_path: Path) -> None:
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = Git Person\n"
                         "\temail = git@example.org\n")
    env = {"GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1",
           "HOME": str(tmp_path)}
    res = refsweep("triage", "set", "--db", str(db), "struct tri.f5",
                   "state", "--reason", "a flag word", env=env)
    assert res.returncode == 0, res.stderr
    d = triage_db.current_decisions(triage_db.connect(db))["struct tri.f5"]
    assert d.reviewer == "Git Person <git@example.org>"


def test_next_with_piped_answers(db: Path) -> None:
    _set(db, "struct tri.f0", "usage", "waits")
    answers = ("s\nonly printed\n"      # f1
               "x\n"                    # not an answer: asked again
               "n\n"                    # f2 skipped
               "w\nbiased on purpose\n"  # f3
               "q\n")
    res = refsweep("triage", "next", "--db", str(db), "--reviewer", REVIEWER,
                   stdin=answers)
    assert res.returncode == 0, res.stderr
    assert "unknown answer 'x'" in res.stdout
    assert "tri_fn1" in res.stdout          # the uses were shown
    assert "next: 2 decision(s) recorded" in res.stdout
    current = triage_db.current_decisions(triage_db.connect(db))
    assert {k: (d.verdict, d.reason, d.origin) for k, d in current.items()
            if d.origin == "next"} == {
        "struct tri.f1": ("statistic", "only printed", "next"),
        "struct tri.f3": ("wraps", "biased on purpose", "next")}
    # Stale decisions come first: change f0's evidence in a new scan.
    tree = make_tree(db.parent / "tree2", 6)
    verdicts = write_records(db.parent / "v2.jsonl",
                             [record(0, uses=("mod",))] +
                             [record(i) for i in range(1, 6)])
    refsweep("triage", "record", "--db", str(db), "--tree", str(tree),
             str(verdicts))
    res = refsweep("triage", "next", "--db", str(db), "--reviewer", REVIEWER,
                   stdin="u\nstill waits for it\n")
    assert "[1/" in res.stdout and "struct tri.f0" in res.stdout
    assert "- atomic_op1 in tri_fn0: zero-wake" in res.stdout
    hist = triage_db.history(triage_db.connect(db), "struct tri.f0")
    assert [d.reason for d in hist] == ["waits", "still waits for it"]
    assert hist[0].fingerprint != hist[1].fingerprint


def _read_until(fd: int, text: bytes, timeout: float = 60) -> bytes:
    buf = b""
    end = time.monotonic() + timeout
    while text not in buf:
        left = end - time.monotonic()
        assert left > 0, buf.decode(errors="replace")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    return buf


@contextlib.contextmanager
def _next_on_a_terminal(db: Path, *args: str,
                        typed_ahead: bytes = b"") -> Iterator[int]:
    """Run "triage next" on a pseudo-terminal; yields its master side.
    TYPED_AHEAD is written before the program starts."""
    master, slave = pty.openpty()
    if typed_ahead:
        os.write(master, typed_ahead)
    proc = subprocess.Popen(
        [str(TOP / "bin" / "refsweep"), "triage", "next", "--db", str(db),
         "--reviewer", REVIEWER, *args],
        stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    try:
        yield master
        assert proc.wait(timeout=60) == 0
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()


def test_next_on_a_terminal(db: Path) -> None:
    """One key without Enter, as on a real terminal (a pseudo-terminal)."""
    with _next_on_a_terminal(db) as master:
        _read_until(master, b"[q]uit? ")
        os.write(master, b"i")              # no Enter
        _read_until(master, b"reason: ")
        os.write(master, b"a serial number\n")
        _read_until(master, b"[q]uit? ")
        os.write(master, b"q")
        out = _read_until(master, b"decision(s) recorded")
        assert b"next: 1 decision(s) recorded" in out
    d = triage_db.current_decisions(triage_db.connect(db))["struct tri.f0"]
    assert (d.verdict, d.reason) == ("id", "a serial number")


def test_next_keeps_a_key_typed_ahead(db: Path) -> None:
    """A key typed before the prompt is answered, not flushed when the
    terminal is switched to one-key mode (a fast typist, a loaded
    machine)."""
    with _next_on_a_terminal(db, "--limit", "1",
                             typed_ahead=b"s") as master:
        _read_until(master, b"reason: ")
        os.write(master, b"only printed\n")
        _read_until(master, b"decision(s) recorded")
    d = triage_db.current_decisions(triage_db.connect(db))["struct tri.f0"]
    assert (d.verdict, d.reason) == ("statistic", "only printed")


def test_list_filters(db: Path) -> None:
    _set(db, "struct tri.f0", "statistic", "printed")
    res = refsweep("triage", "list", "--db", str(db), "--source", "human")
    assert res.stdout.split() [:3] == ["human", "statistic", "usage"]
    assert len(res.stdout.splitlines()) == 1
    res = refsweep("triage", "list", "--db", str(db), "--undecided",
                   "--subsystem", "include-linux")
    assert len(res.stdout.splitlines()) == 5
    res = refsweep("triage", "list", "--db", str(db), "--path", "kernel/")
    assert res.stdout == ""


def test_shipped_decisions(tmp_path: Path) -> None:
    """triage/decisions/ imports cleanly and is in export's own form."""
    shipped = TOP / "triage" / "decisions"
    db = tmp_path / "seed.db"
    res = refsweep("triage", "import", "--db", str(db), str(shipped))
    assert res.returncode == 0, res.stderr
    current = triage_db.current_decisions(triage_db.connect(db))
    assert current["struct percpu_ref_data.count"].verdict == "wraps"
    for key in ("net/ipv4/route.c:ip_idents", "struct netns_ipv4.rt_genid",
                "struct net.fnhe_genid", "struct netns_ipv4.dev_addr_genid"):
        assert current[key].verdict in triage_db.WRAP_SAFE
    assert all(len(d.reason) > 80 for d in current.values())
    out = tmp_path / "out"
    refsweep("triage", "export", "--db", str(db), "--out", str(out))
    assert (shipped / "evidence.jsonl").is_file()
    for f in [*shipped.glob("*.txt"), shipped / "evidence.jsonl"]:
        assert (out / f.name).read_bytes() == f.read_bytes(), f.name
