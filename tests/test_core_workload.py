# SPDX-License-Identifier: GPL-2.0-only
"""core-workload: the console-log reader counts what a run says, and the
run script refuses bad arguments before any slow step.

The logs are small hand-written excerpts in the formats the kernel and
core-patch/workload/init print.  The boot itself is `make core-workload`
(long) and `make core-workload-short` (part of `make test`).
"""

import os
import re
import subprocess
from pathlib import Path

from refsweep import workload_log

TOP = Path(__file__).resolve().parent.parent
WL = TOP / "core-patch" / "workload"

BOOT = """\
[    0.000000] Linux version 6.12.118
[    1.100000] KTAP version 1
[    1.100001] 1..2
[    1.100002]     KTAP version 1
[    1.100003]     # Subtest: atomic_overflow
[    1.100004]     1..2
[    1.200000] hardened_atomic: 32-bit atomic overflow of 00000000deadbeef at atomic_inc_test+0x1c/0x40 (comm kunit_try_catch pid 40), counter saturated
[    1.200001] CPU: 1 UID: 0 PID: 40 Comm: kunit_try_catch
[    1.200002] Call Trace:
[    1.200003]  <TASK>
[    1.200004]  dump_stack_lvl+0x5d/0x80
[    1.200005]  hardened_atomic_report+0x44/0x60
[    1.200006]  atomic_inc_test+0x1c/0x40
[    1.200007]  kunit_try_run_case+0x4c/0x100
[    1.200008]  </TASK>
[    1.300000]     ok 1 atomic_inc_test
[    1.300001]     ok 2 atomic_unchecked_test # SKIP not here
[    1.300002] ok 1 atomic_overflow
[    1.300003]     KTAP version 1
[    1.300004]     # Subtest: list-kernel
[    1.300005]     1..2
[    1.300006]     ok 1 list_add
[    1.300007]     not ok 2 list_del
[    1.300008] not ok 2 list-kernel
workload-start duration=60 slice=5 phases=udp,iosched
workload-phase: udp start round=1
[   10.000000] hardened_atomic: 32-bit atomic overflow of 00000000cafe at ip_idents_reserve+0x5a/0x90 (comm wl pid 77), counter saturated
[   10.000001] Call Trace:
[   10.000002]  <TASK>
[   10.000003]  dump_stack_lvl+0x5d/0x80
[   10.000004]  hardened_atomic_report+0x44/0x60
[   10.000005]  ? ip_idents_reserve+0x10/0x90
[   10.000006]  __ip_select_ident+0x40/0x70
[   10.000007]  ip_make_skb+0x100/0x140
[   10.000008]  </TASK>
workload-out: udp wl udp: ok 12 iterations, 64 sockets a round
workload-phase: udp end round=1 rc=0 secs=5
workload-phase: iosched start round=1
[   12.000000] hardened_atomic: 64-bit atomic overflow of 00000000beef at percpu_ref_switch_to_atomic_rcu+0x7a/0x1a0 (comm swapper/0 pid 0), counter saturated
[   12.000001] Call Trace:
[   12.000002]  <IRQ>
[   12.000003]  dump_stack_lvl+0x5d/0x80
[   12.000004]  rcu_core+0x2a0/0x5a0
[   12.000005]  </IRQ>
[   12.000006]
[   45.000000] INFO: task sh:80 blocked for more than 30 seconds.
workload-hang: iosched round=1 still running after 95 s
"""


def parse(text: str) -> workload_log.Run:
    return workload_log.parse(text.splitlines())


def test_kunit_results_are_counted_per_case_and_suite() -> None:
    run = parse(BOOT)
    assert run.suites == {"atomic_overflow": True, "list-kernel": False}
    assert run.cases == {"passed": 2, "failed": 1, "skipped": 1}
    assert run.failed_cases == ["list-kernel.list_del"]


