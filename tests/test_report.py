# SPDX-License-Identifier: GPL-2.0-only
"""Reports: JSON, mail text and HTML from a real scan of fixture files.

A small tree of hand-written fixtures in three directories is scanned and
classified with the real spatch through the command line; the reports
written from those verdicts must agree with each other and with the
verdict records, fit 72 columns as text, and escape code in HTML.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, TOP, make_tree

REFSWEEP = str(TOP / "bin" / "refsweep")
MAINTAINERS = """\
FX DRIVERS
M:\tAda Example <ada@example.org>
L:\tfx-drivers@example.org
S:\tMaintained
F:\tdrivers/fx/

FX NETWORKING
M:\tBo Example <bo@example.org>
S:\tMaintained
F:\tnet/fx/
"""
LAYOUT = {
    "drivers/fx/rc_kfree.c": "rc_kfree.c",
    "drivers/fx/stat_pr_info.c": "stat_pr_info.c",
    "net/fx/use_wake.c": "use_wake.c",
    "net/fx/id_index.c": "id_index.c",
    "fs/fx/state_flag.c": "state_flag.c",
    "fs/fx/unk_no_ops.c": "unk_no_ops.c",
}


def refsweep(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([REFSWEEP, *args], capture_output=True, text=True,
                         check=False, env=os.environ.copy())
    if check and res.returncode != 0:
        raise AssertionError(f"refsweep {' '.join(args)}: {res.stderr}")
    return res


def classified_tree(root: Path, layout: dict[str, str]) -> tuple[Path, Path]:
    files = {dest: (FIXTURES / src).read_text(encoding="utf-8")
             for dest, src in layout.items()}
    tree = make_tree(root, {**files, "MAINTAINERS": MAINTAINERS})
    verdicts = root.parent / f"{root.name}.jsonl"
    refsweep("classify", "--tree", str(tree), "--jobs", "1",
             "--json", str(verdicts))
    return tree, verdicts


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[Path, list[dict[str, Any]], dict[str, Any]]:
    base = tmp_path_factory.mktemp("report")
    os.environ["REFSWEEP_WORK"] = str(base / "work")
    tree, verdicts = classified_tree(base / "tree", LAYOUT)
    out = base / "out"
    refsweep("report", "--tree", str(tree), "--verdicts", str(verdicts),
             "--out", str(out))
    records = [json.loads(line) for line in
               verdicts.read_text(encoding="utf-8").splitlines()]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return out, records, report


def test_json_covers_every_record(written: Any) -> None:
    out, records, report = written
    keys = {v["key"]: v for s in report["subsystems"] for v in s["variables"]}
    assert set(keys) == {r["key"] for r in records}
    for r in records:
        assert keys[r["key"]]["final"] == r.get("final", r["verdict"])
        assert keys[r["key"]]["rule"] == r["rule"]
    assert report["totals"]["variables"] == len(records)
    for verdict, n in report["totals"]["by_final"].items():
        assert n == sum(1 for r in records
                        if r.get("final", r["verdict"]) == verdict)
    # MAINTAINERS sections where one owns the file, THE REST otherwise
    assert {s["name"]: s["slug"] for s in report["subsystems"]} == {
        "FX DRIVERS": "fx-drivers", "FX NETWORKING": "fx-networking",
        "THE REST": "the-rest"}


def test_decisive_line_is_marked(written: Any) -> None:
    _out, _records, report = written
    var = next(v for s in report["subsystems"] for v in s["variables"]
               if v["key"] == "struct fx_rc_kfree_obj.refs")
    decisive = [e for e in var["excerpts"] if e["decisive"]]
    assert decisive, "the zero-release use is marked decisive"
    marked = [ln["text"] for e in decisive for ln in e["lines"] if ln["mark"]]
    assert any("atomic_dec_and_test" in t for t in marked)
    assert var["excerpts"][0]["what"] == "declaration"
    assert any("atomic_t refs;" in ln["text"]
               for ln in var["excerpts"][0]["lines"] if ln["mark"])


def test_text_fits_72_columns_and_agrees(written: Any) -> None:
    out, _records, report = written
    for sec in report["subsystems"]:
        text = (out / "text" / f"{sec['slug']}.txt").read_text(encoding="utf-8")
        too_wide = [ln for ln in text.splitlines() if len(ln) > 72]
        assert not too_wide, too_wide
        assert f"{sec['totals']['variables']} variables" in text
        for v in sec["variables"]:
            heading = text.index(f"\n{v['final']} (")
            assert text.index(f"\n{v['key']} ({v['type']})") > heading
    summary = (out / "summary.txt").read_text(encoding="utf-8")
    for verdict, n in report["totals"]["by_final"].items():
        assert any(ln.split()[:2] == [verdict, str(n)]
                   for ln in summary.splitlines())


def test_html_escapes_code_and_has_anchors(written: Any) -> None:
    out, _records, report = written
    for sec in report["subsystems"]:
        page = (out / f"{sec['slug']}.html").read_text(encoding="utf-8")
        for v in sec["variables"]:
            assert f'id="{v["anchor"]}"' in page
        assert "&amp;" in page and "atomic_read(&d" not in page
        assert "<script src" not in page and "http://" not in page \
            and "https://" not in page
    index = (out / "index.html").read_text(encoding="utf-8")
    assert all(f'href="{s["slug"]}.html"' in index
               for s in report["subsystems"])


def test_changes_between_two_runs(tmp_path: Path, written: Any) -> None:
    out, _records, _report = written
    layout = dict(LAYOUT)
    del layout["fs/fx/unk_no_ops.c"]
    layout["fs/fx/stat_reset.c"] = "stat_reset.c"
    tree, verdicts = classified_tree(tmp_path / "tree2", layout)
    out2 = tmp_path / "out2"
    refsweep("report", "--tree", str(tree), "--verdicts", str(verdicts),
             "--out", str(out2), "--compare", str(out / "report.json"))
    changes = json.loads((out2 / "changes.json").read_text(encoding="utf-8"))
    assert [r["key"] for r in changes["vanished"]] == [
        "fs/fx/unk_no_ops.c:fx_unk_no_fn:tmp",
        "fs/fx/unk_no_ops.c:fx_unk_no_unused",
        "struct fx_unk_no_dev.a", "struct fx_unk_no_dev.b",
        "struct fx_unk_no_dev.spare"]
    assert [r["key"] for r in changes["new_variables"]] == [
        "struct fx_st_rst_mon.events"]
    assert not changes["verdict_changes"] and not changes["turned_stale"]
    page = (out2 / "changes.html").read_text(encoding="utf-8")
    for r in changes["new_variables"]:
        assert f'#{r["anchor"]}"' in page
    text = (out2 / "changes.txt").read_text(encoding="utf-8")
    assert f"New variables ({len(changes['new_variables'])})" in text


def test_bad_verdicts_file_is_a_clear_error(tmp_path: Path, written: Any
                                            ) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "a", "verdict": "id"}\nnot json\n',
                   encoding="utf-8")
    res = refsweep("report", "--tree", str(tmp_path), "--verdicts", str(bad),
                   "--out", str(tmp_path / "o"), check=False)
    assert res.returncode == 1
    assert f"{bad}:2: not JSON" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_human_decision_shows_as_final(tmp_path: Path, written: Any
                                       ) -> None:
    """A decision in a real triage database overrides the machine verdict."""
    out, records, _report = written
    tree = out.parent / "tree"
    key = "struct fx_rc_kfree_obj.refs"
    machine = next(r for r in records if r["key"] == key)["verdict"]
    db = tmp_path / "triage.db"
    verdicts = tmp_path / "v.jsonl"
    refsweep("classify", "--tree", str(tree), "--json", str(verdicts),
             "--triage", str(db))
    refsweep("triage", "set", key, "usage", "--db", str(db),
             "--reason", "teardown waits for the last user")
    refsweep("report", "--tree", str(tree), "--verdicts", str(verdicts),
             "--triage", str(db), "--out", str(tmp_path / "out"))
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    var = next(v for s in report["subsystems"] for v in s["variables"]
               if v["key"] == key)
    assert (machine, var["final"], var["source"]) == \
        ("refcount", "usage", "human")
    assert var["reason"] == "teardown waits for the last user"
    assert report["totals"]["by_source"]["human"] == 1
    text = (tmp_path / "out" / "text" / f"{var['subsystem']}.txt").read_text()
    assert "Reason: teardown waits for the last user" in text


def _browser() -> Any:
    """A headless Chromium driven by Debian's chromedriver, or a skip."""
    try:
        from selenium import webdriver  # type: ignore[import-not-found]
        from selenium.webdriver.chrome.service import Service  # type: ignore[import-not-found]
    except ImportError:
        pytest.skip("python3-selenium is not installed (bin/refsweep setup "
                    "installs it where Debian has it)")
    for tool in ("chromium", "chromedriver"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed (Debian packages chromium, "
                        "chromium-driver)")
    opts = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu",
                "--window-size=1200,900", "--allow-file-access-from-files"):
        opts.add_argument(arg)
    opts.binary_location = shutil.which("chromium")
    service = Service(executable_path=shutil.which("chromedriver"))
    return webdriver.Chrome(options=opts, service=service)


