# SPDX-License-Identifier: GPL-2.0-only
"""bench/labelled.py: scoring a labels file against verdict records."""

import json
import sys
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "bench"))

import labelled  # noqa: E402
import verdicts  # noqa: E402

LABELS_2 = """# a comment line
decl\tkey\ttype\tlabel\twraps\trationale
a.c:1\tstruct a.ref\tatomic_t\trefcount\t-\tfreed at zero
a.c:2\tstruct a.users\tatomic_t\tusage\t-\twaited for
a.c:3\tstruct a.hits\tatomic64_t\tstatistic\t-\tprinted
a.c:4\tstruct a.seq\tatomic_t\tid\twraps\tbumped forever
a.c:5\tstruct a.bias\tatomic_long_t\trefcount\twraps\tLONG_MIN bias
a.c:6\tstruct a.flag\tatomic_t\tstate\t-\t0/1
a.c:7\tstruct a.lost\tatomic_t\tusage\t-\tnot in the verdicts
"""


def record(decl: str, verdict: str, **extra: object) -> str:
    return json.dumps({"key": "k" + decl, "decl": decl, "verdict": verdict,
                       "rule": "r", **extra}) + "\n"


def write(tmp_path: Path, labels: str, records: list[str]) -> tuple[Path,
                                                                    Path]:
    lab = tmp_path / "labels.tsv"
    lab.write_text(labels, encoding="utf-8")
    ver = tmp_path / "v.jsonl"
    ver.write_text("".join(records), encoding="utf-8")
    return lab, ver


def test_score_sides_flags_and_missing(tmp_path: Path) -> None:
    lab, ver = write(tmp_path, LABELS_2, [
        record("a.c:1", "refcount"),
        record("a.c:2", "statistic"),                 # unsafe
        record("a.c:3", "usage"),                     # safe-side miss
        record("a.c:4", "id"),
        record("x.c:9", "refcount", also_declared=["a.c:5"],
               wrap_by_design=True),                  # wraps caught
        record("a.c:6", "unknown"),                   # undecided
    ])
    s = labelled.score(labelled.read_labels(lab),
                       verdicts.by_decl(ver))
    assert s.rows == 7
    assert s.decided == 5
    assert s.agree == 3
    assert len(s.unsafe) == 1 and "struct a.users" in s.unsafe[0]
    assert any(d.startswith("safe side: struct a.hits") for d in
               s.disagreements)
    assert s.missing == ["struct a.lost (a.c:7)"]
    assert (s.wraps_rows, s.wraps_caught) == (2, 2)
    assert not labelled.passes(s)


def test_wrap_flag_on_an_unwrapping_refcount_is_unsafe(
        tmp_path: Path) -> None:
    lab, ver = write(tmp_path, LABELS_2, [
        record("a.c:1", "refcount", wrap_by_design=True)])
    s = labelled.score(labelled.read_labels(lab),
                       verdicts.by_decl(ver))
    assert len(s.unsafe) == 1 and "wrap_by_design" in s.unsafe[0]


def test_old_four_column_file_with_an_unknown_label(tmp_path: Path) -> None:
    lab, ver = write(tmp_path,
                     "decl\tkey\tlabel\trationale\n"
                     "b.c:1\tb.c:x\tunknown\tdead field\n"
                     "b.c:2\tb.c:y\tid\tcookie\n",
                     [record("b.c:1", "state"), record("b.c:2", "id")])
    s = labelled.score(labelled.read_labels(lab),
                       verdicts.by_decl(ver))
    assert (s.decided, s.agree, s.unsafe) == (2, 1, [])
    assert s.disagreements[0].startswith("label unknown: b.c:x")


@pytest.mark.parametrize("text, words", [
    ("decl\tkey\trationale\n", "lacks column(s) label"),
    ("decl\tkey\tlabel\trationale\na.c:1\tk\trefcont\twhy\n",
     "unknown label 'refcont'"),
    ("decl\tkey\tlabel\twraps\trationale\na.c:1\tk\tid\tyes\twhy\n",
     "wraps column"),
    ("decl\tkey\tlabel\trationale\na.c:1\tk\tid\n", "3 columns"),
    ("# only comments\n", "no header"),
])
def test_bad_labels_file_is_a_one_line_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
        words: str) -> None:
    lab, ver = write(tmp_path, text, [record("a.c:1", "id")])
    assert labelled.main([str(ver), "--labels", str(lab)]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_cli_strict_fails_a_missed_bar(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    lab, ver = write(tmp_path, LABELS_2, [record("a.c:2", "statistic")])
    assert labelled.main([str(ver), "--labels", str(lab)]) == 0
    assert labelled.main([str(ver), "--labels", str(lab), "--strict"]) == 1
    out = capsys.readouterr().out
    assert "UNSAFE struct a.users (a.c:2): label usage" in out


def test_committed_labels_files_parse() -> None:
    for name, least in (("labels.tsv", 130), ("labels-2.tsv", 150)):
        rows = labelled.read_labels(TOP / "bench" / name)
        assert len(rows) >= least
        assert len({r.decl for r in rows}) == len(rows)
        assert all(r.rationale.strip() for r in rows)


def test_second_sample_shares_no_variable_with_the_first() -> None:
    first = {r.decl for r in labelled.read_labels(TOP / "bench" /
                                                  "labels.tsv")}
    second = labelled.read_labels(TOP / "bench" / "labels-2.tsv")
    assert not first & {r.decl for r in second}
    assert {r.type for r in second} == {"atomic_t", "atomic64_t",
                                        "atomic_long_t"}
