# SPDX-License-Identifier: GPL-2.0-only
"""Reports with long keys and paths: the 72-column text never breaks an
identifier, a path or a key across lines, and every HTML page, with the
what-changed table and the forecast, fits a 1300-pixel window."""

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import make_tree
from test_report import _browser, refsweep

from refsweep.report_text import WIDTH, _wrap

LONG_DIR = "drivers/net/ethernet/microsoft/mana_with_a_long_directory_name"
LONG_C = f"{LONG_DIR}/gdma_main_and_more_words_in_the_file_name.c"


def _source(extra_test: bool) -> str:
    test = "\tif (atomic_read(&fx_rf_ctx_with_a_long_name.pending_requests_"\
        "of_the_long_context) == 0)\n\t\twake_up(&fx_rf_wq);\n" \
        if extra_test else ""
    return f"""// SPDX-License-Identifier: GPL-2.0
struct fx_rf_context_with_a_really_long_structure_tag_name {{
	atomic_t pending_requests_of_the_long_context;
	atomic_t statistic_counter_with_an_even_longer_member_name_here;
}};
static struct fx_rf_context_with_a_really_long_structure_tag_name
	fx_rf_ctx_with_a_long_name;
static wait_queue_head_t fx_rf_wq;

void mana_gd_send_request_with_a_really_long_function_name(void)
{{
	static atomic_t activity_id_counter_with_a_long_name;

	atomic_inc(&activity_id_counter_with_a_long_name);
	atomic_inc(&fx_rf_ctx_with_a_long_name.pending_requests_of_the_long_context);
	atomic_inc(&fx_rf_ctx_with_a_long_name.statistic_counter_with_an_even_longer_member_name_here);
}}

void fx_rf_done_with_another_quite_long_function_name(void)
{{
	atomic_dec(&fx_rf_ctx_with_a_long_name.pending_requests_of_the_long_context);
{test}}}
"""


def test_wrap_never_breaks_a_word() -> None:
    key = ("drivers/net/ethernet/microsoft/mana/gdma_main.c:"
           "mana_gd_send_request:activity_id")
    text = f"{key}: unknown -> statistic (print-only) and struct " \
           "sock.sk_drops then a path net/ipv4/route.c:3708 " * 3
    lines = _wrap(text, "  ", "    ")
    words = text.split()
    got = " ".join(" ".join(lines).split())
    assert got == " ".join(words)
    for line in lines:
        if len(line) > WIDTH:           # only a word that cannot fit
            assert len(line.split()) == 1, line
        assert not line.rstrip().endswith(("struct", "union"))


def _keys_intact(text: str, keys: list[str]) -> None:
    joined = "\n".join(text.splitlines())
    for k in keys:
        assert k in joined, f"{k} broken across lines"


@pytest.fixture(scope="module")
def long_report(tmp_path_factory: pytest.TempPathFactory
                ) -> tuple[Path, dict[str, Any]]:
    base = tmp_path_factory.mktemp("fit")
    os.environ["REFSWEEP_WORK"] = str(base / "work")
    reports = []
    for n, extra in enumerate((False, True)):
        tree = make_tree(base / f"tree{n}", {LONG_C: _source(extra)})
        verdicts = base / f"v{n}.jsonl"
        refsweep("classify", "--tree", str(tree), "--jobs", "1", "--json",
                 str(verdicts))
        records = [json.loads(line) for line in
                   verdicts.read_text(encoding="utf-8").splitlines()]
        out = base / f"out{n}"
        args = ["report", "--tree", str(tree), "--verdicts", str(verdicts),
                "--out", str(out)]
        if n == 1:
            fc = base / "fc.json"
            fc.write_text(json.dumps(_forecast(records)), encoding="utf-8")
            args += ["--compare", str(base / "out0" / "report.json"),
                     "--forecast", str(fc)]
        refsweep(*args)
        reports.append(out)
    report = json.loads((reports[1] / "report.json").read_text(
        encoding="utf-8"))
    return reports[1], report


