# SPDX-License-Identifier: GPL-2.0-only
"""check --whole's blame: which converted variables a compile error of
the whole churn names, on GCC's own diagnostics for a small file whose
declarations were converted and whose initialisers (behind macros) and
one conditional operand were not."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import TOP
from refsweep import build_blame, check, convert
from refsweep.churn import mark_build_blocked
from test_convert import stub_header

FIXTURES = TOP / "tests" / "fixtures" / "build_blame"
CONVERTED = ["struct fx_work.data", "struct fx_queue.tail",
             # Same names, but nothing fx_user.c can see: never blamed.
             "struct fx_elsewhere.data", "drivers/fx/elsewhere.c:fx_hits"]


def churned_tree(root: Path) -> Path:
    """fx_work.h with its declarations converted (and nothing else)."""
    src = root / "drivers" / "fx"
    src.mkdir(parents=True)
    header = (FIXTURES / "fx_work.h").read_text()
    header = header.replace("atomic_long_t data;",
                            "atomic_long_unchecked_t data;")
    header = header.replace("atomic_t tail;", "atomic_unchecked_t tail;")
    (src / "fx_work.h").write_text(header)
    (src / "fx_user.c").write_text((FIXTURES / "fx_user.c").read_text())
    return root


def gcc(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["gcc", "-Wall", "-Werror", "-include",
         str(stub_header(root / "stub.h")), *args,
         str(root / "drivers/fx/fx_user.c")],
        capture_output=True, text=True, check=False, cwd=root)


@pytest.fixture(name="diagnosed")
def fixture_diagnosed(tmp_path: Path) -> tuple[Path, dict[str, object],
                                               build_blame.Unit]:
    root = churned_tree(tmp_path)
    res = gcc(root, "-fsyntax-only")
    assert res.returncode != 0
    out: dict[str, dict[str, object]] = {
        "drivers/fx/fx_user.o": {"built": False, "errors": [],
                                 "sparse": []}}
    check.parse_diagnostics("  CC      drivers/fx/fx_user.o\n" + res.stderr,
                            root, out)
    i_file = root / "fx_user.i"
    assert gcc(root, "-E", "-o", str(i_file)).returncode == 0
    return root, out["drivers/fx/fx_user.o"], \
        build_blame.read_unit(root, i_file)


def test_unconverted_header_compiles(tmp_path: Path) -> None:
    """The fixture is sound: without the churn it builds cleanly."""
    src = tmp_path / "drivers" / "fx"
    src.mkdir(parents=True)
    for name in ("fx_work.h", "fx_user.c"):
        (src / name).write_text((FIXTURES / name).read_text())
    res = gcc(tmp_path, "-fsyntax-only")
    assert res.returncode == 0, res.stderr


def test_each_error_blames_the_variable_it_names(diagnosed: tuple[
        Path, dict[str, object], build_blame.Unit]) -> None:
    root, obj, unit = diagnosed
    diags = obj["diags"]
    assert isinstance(diags, list)
    names = build_blame.names_index(CONVERTED)
    macros = build_blame.unit_macros(root, unit, {}, {})
    assert "FX_WORK_INITIALIZER" in macros
    blamed = {(d["line"], d["msg"].split(" [")[0]):
              build_blame.blame(root, d, names, unit, macros, {})
              for d in diags}
    init = [b for (_line, msg), b in blamed.items()
            if msg.startswith("missing braces")]
    assert init and all(b == ["struct fx_queue.tail", "struct fx_work.data"]
                        for b in init), blamed
    cond = [b for (_line, msg), b in blamed.items()
            if "conditional" in msg]
    assert cond == [["struct fx_queue.tail"]], blamed
    everything = {k for b in blamed.values() for k in b}
    assert not everything & {"struct fx_elsewhere.data",
                             "drivers/fx/elsewhere.c:fx_hits"}


def test_unit_sees_its_structs_and_files(diagnosed: tuple[
        Path, dict[str, object], build_blame.Unit]) -> None:
    _root, _obj, unit = diagnosed
    assert {"struct fx_work", "struct fx_queue", "struct fx_dev"} <= \
        unit.tags
    assert "drivers/fx/fx_work.h" in unit.files
    assert build_blame.visible("struct fx_work.data", unit)
    assert not build_blame.visible("struct fx_elsewhere.data", unit)
    assert build_blame.visible("drivers/fx/fx_user.c:fx_hits", unit)
    # Without the preprocessed source nothing is ruled out.
    assert build_blame.visible("struct fx_elsewhere.data", None)


def test_braced_text_spans_the_initializer() -> None:
    lines = ["static struct s x = {", "\t.a = { 1 },", "\t.b = 2,", "};",
             "int y;"]
    assert build_blame.braced_text(lines, 1, 21) == \
        "{\n\t.a = { 1 },\n\t.b = 2,\n}"


def test_blocked_file_keeps_the_group_unconverted(tmp_path: Path) -> None:
    rec = {"key": "struct fx_work.data", "type": "atomic_long_t",
           "final": "state", "evidence": []}
    path = tmp_path / "build-blocked.json"
    path.write_text(json.dumps({"struct fx_work.data": "breaks the build "
                                "with the whole churn: fx_work.h:14: x"}))
    mark_build_blocked([rec], [path])
    why = convert.blockers(rec, convert.unchecked_target(None))
    assert any("breaks the build" in w for w in why), why


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"k": 3}'])
def test_bad_blocked_file_names_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "blocked.json"
    path.write_text(text)
    with pytest.raises(convert.ConvertError, match="blocked.json"):
        mark_build_blocked([], [path])


def test_build_blocked_reason_is_counted_as_such() -> None:
    from refsweep.churn import reason_kind
    assert reason_kind("struct fx_work.data: breaks the build with the "
                       "whole churn: fx_work.h:14: missing braces around "
                       "initializer") == "breaks the whole-churn build"


def _commit_all(repo: Path, msg: str) -> None:
    for args in (["add", "-A"], ["commit", "-qm", msg]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t",
                        *args], cwd=repo, check=True)


def test_series_changing_adjacent_lines_stack(tmp_path: Path) -> None:
    """Two series made against one commit that change adjacent lines of
    a file (one section printing another's counter beside its own) leave
    each other no context line: the second stacks only without context,
    and then gives the file both series made."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "master"], cwd=repo,
                   check=True)
    lines = [f"\tline{i};" for i in range(10)]
    lines[4] = "\tatomic_read(&own);"
    lines[5] = "\tatomic_read(&other);"
    src = repo / "show.c"
    src.write_text("\n".join(lines) + "\n")
    _commit_all(repo, "base")
    patches = []
    for name in ("own", "other"):
        subprocess.run(["git", "checkout", "-q", "--detach", "master"],
                       cwd=repo, check=True)
        src.write_text(src.read_text().replace(
            f"atomic_read(&{name})", f"atomic_read_unchecked(&{name})"))
        _commit_all(repo, f"{name}: unchecked")
        out = subprocess.run(["git", "format-patch", "-1", "-o",
                              str(tmp_path / name)], cwd=repo, check=True,
                             capture_output=True, text=True)
        patches.append(Path(out.stdout.strip()))
    subprocess.run(["git", "checkout", "-q", "--detach", "master"],
                   cwd=repo, check=True)
    assert check._am_stacked(repo, patches[0], []).returncode == 0
    assert check._am_stacked(repo, patches[1], []).returncode != 0
    assert check._am_stacked(repo, patches[1], ["-C0"]).returncode == 0
    text = src.read_text()
    assert "atomic_read_unchecked(&own)" in text
    assert "atomic_read_unchecked(&other)" in text
    assert "atomic_read(&" not in text
