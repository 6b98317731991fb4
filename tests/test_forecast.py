# SPDX-License-Identifier: GPL-2.0-only
"""The overflow forecast (refsweep/forecast.py, Documentation/forecast.rst):
hand-written dumps, the arithmetic, the FAIL rule, the mapping of call
sites with a real faddr2line over an object compiled with gcc -g, and
the triage items it makes."""

import io
import re
import shutil
import subprocess
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, TOP, classify_tree, make_tree, scan_tree

from refsweep import cli, forecast, triage_db
from refsweep.forecast import Frame

LOG = FIXTURES / "forecast" / "workload.log"
SRC = FIXTURES / "forecast" / "src"


def test_parse_log_reads_both_dumps_through_console_noise() -> None:
    dumps = forecast.parse_log(LOG.read_text(encoding="utf-8"))
    assert [d.label for d in dumps] == ["start", "end"]
    start, end = forecast.start_and_end(dumps)
    assert start is dumps[0] and end is dumps[1]
    assert start.floor == 1024 and start.now_ns == 10_000_000_000
    assert set(start.sites) == {"get_next_ino+0x2c/0x80",
                                "fx_gauge_add+0x10/0x40"}
    assert set(end.sites) == {"get_next_ino+0x2c/0x80",
                              "fx_gauge_add+0x10/0x40",
                              "sk_drops_add+0x1a/0x40 [udp_mod]",
                              "fx_seq64_next+0x8/0x30"}
    row = end.sites["fx_seq64_next+0x8/0x30"]     # spaces for tabs
    assert (row.bits, row.min, row.max) == (64, -9_000_000_000,
                                            4_000_000_000_000)


def test_parse_errors_name_the_dump() -> None:
    with pytest.raises(forecast.ForecastError, match="v2"):
        forecast.parse_dump("end", ["# hardened_atomic forecast v2 "
                                    "floor=1 now_ns=5"])
    with pytest.raises(forecast.ForecastError, match="cut short"):
        forecast.parse_log("refsweep-forecast-begin end\n# hardened_atomic "
                           "forecast v1 floor=1 now_ns=5\n")
    with pytest.raises(forecast.ForecastError, match="no forecast dump"):
        forecast.start_and_end(forecast.parse_log("nothing here\n"))


def _records() -> list[dict[str, Any]]:
    return [
        {"key": "fs/inode.c:get_next_ino:last_ino", "verdict": "usage",
         "rule": "limit", "wrap_by_design": False, "decl": "fs/inode.c:1"},
        {"key": "struct fx.gauge", "verdict": "usage", "rule": "limit",
         "wrap_by_design": False, "decl": "fx.c:1"},
        {"key": "struct sock.sk_drops", "verdict": "unknown",
         "rule": "unjudged-use", "wrap_by_design": False,
         "decl": "include/net/sock.h:408"},
        {"key": "fx.c:seq64", "verdict": "id", "rule": "id",
         "wrap_by_design": False, "decl": "fx.c:2"},
        {"key": "struct sbitmap_queue.completion_cnt", "verdict": "usage",
         "rule": "limit", "wrap_by_design": True,
         "wrap_evidence": ["read at lib/sbitmap.c:627: value - wakeups"],
         "decl": "include/linux/sbitmap.h:146"},
    ]


def _mapping() -> dict[str, tuple[list[str], Any, str]]:
    return {
        "get_next_ino+0x2c/0x80": (["fs/inode.c:get_next_ino:last_ino"],
                                   Frame("get_next_ino", "fs/inode.c", 9),
                                   "exact"),
        "fx_gauge_add+0x10/0x40": (["struct fx.gauge"],
                                   Frame("fx_gauge_add", "fx.c", 7),
                                   "exact"),
        "sk_drops_add+0x1a/0x40 [udp_mod]": (
            ["struct sock.sk_drops"],
            Frame("sk_drops_add", "include/net/sock.h", 2790), "exact"),
        "fx_seq64_next+0x8/0x30": (["fx.c:seq64"],
                                   Frame("fx_seq64_next", "fx.c", 12),
                                   "near"),
    }