def test_pages_in_headless_chromium(written: Any) -> None:
    out, _records, report = written
    browser = _browser()
    try:
        browser.get((out / "index.html").as_uri())
        totals = report["totals"]
        for verdict, n in totals["by_final"].items():
            cell = browser.find_element(
                "css selector", f'table.totals td[data-total="{verdict}"]')
            assert cell.text == str(n)
        assert browser.find_element(
            "css selector", 'td[data-total="variables"]').text == \
            str(totals["variables"])
        browser.save_screenshot(str(out / "index.png"))

        sec = max(report["subsystems"], key=lambda s: s["totals"]["variables"])
        browser.get((out / f"{sec['slug']}.html").as_uri())
        sections = browser.find_elements("css selector", "section.var")
        assert len(sections) == sec["totals"]["variables"]
        first = sec["variables"][0]["final"]
        box = browser.find_element(
            "css selector", f'input.f-final[value="{first}"]')
        box.click()
        visible = [s for s in sections if s.is_displayed()]
        assert len(visible) == sec["totals"]["variables"] - \
            sec["totals"]["by_final"][first]
        assert all(s.get_attribute("data-final") != first for s in visible)
        box.click()
        search = browser.find_element("id", "search")
        key = sec["variables"][-1]["key"]
        search.send_keys(key.lower())
        visible = [s for s in sections if s.is_displayed()]
        assert key in [s.find_element("css selector", "h3 a").text
                       for s in visible]
        assert len(visible) < len(sections) or len(sections) == 1
        browser.save_screenshot(str(out / "subsystem.png"))
    finally:
        browser.quit()
    assert (out / "index.png").stat().st_size > 1000
