# SPDX-License-Identifier: GPL-2.0-only
"""Read the console log of a core-workload run and count what went wrong.

The guest (core-patch/workload/init) prints ``workload-*`` marker lines;
the kernel prints KUnit's KTAP at boot, ``hardened_atomic:`` overflow
reports, ``refcount_t:`` warnings, oopses and its hang detectors'
reports.  Every kernel event is attributed to where it happened: the
KUnit suite running at the time, else the workload phase, else boot.

An overflow report is *explained* when its call site's function is
listed in the explanations file (``FUNCTION reason...`` per line), or it
happened inside a KUnit suite listed there as ``suite NAME reason...``
(a suite that provokes reports on purpose).
"""

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\] ")
ATOMIC_REPORT = re.compile(
    r"hardened_atomic: (?P<bits>\d+)-bit atomic "
    r"(?P<kind>overflow|underflow|use of a saturated counter) of \S+ at "
    r"(?P<site>\S+) \(comm (?P<comm>.*) pid (?P<pid>\d+)\)")
REFCOUNT_WARN = re.compile(r"refcount_t: (?P<kind>[^;]+);")
# "WARNING: CPU: 1 PID: 9 at FILE:LINE FUNC+OFF/LEN" up to Linux 6.x;
# "WARNING: FILE:LINE at FUNC+OFF/LEN, CPU#1: COMM/PID" (or without the
# FILE:LINE) since 7.0.
WARNING = re.compile(r"^WARNING: (?:CPU: \d+ PID: \d+ at (?P<old>.*)|"
                     r"(?:(?P<file>\S+:\d+) )?at (?P<func>\S+), CPU#\d+: )")
OOPS = re.compile(r"^(Oops|BUG: |general protection fault|kernel BUG at|"
                  r"Kernel panic|Unable to handle kernel)")
HUNG_TASK = re.compile(
    r"INFO: task (?P<task>\S+) blocked for more than (?P<secs>\d+) seconds")
STALL = re.compile(r"(rcu: INFO: \S+ (self-)?detected stall|"
                   r"watchdog: BUG: soft lockup)")
FRAME = re.compile(r"^\s+(\? )?(?P<func>[\w.]+)\+0x[0-9a-f]+/0x[0-9a-f]+")
SUBTEST = re.compile(r"^    # Subtest: (?P<name>\S+)")
SUITE_RESULT = re.compile(r"^(?P<not>not )?ok \d+ (?P<name>\S+)(?P<rest>.*)")
CASE_RESULT = re.compile(r"^    (?P<not>not )?ok \d+ (?P<name>\S+)(?P<rest>.*)")
PHASE = re.compile(r"^workload-phase: (?P<name>\S+) (?P<what>start|end) "
                   r"round=(?P<round>\d+)(?: rc=(?P<rc>-?\d+) "
                   r"secs=(?P<secs>\d+))?")
PHASE_HANG = re.compile(r"^workload-hang: (?P<name>\S+) round=(?P<round>\d+)"
                        r" (?P<what>.*)")
OUT = re.compile(r"^workload-out: (?P<name>\S+) (?P<text>.*)")

# Frames of the reporting machinery, not of the caller.
REPORTER_FRAMES = ("dump_stack", "dump_stack_lvl", "hardened_atomic",
                   "refcount_warn_saturate", "__refcount_", "show_stack",
                   "__warn", "report_bug", "handle_bug", "exc_invalid_op",
                   "asm_exc_invalid_op", "warn_slowpath")


@dataclass
class Report:
    """One overflow report: a checked atomic or a refcount_t."""
    kind: str          # "32-bit atomic overflow", "refcount_t saturated"
    site: str          # function+off/len of the call site, or "?"
    comm: str
    context: str       # "kunit:SUITE", "phase:NAME round R", "boot"
    callers: list[str] = field(default_factory=list)

    @property
    def function(self) -> str:
        return self.site.split("+", 1)[0]

    @property
    def refcount(self) -> bool:
        """A refcount_t warning (addition on 0, decrement hit 0,
        saturated, underflow), not a checked atomic's report."""
        return self.kind.startswith("refcount_t ")


@dataclass
class Event:
    """An oops, a warning or a hang, where it happened."""
    kind: str
    text: str
    context: str


@dataclass
class PhaseStats:
    runs: int = 0
    failed: int = 0
    hung: int = 0
    secs: int = 0
    last_out: str = ""

CPUS_UP = re.compile(r"smp: Brought up \d+ nodes?, (\d+) CPUs?")
# The guest's /proc/sys/kernel/tainted once boot (and its KUnit) is over.
TAINT = re.compile(r"^workload-taint: after-boot=(?P<value>\d+)")
# TAINT_WARN, bit 9: a WARN happened.
TAINT_WARN = 1 << 9


@dataclass
class Run:
    started: bool = False
    done: bool = False
    rounds: int = 0
    host_stuck: str = ""
    suites: dict[str, bool] = field(default_factory=dict)
    cases: dict[str, int] = field(default_factory=lambda: {
        "passed": 0, "failed": 0, "skipped": 0})
    failed_cases: list[str] = field(default_factory=list)
    phases: dict[str, PhaseStats] = field(default_factory=dict)
    reports: list[Report] = field(default_factory=list)
    oopses: list[Event] = field(default_factory=list)
    warnings: list[Event] = field(default_factory=list)
    hangs: list[Event] = field(default_factory=list)
    cpus: int = 0                 # "smp: Brought up N nodes, M CPUs"
    taint_after_boot: Optional[int] = None   # workload-taint: after-boot=

    def phase(self, name: str) -> PhaseStats:
        return self.phases.setdefault(name, PhaseStats())