def test_rates_projection_and_status() -> None:
    start, end = forecast.start_and_end(forecast.parse_log(
        LOG.read_text(encoding="utf-8")))
    fc = forecast.make(start, end, _mapping(), _records())
    by = {c.key: c for c in fc.counters}
    ino = by["fs/inode.c:get_next_ino:last_ino"]
    # 40,000 -> 10,040,000 in the 100 s between the dumps: 100,000/s,
    # above the 92,954/s over its own first..last.
    assert ino.sites[0].rate_dumps == pytest.approx(100_000)
    assert ino.sites[0].rate_life == pytest.approx(
        (10_040_000 - 1024) / 108)
    assert ino.rate == pytest.approx(100_000)
    assert ino.overflow_uptime_s == pytest.approx(
        110 + (2**31 - 1 - 10_040_000) / 100_000)
    assert not ino.decreased and ino.status(fc.horizon_s) == "FAIL"
    gauge = by["struct fx.gauge"]
    assert gauge.decreased
    assert gauge.rate == pytest.approx((3100 - 1024) / 107.5)
    assert gauge.status(fc.horizon_s) == "ok"       # ~3.5 years
    drops = by["struct sock.sk_drops"]
    assert drops.sites[0].new
    # New since the start dump: from the floor, or over its own span.
    assert drops.sites[0].rate_dumps == pytest.approx((50_000 - 1024) / 100)
    assert drops.rate == pytest.approx((50_000 - 1024) / 70)
    assert drops.status(fc.horizon_s) == "FAIL"     # ~36 days
    seq = by["fx.c:seq64"]
    assert seq.sites[0].bits == 64 and seq.converted
    assert seq.overflow_uptime_s is not None and \
        seq.overflow_uptime_s > forecast.YEAR_S
    assert [c.key for c in fc.failing] == [
        "fs/inode.c:get_next_ino:last_ino", "struct sock.sk_drops"]
    # The flagged counter no site moved is "not exercised".
    assert [r["key"] for r in fc.not_exercised] == [
        "struct sbitmap_queue.completion_cnt"]
    out = forecast.text(fc)
    assert "FAIL: 2 counters" in out
    assert "not exercised: 1 counters" in out
    data = forecast.to_json(fc)
    assert data["failing"] == [c.key for c in fc.failing]
    # An explanation (a human decision recorded after the evidence)
    # takes a counter out of the failing set.
    fc2 = forecast.make(start, end, _mapping(), _records(),
                        {"struct sock.sk_drops": "a statistic"})
    assert [c.key for c in fc2.failing] == [
        "fs/inode.c:get_next_ino:last_ino"]


def test_human_time() -> None:
    assert forecast.human_time(None) == "never"
    assert forecast.human_time(30) == "30 s"
    assert forecast.human_time(3 * 86400) == "3.0 days"
    assert forecast.human_time(41 * forecast.YEAR_S) == "41.0 years"


def test_return_addresses_are_looked_up_one_byte_back() -> None:
    assert forecast.lookup_address("f+0x2c/0x80", True) == (
        "f+0x2b/0x80", "f+0x2b", None)
    assert forecast.lookup_address("f+0x2c/0x80 [udp_mod]", False) == (
        "f+0x2c/0x80", "f+0x2c", "udp_mod")
    assert forecast.lookup_address("not a site", True) is None


def test_parse_faddr2line_inline_chains() -> None:
    out = forecast.parse_faddr2line(
        "fx_rcv+0x18/0x20:\n"
        "atomic_add at /b/include/linux/atomic/atomic-instrumented.h:5\n"
        "(inlined by) fx_drops_add at /b/drivers/fx.c:5\n"
        "(inlined by) fx_rcv at /b/drivers/fx.c:10\n\n"
        "fx_next+0x14/0x1a:\nfx_next at drivers/fx.c:14 (discriminator 2)\n")
    assert [f.function for f in out["fx_rcv+0x18"][0]] == [
        "atomic_add", "fx_drops_add", "fx_rcv"]
    assert out["fx_next+0x14"][0] == [Frame("fx_next", "drivers/fx.c", 14)]


def _faddr2line() -> Path:
    for tree in sorted((TOP / "work" / "trees").glob("linux-*")):
        script = tree / "scripts" / "faddr2line"
        if script.is_file():
            return script
    pytest.skip("no kernel tree with scripts/faddr2line under work/trees")