def test_reports_keep_site_context_and_callers() -> None:
    run = parse(BOOT)
    assert [(r.kind, r.function, r.context) for r in run.reports] == [
        ("32-bit atomic overflow", "atomic_inc_test", "kunit:atomic_overflow"),
        ("32-bit atomic overflow", "ip_idents_reserve", "phase:udp round 1"),
        ("64-bit atomic overflow", "percpu_ref_switch_to_atomic_rcu",
         "phase:iosched round 1"),
    ]
    # reporter frames and "? " guesses are not callers
    assert run.reports[0].callers == ["atomic_inc_test", "kunit_try_run_case"]
    assert run.reports[1].callers == ["__ip_select_ident", "ip_make_skb"]
    assert run.reports[2].callers == ["rcu_core"]


def test_a_hung_phase_and_an_unfinished_guest_are_hangs() -> None:
    run = parse(BOOT)
    assert not run.done
    assert [h.kind for h in run.hangs] == ["hung task", "phase timeout",
                                          "guest stopped"]
    assert run.phases["iosched"].hung == 1
    assert run.phases["udp"].runs == 1
    assert run.phases["udp"].last_out.startswith("wl udp: ok 12")


def test_host_watchdog_is_a_hang_and_a_clean_run_has_none() -> None:
    stuck = parse("workload-start\nworkload-host: guest stuck: no workload-"
                  " line for 300 s, qemu killed\n")
    assert [(h.kind, h.context) for h in stuck.hangs] == [
        ("guest stuck", "host")]
    clean = parse("workload-start d\nworkload-phase: fork start round=1\n"
                  "workload-phase: fork end round=1 rc=0 secs=5\n"
                  "workload-done rounds=1 secs=5 hangs=0\n")
    assert clean.done and not clean.hangs and not clean.reports
    assert clean.phases["fork"].runs == 1 and clean.phases["fork"].failed == 0


def test_refcount_warning_is_a_report_not_a_warning_and_oops_counts() -> None:
    run = parse("""\
workload-start
workload-phase: tcp start round=2
[ 5.0] refcount_t: saturated; leaking memory.
[ 5.0] WARNING: CPU: 1 PID: 9 at lib/refcount.c:22 refcount_warn_saturate+0x90/0x110
[ 5.0] RIP: 0010:refcount_warn_saturate+0x90/0x110
[ 5.0] Call Trace:
[ 5.0]  <TASK>
[ 5.0]  __refcount_add.constprop.0+0x1/0x2
[ 5.0]  sock_hold+0x10/0x20
[ 5.0]  tcp_v4_rcv+0x100/0x900
[ 5.0]  </TASK>
[ 6.0] WARNING: CPU: 0 PID: 9 at net/core/sock.c:10 sk_free+0x1/0x2
[ 7.0] BUG: kernel NULL pointer dereference, address: 0000000000000008
workload-phase: tcp end round=2 rc=1 secs=20
""")
    assert [(r.kind, r.function, r.callers) for r in run.reports] == [
        ("refcount_t saturated", "sock_hold", ["tcp_v4_rcv"])]
    assert [w.text for w in run.warnings] == [
        "net/core/sock.c:10 sk_free+0x1/0x2"]
    assert len(run.oopses) == 1 and run.oopses[0].context == "phase:tcp round 2"
    assert run.phases["tcp"].failed == 1
    # an oops explains the early end: not also a hang
    assert run.hangs == []


def test_explanations_by_function_and_by_suite(tmp_path: Path) -> None:
    f = tmp_path / "explained.txt"
    f.write_text("# comment\nip_idents_reserve IP ids wrap by design\n"
                 "suite atomic_overflow provokes them\n", encoding="utf-8")
    sites, suites = workload_log.read_explanations(f)
    why = [workload_log.explanation(r, sites, suites)
           for r in parse(BOOT).reports]
    assert why == ["provokes them", "IP ids wrap by design", None]
    f.write_text("lonely\n", encoding="utf-8")
    try:
        workload_log.read_explanations(f)
    except ValueError as e:
        assert "explained.txt:1" in str(e)
    else:
        raise AssertionError("a line without a reason was accepted")