def _forecast(records: list[dict[str, Any]]) -> dict[str, Any]:
    keys = sorted(r["key"] for r in records)
    site = ("mana_gd_send_request_with_a_really_long_function_name+0x1a4/"
            "0x3c0 [mana_with_a_long_module_name]")
    return {
        "schema": 1, "floor": 1024, "start_ns": 10**10, "end_ns": 11 * 10**10,
        "horizon_s": 365 * 86400.0,
        "sites": [{"site": site, "bits": 32, "magnitude": 5000000,
                   "changes": 10, "decreases": 0, "rate": 50000.0,
                   "rate_dumps": 50000.0, "rate_life": None,
                   "overflow_uptime_s": 43000.0,
                   "location": f"{LONG_C}:15", "function": "f",
                   "keys": keys, "match": "exact", "new": False},
                  {"site": "unmapped_site_with_a_long_symbol_name_too+0x10/"
                   "0x200", "bits": 32, "magnitude": 2000, "changes": 3,
                   "decreases": 0, "rate": 1.0, "rate_dumps": 1.0,
                   "rate_life": None, "overflow_uptime_s": 2.1e9,
                   "location": None, "function": None, "keys": [],
                   "match": "unmapped", "new": True}],
        "counters": [{"key": k, "final": "usage", "source": "machine",
                      "converted": False, "explained": False,
                      "reason": None, "rate": 50000.0, "decreased": False,
                      "overflow_uptime_s": 43000.0, "status": "FAIL",
                      "sites": [site]} for k in keys],
        "unmapped": ["unmapped_site_with_a_long_symbol_name_too+0x10/0x200"],
        "not_exercised": [{"key": "struct netns_ipv4_with_a_long_name."
                           "rt_genid_generation_number", "decl":
                           "include/net/netns/ipv4_and_a_long_name.h:297",
                           "final": "unknown", "wrap_evidence": []}],
        "failing": keys, "unmapped_due": []}


def test_long_text_keeps_identifiers_whole(long_report: Any) -> None:
    out, report = long_report
    keys = [v["key"] for s in report["subsystems"] for v in s["variables"]]
    texts = [p.read_text(encoding="utf-8") for p in
             [*sorted((out / "text").glob("*.txt")), out / "changes.txt",
              out / "forecast.txt"]]
    for text in texts:
        for line in text.splitlines():
            if len(line) > WIDTH:       # one word, after "  > " quoting
                assert len(re.sub(r"^\s*>", "", line).split()) == 1 or \
                    re.match(r"^\s*struct \S+$", line), line
    for text in texts[:-2]:
        _keys_intact(text, keys)
    changes = json.loads((out / "changes.json").read_text(encoding="utf-8"))
    changed = [r["key"] for rows in changes.values() if isinstance(rows, list)
               for r in rows]
    assert changed
    _keys_intact(texts[-2], changed)
    assert "struct fx_rf_context_with_a_really_long_structure_tag_name." \
        "pending_requests_of_the_long_context" in (out / "changes.txt") \
        .read_text(encoding="utf-8")
    fc = (out / "forecast.txt").read_text(encoding="utf-8")
    _keys_intact(fc, keys)
    assert "Not exercised" in fc and "rt_genid_generation_number" in fc


def test_pages_fit_1300_pixels(long_report: Any) -> None:
    out, report = long_report
    browser = _browser()
    try:
        browser.set_window_size(1300, 900)
        pages = ["index.html", "changes.html",
                 *(f"{s['slug']}.html" for s in report["subsystems"])]
        for page in pages:
            browser.get((out / page).as_uri())
            inner = browser.execute_script("return window.innerWidth")
            width = browser.execute_script(
                "return document.documentElement.scrollWidth")
            assert width <= inner, f"{page}: {width} px in a {inner} px " \
                "window"
            # Every column of every table is on screen: its right edge is
            # inside the window.
            right = browser.execute_script(
                "var m = 0; document.querySelectorAll('td, th').forEach("
                "function (c) { m = Math.max(m, c.getBoundingClientRect()"
                ".right); }); return m;")
            assert right <= inner, f"{page}: a cell ends at {right} px"
        browser.get((out / "index.html").as_uri())
        assert browser.find_elements("css selector", "tr.fc")
    finally:
        browser.quit()