def _sites(obj: Path) -> dict[str, str]:
    """Function -> the %pS of the return address of its call of the
    recording function, as the kernel would print it (the size as
    kallsyms has it: up to the next symbol, which faddr2line checks)."""
    dis = subprocess.run(["objdump", "-dr", str(obj)], capture_output=True,
                         text=True, check=True).stdout
    syms = subprocess.run(["nm", "-n", str(obj)], capture_output=True,
                          text=True, check=True).stdout
    text_size = int(re.search(r"^\s*\d+\s+\.text\s+([0-9a-f]+)",
                              subprocess.run(["objdump", "-h", str(obj)],
                                             capture_output=True, text=True,
                                             check=True).stdout,
                              re.M).group(1), 16)
    funcs = [(int(parts[0], 16), parts[2]) for parts in
             (line.split() for line in syms.splitlines())
             if len(parts) == 3 and parts[1] in "Tt"]
    span = {name: (addr, (funcs[i + 1][0] if i + 1 < len(funcs)
                          else text_size) - addr)
            for i, (addr, name) in enumerate(funcs)}
    out = {}
    for m in re.finditer(r"^\s*([0-9a-f]+): R_X86_64_PLT32\s+"
                         r"fx_fc_record", dis, re.M):
        ret = int(m.group(1), 16) + 4
        for name, (addr, size) in span.items():
            if addr < ret <= addr + size and name not in out:
                out[name] = f"{name}+{ret - addr:#x}/{size:#x}"
    return out


def _line_of(path: Path, text: str) -> int:
    for n, line in enumerate(path.read_text(encoding="utf-8")
                             .splitlines(), 1):
        if text in line:
            return n
    raise AssertionError(f"{text!r} not in {path}")


def test_forecast_cli_maps_sites_with_faddr2line(tmp_path: Path,
                                                 capsys: Any) -> None:
    """The whole path on a small object: spatch scan and classification
    of the sources, gcc -g, faddr2line, the FAIL rule, the triage item,
    and a decision that answers it."""
    faddr2line = _faddr2line()
    if shutil.which("gcc") is None or shutil.which("objdump") is None:
        pytest.skip("no gcc/objdump")
    sources = {str(p.relative_to(SRC)): p.read_text(encoding="utf-8")
               for p in sorted(SRC.rglob("*")) if p.suffix in (".c", ".h")}
    tree = make_tree(tmp_path / "tree", sources)
    _h, files = scan_tree(tree)
    got = classify_tree(tree, files)
    verdicts = tmp_path / "v.jsonl"
    import json
    verdicts.write_text("".join(json.dumps(got[k]) + "\n"
                                for k in sorted(got)), encoding="utf-8")
    obj = tmp_path / "fx_fc.o"
    subprocess.run(["gcc", "-g", "-O2", "-c", "drivers/fx_fc.c", "-o",
                    str(obj)], cwd=tree, check=True)
    sites = _sites(obj)
    assert set(sites) == {"fx_fc_rcv", "fx_fc_next_ino", "fx_fc_get"}
    log = tmp_path / "console.log"
    start, end = 10_000_000_000, 110_000_000_000
    rows = [(sites["fx_fc_rcv"], 2000, 200_000),          # drops
            (sites["fx_fc_next_ino"], 5000, 9_000_000),   # ino
            (sites["fx_fc_get"], 1500, 5_001_500)]        # users
    lines = ["refsweep-forecast-begin start",
             f"# hardened_atomic forecast v1 floor=1024 now_ns={start}"]
    lines += [f"{s}\t32\t1024\t{a}\t10\t0\t1000000000\t9000000000"
              for s, a, _b in rows]
    lines += ["refsweep-forecast-end start", "refsweep-forecast-begin end",
              f"# hardened_atomic forecast v1 floor=1024 now_ns={end}"]
    lines += [f"{s}\t32\t1024\t{b}\t1000\t0\t1000000000\t109000000000"
              for s, _a, b in rows]
    lines += ["refsweep-forecast-end end"]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "triage.db"
    conn = triage_db.connect(db)
    triage_db.record_scan(conn, tree, list(got.values()))
    conn.close()
    argv = ["forecast", "--vmlinux", str(obj), "--verdicts", str(verdicts),
            "--tree", str(tree), "--faddr2line", str(faddr2line),
            "--triage", str(db), "--json", str(tmp_path / "fc.json"),
            str(log)]
    assert cli.main(argv) == 3
    out = capsys.readouterr().out
    data = json.loads((tmp_path / "fc.json").read_text(encoding="utf-8"))
    keys = {s["site"]: (s["keys"], s["location"], s["match"])
            for s in data["sites"]}
    c_file = SRC / "drivers" / "fx_fc.c"
    assert keys[sites["fx_fc_rcv"]] == (
        ["struct fx_fc_sock.drops"],
        f"drivers/fx_fc.c:{_line_of(c_file, 'atomic_add(n')}", "exact")
    assert keys[sites["fx_fc_next_ino"]] == (
        ["struct fx_fc_sock.ino"],
        f"drivers/fx_fc.c:{_line_of(c_file, 'atomic_inc_return')}", "exact")
    assert keys[sites["fx_fc_get"]] == (
        ["struct fx_fc_sock.users"],
        f"drivers/fx_fc.c:{_line_of(c_file, 'atomic_inc(&')}", "exact")
    status = {c["key"]: c["status"] for c in data["counters"]}
    # drops is a write-only statistic and ino an id: converted; users, a
    # refcount driven to 2^31 in about 12 hours, fails.
    assert status == {"struct fx_fc_sock.drops": "converted",
                      "struct fx_fc_sock.ino": "converted",
                      "struct fx_fc_sock.users": "FAIL"}
    assert "FAIL: 1 counters" in out
    # The failing counter is the first triage item, with its runtime
    # evidence next to the static one.
    conn = triage_db.connect(db)
    scan = triage_db.current_scan(conn)
    from refsweep import triage_next
    queue = triage_next.queue(triage_db.entries(conn, scan), set(),
                              triage_db.runtime_open(conn))
    assert queue[0].key == "struct fx_fc_sock.users"
    conn.close()
    assert cli.main(["triage", "show", "--db", str(db),
                     "struct fx_fc_sock.users"]) == 0
    shown = capsys.readouterr().out
    assert "runtime     " + sites["fx_fc_get"] in shown
    assert "not answered" in shown
    # A human explains it: the next forecast passes.
    assert cli.main(["triage", "set", "--db", str(db),
                     "struct fx_fc_sock.users", "usage", "--reason",
                     "bounded: the test driver takes a reference per "
                     "request and never drops it; not in production",
                     "--reviewer", "T <t@t>"]) == 0
    capsys.readouterr()
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "PASS" in out
    data = json.loads((tmp_path / "fc.json").read_text(encoding="utf-8"))
    status = {c["key"]: c["status"] for c in data["counters"]}
    assert status["struct fx_fc_sock.users"] == "explained"
    assert cli.main(["triage", "show", "--db", str(db),
                     "struct fx_fc_sock.users"]) == 0
    assert "answered by the decision" in capsys.readouterr().out