def summarize(log: Path, explained: Path,
              *opts: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["/usr/bin/python3", str(WL / "summarize"),
                           "--explained", str(explained), *opts, str(log)],
                          capture_output=True, text=True, timeout=60)


def test_summarize_lists_each_report_and_fails_on_unexplained(
        tmp_path: Path) -> None:
    log = tmp_path / "console.log"
    log.write_text(BOOT, encoding="utf-8")
    res = summarize(log, WL / "explained.txt")
    assert res.returncode == 1
    assert ("[UNEXPLAINED] 1 x 64-bit atomic overflow at "
            "percpu_ref_switch_to_atomic_rcu+0x7a" in res.stdout)
    assert "called from: rcu_core" in res.stdout
    assert "hangs: 3" in res.stdout
    assert res.stdout.rstrip().endswith("FAIL")


CLEAN_RUN = ("workload-start\nworkload-phase: ns start round=1\n"
             "workload-out: ns wl ns: ok 3 iterations\n"
             "workload-phase: ns end round=1 rc=0 secs=5\n"
             "workload-done rounds=1\n")


def test_summarize_passes_a_clean_run(tmp_path: Path) -> None:
    log = tmp_path / "console.log"
    log.write_text(CLEAN_RUN, encoding="utf-8")
    res = summarize(log, WL / "explained.txt")
    assert res.returncode == 0, res.stdout
    assert "0 unexplained reports, 0 hangs, 0 oopses" in res.stdout
    assert res.stdout.rstrip().endswith("PASS")


def test_summarize_fails_a_run_on_fewer_cpus_or_without_kunit(
        tmp_path: Path) -> None:
    """A clean workload is not enough: "-smp 2" must have given the kernel
    two CPUs, and the boot-time KUnit suites must have run."""
    log = tmp_path / "console.log"
    one_cpu = "[    0.476000] smp: Brought up 1 node, 1 CPU\n"
    two_cpus = "[    0.476000] smp: Brought up 1 node, 2 CPUs\n"
    suite = ("[    1.0] KTAP version 1\n[    1.0] 1..1\n"
             "[    1.1]     # Subtest: atomic_overflow\n"
             "[    1.1]     ok 1 atomic_inc_test\n"
             "[    1.2] ok 1 atomic_overflow\n")
    cases = [(one_cpu + suite, "1 CPUs, 1 KUnit suites: FAIL"),
             (two_cpus, "2 CPUs, 0 KUnit suites: FAIL"),
             (two_cpus + suite, "2 CPUs, 1 KUnit suites: PASS")]
    for head, verdict in cases:
        log.write_text(head + CLEAN_RUN, encoding="utf-8")
        res = summarize(log, WL / "explained.txt", "--cpus", "2", "--kunit")
        assert res.stdout.rstrip().endswith(verdict), res.stdout
        assert res.returncode == (0 if verdict.endswith("PASS") else 1)


def test_summarize_names_an_unreadable_log(tmp_path: Path) -> None:
    res = summarize(tmp_path / "missing.log", WL / "explained.txt")
    assert res.returncode == 2
    assert "missing.log" in res.stderr


def run_script(*args: str, work: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(WL / "run"), *args], cwd=TOP,
                          env={**os.environ, "REFSWEEP_WORK": str(work)},
                          capture_output=True, text=True, timeout=60)