def _is_reporter(func: str) -> bool:
    return func.startswith(REPORTER_FRAMES)


def parse(lines: Iterable[str]) -> Run:
    """Everything a console log says about the run."""
    run = Run()
    suite: Optional[str] = None
    phase: Optional[str] = None
    pending: Optional[Report] = None   # collecting its call trace
    for raw in lines:
        line = TIMESTAMP.sub("", raw.rstrip("\r\n"))
        where = (f"kunit:{suite}" if suite else
                 f"phase:{phase} round {run.rounds}" if phase else
                 "between phases" if run.started else "boot")
        frame = FRAME.match(line)
        if pending is not None and frame:
            func = frame.group("func")
            if not frame.group(1) and not _is_reporter(func):
                if pending.site == "?":
                    pending.site = line.strip()
                elif len(pending.callers) < 4:
                    pending.callers.append(func)
            continue
        if pending is not None and line.strip() in ("</TASK>", ""):
            pending = None
        m = SUBTEST.match(line)
        if m:
            suite = m.group("name")
            continue
        m = TAINT.match(line)
        if m:
            run.taint_after_boot = int(m.group("value"))
            continue
        m = CPUS_UP.search(line)
        if m:
            run.cpus = int(m.group(1))
            continue
        m = SUITE_RESULT.match(line)
        if m and suite and m.group("name") == suite:
            skipped = "# SKIP" in m.group("rest")
            run.suites[suite] = not m.group("not") or skipped
            suite = None
            continue
        m = CASE_RESULT.match(line)
        if m and suite:
            if "# SKIP" in m.group("rest"):
                run.cases["skipped"] += 1
            elif m.group("not"):
                run.cases["failed"] += 1
                run.failed_cases.append(f"{suite}.{m.group('name')}")
            else:
                run.cases["passed"] += 1
            continue
        if line.startswith("workload-start"):
            run.started = True
            continue
        m = PHASE.match(line)
        if m:
            stats = run.phase(m.group("name"))
            run.rounds = max(run.rounds, int(m.group("round")))
            if m.group("what") == "start":
                phase = m.group("name")
            else:
                phase = None
                stats.runs += 1
                stats.secs += int(m.group("secs"))
                if m.group("rc") != "0":
                    stats.failed += 1
            continue
        m = PHASE_HANG.match(line)
        if m:
            run.phase(m.group("name")).hung += 1
            run.hangs.append(Event("phase timeout", m.group("what"),
                                   f"phase:{m.group('name')} round "
                                   f"{m.group('round')}"))
            phase = None
            continue
        m = OUT.match(line)
        if m:
            run.phase(m.group("name")).last_out = m.group("text")
            continue
        if line.startswith("workload-done"):
            run.done = True
            continue
        if line.startswith("workload-host: guest stuck:"):
            run.host_stuck = line.split(":", 2)[2].strip()
            continue
        m = ATOMIC_REPORT.search(line)
        if m:
            pending = Report(f"{m.group('bits')}-bit atomic {m.group('kind')}",
                             m.group("site"), m.group("comm"), where)
            run.reports.append(pending)
            continue
        m = REFCOUNT_WARN.search(line)
        if m:
            pending = Report(f"refcount_t {m.group('kind')}", "?", "", where)
            run.reports.append(pending)
            continue
        m = WARNING.match(line)
        if m:
            at = m.group("old") or " ".join(
                p for p in (m.group("file"), m.group("func")) if p)
            # the WARN of a refcount_t or hardened_atomic report is the
            # report itself: revision 4 names the report's call site,
            # revision 3 warned from inside hardened_atomic_event() just
            # before printing the report
            func = m.group("func") or (m.group("old") or "").split(" ")[-1]
            if not _is_reporter(func) and not (
                    pending is not None and func == pending.site):
                run.warnings.append(Event("warning", at, where))
            continue
        if OOPS.match(line):
            run.oopses.append(Event("oops", line.strip(), where))
            continue
        m = HUNG_TASK.search(line)
        if m:
            run.hangs.append(Event("hung task", f"{m.group('task')} blocked "
                                   f"for more than {m.group('secs')} s", where))
            continue
        if STALL.search(line):
            run.hangs.append(Event("stall", line.strip(), where))
    if run.host_stuck:
        run.hangs.append(Event("guest stuck", run.host_stuck, "host"))
    elif run.started and not run.done and not run.oopses:
        run.hangs.append(Event("guest stopped", "the workload did not finish",
                               "host"))
    elif not run.started and not run.oopses:
        run.hangs.append(Event("guest stopped", "the workload never started",
                               "host"))
    return run


def read_explanations(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(function -> reason, KUnit suite -> reason) from an explanations file."""
    sites: dict[str, str] = {}
    suites: dict[str, str] = {}
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        words = line.split(None, 2)
        if words[0] == "suite" and len(words) == 3:
            suites[words[1]] = words[2]
        elif len(words) >= 2:
            sites[words[0]] = line.split(None, 1)[1]
        else:
            raise ValueError(f"{path}:{n}: want 'FUNCTION reason' or "
                             f"'suite NAME reason', got: {line}")
    return sites, suites


def explanation(report: Report, sites: dict[str, str],
                suites: dict[str, str]) -> Optional[str]:
    """Why REPORT is expected, or None."""
    if report.function in sites:
        return sites[report.function]
    if report.context.startswith("kunit:"):
        return suites.get(report.context[len("kunit:"):])
    return None


def in_explained_suite(event: Event, suites: dict[str, str]) -> bool:
    return (event.context.startswith("kunit:")
            and event.context[len("kunit:"):] in suites)