def test_test_code_overflowing_on_purpose_is_not_projected() -> None:
    """The boot-time KUnit suites and LKDTM drive counters to the bound
    on purpose: their sites are listed apart and fail nothing; a site at
    the bound anywhere else still fails the forecast."""
    log = "\n".join([
        "refsweep-forecast-begin end",
        "# hardened_atomic forecast v1 floor=1024 now_ns=110000000000",
        "# site\tbits\tmin\tmax\tchanges\tdecreases\tfirst_ns\tlast_ns",
        "atomic_op_inc+0x5c/0x70\t32\t2147483647\t2147483647\t1\t0\t"
        "2000000000\t2000000100",
        "lkdtm_ATOMIC_INC_OVERFLOW+0x1a/0x40\t32\t2147483646\t2147483647"
        "\t2\t0\t90000000000\t90000000100",
        "fx_id_next+0x8/0x30\t32\t2147483646\t2147483647\t2\t0\t"
        "90000000000\t90000000100",
        "refsweep-forecast-end end", ""])
    start, end = forecast.start_and_end(forecast.parse_log(log))
    mapping: dict[str, tuple[list[str], Any, str]] = {
        "atomic_op_inc+0x5c/0x70": (
            [], Frame("atomic_op_inc", "lib/tests/atomic_overflow_kunit.c",
                      100), "unmapped"),
        "lkdtm_ATOMIC_INC_OVERFLOW+0x1a/0x40": (
            [], Frame("lkdtm_ATOMIC_INC_OVERFLOW",
                      "drivers/misc/lkdtm/refcount.c", 420), "unmapped"),
        "fx_id_next+0x8/0x30": (
            [], Frame("fx_id_next", "drivers/fx.c", 12), "unmapped"),
    }
    fc = forecast.make(start, end, mapping, _records())
    assert [s.site for s in fc.unmapped_due] == ["fx_id_next+0x8/0x30"]
    data = forecast.to_json(fc)
    assert sorted(data["tests"]) == [
        "atomic_op_inc+0x5c/0x70", "lkdtm_ATOMIC_INC_OVERFLOW+0x1a/0x40"]
    assert data["unmapped"] == ["fx_id_next+0x8/0x30"]
    out = forecast.text(fc)
    assert "test code that overflows on purpose: 2 sites" in out
    assert "FAIL: 0 counters" in out and "1 such sites" in out