def test_run_refuses_bad_arguments_before_any_work(tmp_path: Path) -> None:
    work = tmp_path / "work"
    tree = tmp_path / "linux"
    tree.mkdir()
    (tree / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 12\n",
                                   encoding="utf-8")
    cases = [
        (["--duration", "ten", str(tree)], "whole seconds, not 'ten'"),
        (["--sanitize", "some", str(tree)], "off, fast or full, not some"),
        (["--suites", "mine", str(tree)], "all or own, not mine"),
        (["--series", str(tmp_path / "nope"), str(tree)], "no patch dir"),
        (["--extra", str(tmp_path), str(tree)], "is not a series directory"),
        (["--frobnicate", str(tree)], "unknown option --frobnicate"),
        ([str(tmp_path / "nothere")], "no kernel tree at"),
    ]
    for args, message in cases:
        res = run_script(*args, work=work)
        assert res.returncode == 2, (args, res.stderr)
        assert message in res.stderr, (args, res.stderr)
    assert not (work / "core-patch").exists()


def test_workload_program_builds_and_runs_here(tmp_path: Path) -> None:
    """wl is plain Linux userland: it runs on the host as in the guest."""
    wl = tmp_path / "wl"
    subprocess.run(["gcc", "-static", "-O2", "-Wall", "-Werror", "-o",
                    str(wl), str(WL / "wl.c"), "-lpthread"], check=True)
    for args in (["udp", "1"], ["fork", "1"], ["fileio", str(tmp_path), "1"]):
        res = subprocess.run([str(wl), *args], capture_output=True,
                             text=True, timeout=60)
        assert res.returncode == 0, res.stdout + res.stderr
        assert res.stdout.startswith(f"wl {args[0]}: ok ")
    bad = subprocess.run([str(wl), "fork", "0"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "bad duration" in bad.stderr


def test_every_churn_series_has_a_counter_list_entry() -> None:
    """workload-churn/X.Y is what make-churn made of "counters": every
    listed counter is converted in each tree's churn, and nothing else."""
    churn = TOP / "core-patch" / "workload-churn"
    keys = [line.split("#")[0].strip() for line in
            (churn / "counters").read_text(encoding="utf-8").splitlines()]
    keys = [k for k in keys if k]
    assert keys
    for series in sorted(churn.glob("*/series")):
        text = "".join((series.parent / name).read_text(encoding="utf-8")
                       for name in series.read_text().split())
        converted = re.findall(r"^  (\S+): \w+ \((?:human|machine)", text,
                               re.M)
        assert sorted(converted) == sorted(keys), series


def test_linux_7_warning_format_and_a_saturated_counter_report() -> None:
    # Since Linux 7.0 the WARNING line puts the location first; a
    # hardened_atomic report's WARN names the report's call site and is
    # the report itself, any other WARN is a warning.
    run = parse("""\
workload-start
workload-phase: udp start round=1
[ 5.0] ------------[ cut here ]------------
[ 5.0] hardened_atomic: 32-bit atomic use of a saturated counter of 00000000beef at sk_drops_add+0x1a/0x40 (comm wl pid 77), counter saturated
[ 5.0] WARNING: at sk_drops_add+0x1a/0x40, CPU#1: wl/77
[ 5.0] Call Trace:
[ 5.0]  <TASK>
[ 5.0]  dump_stack_lvl+0x5d/0x80
[ 5.0]  __warn+0x80/0x100
[ 5.0]  hardened_atomic_fixup+0x44/0x60
[ 5.0]  sk_drops_add+0x1a/0x40
[ 5.0]  udp_queue_rcv_one_skb+0x100/0x300
[ 5.0]  </TASK>
[ 6.0] WARNING: net/core/sock.c:10 at sk_free+0x1/0x2, CPU#0: wl/77
[ 7.0] WARNING: at kmem_cache_free+0x3/0x9, CPU#0: wl/77
workload-phase: udp end round=1 rc=0 secs=5
""")
    assert [(r.kind, r.function) for r in run.reports] == [
        ("32-bit atomic use of a saturated counter", "sk_drops_add")]
    assert [w.text for w in run.warnings] == [
        "net/core/sock.c:10 sk_free+0x1/0x2", "kmem_cache_free+0x3/0x9"]


def test_a_warn_from_inside_the_reporter_is_the_report() -> None:
    # Revision 3 raised the report's WARN inside hardened_atomic_event(),
    # just before the report line: that WARNING is the report, not a
    # warning of its own; a WARN elsewhere still is one.
    run = parse("""\
workload-start
workload-phase: lkdtm start round=1
[ 5.0] ------------[ cut here ]------------
[ 5.0] WARNING: lib/hardened_atomic.c:174 at hardened_atomic_event+0xb6/0x190, CPU#1: sh/77
[ 5.0] hardened_atomic: 32-bit atomic overflow of 00000000beef at lkdtm_ATOMIC_INC_OVERFLOW+0x1a/0x40 (comm sh pid 77), counter saturated
[ 5.0] Call Trace:
[ 5.0]  <TASK>
[ 5.0]  lkdtm_ATOMIC_INC_OVERFLOW+0x1a/0x40
[ 5.0]  </TASK>
[ 6.0] WARNING: CPU: 1 PID: 77 at lib/hardened_atomic.c:174 hardened_atomic_event+0xb6/0x190
[ 7.0] WARNING: lib/lkdtm.c:9 at lkdtm_WARNING+0x1/0x2, CPU#1: sh/77
workload-phase: lkdtm end round=1 rc=0 secs=5
""")
    assert [r.kind for r in run.reports] == ["32-bit atomic overflow"]
    assert [w.text for w in run.warnings] == [
        "lib/lkdtm.c:9 lkdtm_WARNING+0x1/0x2"]


def test_summarize_fails_on_a_refcount_t_warning(tmp_path: Path) -> None:
    """A refcount_t warning is a failure of its own, counted apart from
    the checked atomics' reports: the refcount_t churn must not convert a
    counter that counts from 0 (css online_cnt: "addition on 0")."""
    log = tmp_path / "console.log"
    log.write_text(CLEAN_RUN.replace("workload-done", """\
workload-phase: cgroup start round=1
[ 5.0] ------------[ cut here ]------------
[ 5.0] refcount_t: addition on 0; use-after-free.
[ 5.0] WARNING: lib/refcount.c:25 at refcount_warn_saturate+0x7c/0x110, CPU#0: wl/80
[ 5.0] Call Trace:
[ 5.0]  <TASK>
[ 5.0]  online_css+0x5a/0x90
[ 5.0]  cgroup_apply_control_enable+0x140/0x370
[ 5.0]  </TASK>
workload-phase: cgroup end round=1 rc=0 secs=5
workload-done"""), encoding="utf-8")
    res = summarize(log, WL / "explained.txt")
    assert res.returncode == 1
    assert "core-workload: overflow reports: 0 (0 unexplained)" in res.stdout
    assert "core-workload: refcount_t warnings: 1" in res.stdout
    assert ("1 x refcount_t addition on 0 at online_css+0x5a "
            "(phase:cgroup)") in res.stdout
    assert "0 warnings, 1 refcount_t warnings" in res.stdout
    assert res.stdout.rstrip().endswith("FAIL")


def test_a_warn_before_the_workload_fails_an_untainted_run(
        tmp_path: Path) -> None:
    # The guest prints /proc/sys/kernel/tainted once boot and its KUnit
    # suites are over; bit 9 (W) means a WARN.
    explained = tmp_path / "explained.txt"
    explained.write_text("", encoding="utf-8")
    for taint, untainted, ok in ((262144, True, True), (262656, True, False),
                                 (262656, False, True)):
        log = tmp_path / "console.log"
        log.write_text(f"workload-taint: after-boot={taint}\n"
                       "workload-start duration=5 slice=5 phases=fork\n"
                       "workload-done rounds=1 secs=5 hangs=0\n",
                       encoding="utf-8")
        res = summarize(log, explained,
                        *(["--untainted"] if untainted else []))
        assert parse(log.read_text()).taint_after_boot == taint
        assert ("W)" in res.stdout) == bool(taint & 512), res.stdout
        assert (res.returncode == 0) == ok, res.stdout
