# SPDX-License-Identifier: GPL-2.0-only
"""The overflow forecast: which checked counters a workload drives
towards 2^31 (2^63), how fast, and whether anyone has answered for them.

A kernel built with ``CONFIG_HARDENED_ATOMIC_FORECAST`` keeps, per call
site of a checked atomic operation whose result reached a magnitude of
at least ``floor``, the smallest and largest result seen there, how many
operations it recorded and how many moved the counter down, and when the
first and the last happened; ``/sys/kernel/debug/hardened_atomic/
forecast`` prints it (format v1)::

    # hardened_atomic forecast v1 floor=1024 now_ns=812345678901
    # site	bits	min	max	changes	decreases	first_ns	last_ns
    get_next_ino+0x2c/0x80	32	1024	4096000	4000	0	1234567	99999999

The workload harness dumps that file into its console log at the start
and at the end of the workload, between ``refsweep-forecast-begin
LABEL`` and ``refsweep-forecast-end LABEL`` lines (LABEL ``start`` or
``end``).  This module reads the two dumps, maps every site to a source
line with the kernel's ``scripts/faddr2line`` (one run per object file
for all its sites), finds the counter the scan recorded an operation
for on that line (the ``at`` of the verdict records' evidence), computes
how fast each counter's magnitude grows and when it would reach the
bound, and says which of them nobody has answered for: projected to
overflow within the horizon (a year of uptime), neither converted (a
wrap-safe final verdict, or flagged wrap-by-design) nor explained (a
human decision recorded after the runtime evidence, through ``refsweep
triage``).

Documentation/forecast.rst documents the input, the arithmetic and the
output.
"""

import concurrent.futures
import json
import math
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

from refsweep import verdicts

Record = dict[str, Any]

FORMAT_VERSION = 1
YEAR_S = 365 * 86400.0
HEADER = re.compile(r"#\s*hardened_atomic forecast v(?P<v>\d+)\s+"
                    r"floor=(?P<floor>\d+)\s+now_ns=(?P<now>\d+)")
# A console line may carry a printk time stamp and a log level prefix.
CONSOLE_PREFIX = re.compile(r"^(?:<\d+>)?(?:\[\s*\d+\.\d+\]\s?)?")
BEGIN = re.compile(r"^refsweep-forecast-begin\s+(?P<label>\S+)\s*$")
END = re.compile(r"^refsweep-forecast-end\s+(?P<label>\S+)\s*$")
SITE = re.compile(r"^(?P<sym>[\w.$]+)\+(?P<off>0x[0-9a-fA-F]+)"
                  r"(?:/(?P<size>0x[0-9a-fA-F]+))?"
                  r"(?:\s+\[(?P<module>[\w-]+)\])?$")
# Frames of the atomic API itself: the counter's code is the first frame
# out of them.
_API_PATHS = re.compile(r"(^|/)(include/linux/atomic/|include/linux/atomic\.h|"
                        r"include/asm-generic/atomic|arch/[^/]+/include/asm/"
                        r"(atomic|cmpxchg)|include/linux/atomic-|"
                        r"include/linux/hardened_atomic)")
# How far from an operation's recorded line a source line may be and
# still be that operation (a statement over several lines, or a tree
# whose lines moved a little under the kernel series): same function.
NEAR_LINES = 15


class ForecastError(Exception):
    """The forecast cannot be made; the message says why."""


@dataclass
class SiteRow:
    """One line of a dump."""
    site: str
    bits: int
    min: int
    max: int
    changes: int
    decreases: int
    first_ns: int
    last_ns: int

    @property
    def magnitude(self) -> int:
        return max(abs(self.min), abs(self.max))


@dataclass
class Dump:
    """One dump of the forecast file."""
    label: str
    floor: int
    now_ns: int
    sites: dict[str, SiteRow] = field(default_factory=dict)


def _clean(line: str) -> str:
    return CONSOLE_PREFIX.sub("", line.rstrip("\r\n"))


def parse_dump(label: str, lines: Iterable[str]) -> Dump:
    """One dump's lines (format v1), console prefixes allowed."""
    dump: Optional[Dump] = None
    for raw in lines:
        line = _clean(raw)
        if not line.strip():
            continue
        m = HEADER.match(line.strip())
        if m:
            if int(m.group("v")) != FORMAT_VERSION:
                raise ForecastError(
                    f"dump {label}: format v{m.group('v')}, this refsweep "
                    f"reads v{FORMAT_VERSION}")
            dump = Dump(label, int(m.group("floor")), int(m.group("now")))
            continue
        if line.lstrip().startswith("#") or dump is None:
            continue
        fields = line.split("\t")
        if len(fields) != 8:
            # Tabs may have become spaces on the way; the site holds no
            # space but its " [module]" suffix.
            fields = re.split(r"\s+", line.strip())
            if len(fields) == 9 and fields[1].startswith("["):
                fields = [f"{fields[0]} {fields[1]}", *fields[2:]]
        if len(fields) != 8:
            continue            # console noise between the markers
        try:
            row = SiteRow(fields[0].strip(), *(int(f) for f in fields[1:]))
        except ValueError:
            continue
        dump.sites[row.site] = row
    if dump is None:
        raise ForecastError(f"dump {label}: no 'hardened_atomic forecast' "
                            "header line")
    return dump


def parse_log(text: str) -> list[Dump]:
    """Every dump of a console log, in order."""
    out: list[Dump] = []
    label: Optional[str] = None
    block: list[str] = []
    for raw in text.splitlines():
        line = _clean(raw).strip()
        m = BEGIN.match(line)
        if m:
            label, block = m.group("label"), []
            continue
        m = END.match(line)
        if m and label is not None:
            out.append(parse_dump(label, block))
            label = None
            continue
        if label is not None:
            block.append(raw)
    if label is not None:
        raise ForecastError(f"dump {label}: no refsweep-forecast-end line "
                            "(the log was cut short?)")
    return out


def start_and_end(dumps: list[Dump]) -> tuple[Optional[Dump], Dump]:
    """The first dump labelled start (None if there is none) and the last
    dump (labelled end, if any is)."""
    if not dumps:
        raise ForecastError("no forecast dump in the log (no "
                            "refsweep-forecast-begin line)")
    starts = [d for d in dumps if d.label == "start"]
    ends = [d for d in dumps if d.label == "end"] or dumps
    end = ends[-1]
    start = starts[0] if starts and starts[0] is not end else None
    if start is not None and start.now_ns >= end.now_ns:
        raise ForecastError("the start dump is not older than the end dump")
    return start, end


# ---------------------------------------------------------------------
# Sites to source lines
# ---------------------------------------------------------------------

@dataclass(frozen=True)
class Frame:
    """One frame of faddr2line's inline chain: function, file, line."""
    function: str
    path: str
    line: int


_FRAME = re.compile(r"^(?:\(inlined by\)\s+)?(?P<func>\S+) at (?P<path>\S+?):"
                    r"(?P<line>\d+)")


def parse_faddr2line(text: str) -> dict[str, list[list[Frame]]]:
    """faddr2line's output: "SYM+OFF/SIZE:" then the inline chain, one
    frame a line, innermost first; duplicate symbols give several
    chains.  Keyed by SYM+OFF (the offset as printed)."""
    out: dict[str, list[list[Frame]]] = {}
    cur: Optional[list[Frame]] = None
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"^([\w.$]+\+0x[0-9a-fA-F]+)(?:/0x[0-9a-fA-F]+)?:$", line)
        if m:
            cur = []
            out.setdefault(_norm_site(m.group(1)), []).append(cur)
            continue
        f = _FRAME.match(line)
        if f and cur is not None:
            cur.append(Frame(f.group("func"), f.group("path"),
                             int(f.group("line"))))
    return out


def _norm_site(symoff: str) -> str:
    sym, _p, off = symoff.partition("+")
    return f"{sym}+{int(off, 16):#x}"


def lookup_address(site: str, adjust: bool) -> Optional[tuple[str, str,
                                                               Optional[str]]]:
    """(func+off for faddr2line, the same normalised, module or None).
    ADJUST: the site is a return address (%pS of the caller): look up
    the byte before it, as %pB does, so the call's line is found."""
    m = SITE.match(site.strip())
    if not m:
        return None
    off = int(m.group("off"), 16)
    if adjust and off > 0:
        off -= 1
    size = f"/{m.group('size')}" if m.group("size") else ""
    arg = f"{m.group('sym')}+{off:#x}{size}"
    return arg, f"{m.group('sym')}+{off:#x}", m.group("module")


def run_faddr2line(faddr2line: Path, objfile: Path, args: list[str],
                   jobs: int = 1) -> dict[str, list[list[Frame]]]:
    """faddr2line OBJFILE ARGS: JOBS runs at once, each over its share
    of ARGS (each run reads the symbol table once; on a vmlinux each
    address then costs a pass over its symbols)."""
    jobs = max(1, min(jobs, len(args)))
    chunks = [args[i::jobs] for i in range(jobs)]

    def one(chunk: list[str]) -> "subprocess.CompletedProcess[str]":
        return subprocess.run([str(faddr2line), str(objfile), *chunk],
                              capture_output=True, text=True, check=False,
                              errors="replace")
    out: dict[str, list[list[Frame]]] = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for res in pool.map(one, chunks):
            if res.returncode != 0 and not res.stdout:
                msg = (res.stderr.strip().splitlines() or
                       ["no message"])[-1]
                raise ForecastError(f"{faddr2line} {objfile}: {msg}")
            for k, v in parse_faddr2line(res.stdout).items():
                out.setdefault(k, []).extend(v)
    return out


class OpIndex:
    """Where the scan recorded operations: (file, line) -> keys."""

    def __init__(self, records: list[Record]) -> None:
        self.at: dict[tuple[str, int], dict[str, Record]] = {}
        self.by_path: dict[str, list[tuple[int, Optional[str], str]]] = {}
        self.records = {r["key"]: r for r in records}
        for r in records:
            for e in r.get("evidence", []):
                if e.get("weak") or e.get("use") == "escape":
                    continue
                path, _s, lno = str(e.get("at", "")).rpartition(":")
                if not lno.isdigit():
                    continue
                self.at.setdefault((path, int(lno)), {})[r["key"]] = e
                self.by_path.setdefault(path, []).append(
                    (int(lno), e.get("function"), r["key"]))
        self.paths = sorted(self.by_path)

    def relative(self, path: str) -> Optional[str]:
        """PATH as a path of the scanned tree: as is, or the longest
        scanned path it ends with (an absolute build path)."""
        path = re.sub(r"^(\./)+", "", path)
        if path in self.by_path:
            return path
        best = None
        for p in self.paths:
            if path.endswith("/" + p) and (best is None or len(p) > len(best)):
                best = p
        return best

    def keys_at(self, frames: list[Frame]
                ) -> tuple[list[str], Optional[Frame], str]:
        """The counters of the first frame out of the atomic API that the
        scan has an operation on: (keys, frame, how: exact or near)."""
        for f in frames:
            if _API_PATHS.search(f.path):
                continue
            path = self.relative(f.path)
            if path is None:
                continue
            found = self.at.get((path, f.line))
            if found:
                return sorted(found), Frame(f.function, path, f.line), \
                    "exact"
            near = [(abs(lno - f.line), key)
                    for lno, fn, key in self.by_path[path]
                    if fn == f.function and abs(lno - f.line) <= NEAR_LINES]
            if near:
                best = min(d for d, _k in near)
                return sorted({k for d, k in near if d == best}), \
                    Frame(f.function, path, f.line), "near"
        return [], None, "unmapped"


# ---------------------------------------------------------------------
# Rates and projections
# ---------------------------------------------------------------------

@dataclass
class SiteForecast:
    """One site: what it recorded, where it is, how fast it grows."""
    site: str
    bits: int
    magnitude: int
    changes: int
    decreases: int
    rate: float                 # magnitude per second (the projection's)
    rate_dumps: Optional[float]  # between the two dumps
    rate_life: Optional[float]   # over first_ns..last_ns
    overflow_uptime_s: Optional[float]   # None: not growing
    location: Optional[str] = None       # PATH:LINE
    function: Optional[str] = None
    keys: list[str] = field(default_factory=list)
    match: str = "unmapped"     # exact, near, unmapped, test
    new: bool = False           # not in the start dump


def bound(bits: int) -> int:
    return (1 << (bits - 1)) - 1


def site_forecast(row: SiteRow, before: Optional[SiteRow],
                  start: Optional[Dump], end: Dump) -> SiteForecast:
    """Rates of one site: between the dumps (when the start dump has it,
    else from the floor the end dump's magnitude crossed since the start
    dump), and over the site's own first..last; the projection uses the
    larger (the sooner overflow)."""
    mag = row.magnitude
    rate_dumps = None
    if start is not None and end.now_ns > start.now_ns:
        dt = (end.now_ns - start.now_ns) / 1e9
        base = before.magnitude if before is not None else min(
            mag, end.floor)
        rate_dumps = max(0.0, (mag - base) / dt)
    rate_life = None
    if row.last_ns > row.first_ns:
        rate_life = max(0.0, (row.max - row.min) /
                        ((row.last_ns - row.first_ns) / 1e9))
    rates = [r for r in (rate_dumps, rate_life) if r is not None]
    rate = max(rates) if rates else 0.0
    remaining = bound(row.bits) - mag
    overflow: Optional[float]
    if remaining <= 0:
        overflow = end.now_ns / 1e9
    elif rate > 0:
        overflow = end.now_ns / 1e9 + remaining / rate
    else:
        overflow = None
    return SiteForecast(row.site, row.bits, mag, row.changes, row.decreases,
                        rate, rate_dumps, rate_life, overflow,
                        new=start is not None and before is None)


@dataclass
class CounterForecast:
    """One counter (a key of the verdicts): its sites and its status."""
    key: str
    sites: list[SiteForecast]
    final: str
    source: str
    converted: bool
    explained: bool
    reason: Optional[str]

    @property
    def rate(self) -> float:
        return max(s.rate for s in self.sites)

    @property
    def overflow_uptime_s(self) -> Optional[float]:
        found = [s.overflow_uptime_s for s in self.sites
                 if s.overflow_uptime_s is not None]
        return min(found) if found else None

    @property
    def decreased(self) -> bool:
        return any(s.decreases for s in self.sites)

    def due(self, horizon_s: float) -> bool:
        t = self.overflow_uptime_s
        return t is not None and t <= horizon_s

    def status(self, horizon_s: float) -> str:
        if self.converted:
            return "converted"
        if self.explained:
            return "explained"
        return "FAIL" if self.due(horizon_s) else "ok"


@dataclass
class Forecast:
    """The whole forecast of one workload log."""
    start: Optional[Dump]
    end: Dump
    sites: list[SiteForecast]
    counters: list[CounterForecast]
    not_exercised: list[Record]
    horizon_s: float

    @property
    def failing(self) -> list[CounterForecast]:
        return [c for c in self.counters
                if c.status(self.horizon_s) == "FAIL"]

    @property
    def unmapped_due(self) -> list[SiteForecast]:
        return [s for s in self.sites if not s.keys and s.match != "test"
                and s.overflow_uptime_s is not None and
                s.overflow_uptime_s <= self.horizon_s]


# Test code that overflows counters on purpose: the KUnit suites that run
# at boot (lib/tests/, *_kunit.c) and LKDTM's crash types.  Their sites
# sit at a bound by design; the workload's own report check explains them.
_DELIBERATE = re.compile(r"(^|/)(lib/tests/|drivers/misc/lkdtm/)|"
                         r"_kunit\.c$|(^|/)kunit/")


def deliberate(location: Optional[str]) -> bool:
    """Whether PATH:LINE lies in test code that overflows on purpose."""
    return location is not None and bool(
        _DELIBERATE.search(location.rsplit(":", 1)[0]))


def map_sites(end: Dump, index: OpIndex, vmlinux: Path, faddr2line: Path,
              module_dir: Optional[Path], adjust: bool = True,
              jobs: int = 1
              ) -> dict[str, tuple[list[str], Optional[Frame], str]]:
    """Each site of END -> (keys, frame, match) by faddr2line, one run
    per object file."""
    per_object: dict[Path, list[tuple[str, str, str]]] = {}
    out: dict[str, tuple[list[str], Optional[Frame], str]] = {}
    for site in end.sites:
        found = lookup_address(site, adjust)
        if found is None:
            out[site] = ([], None, "unmapped")
            continue
        arg, norm, module = found
        obj = vmlinux
        if module:
            ko = _module_object(module_dir, module)
            if ko is None:
                out[site] = ([], None, "unmapped")
                continue
            obj = ko
        per_object.setdefault(obj, []).append((site, arg, norm))
    for obj, items in per_object.items():
        chains = run_faddr2line(faddr2line, obj,
                                sorted({arg for _s, arg, _n in items}), jobs)
        for site, _arg, norm in items:
            best: tuple[list[str], Optional[Frame], str] = ([], None,
                                                            "unmapped")
            for chain in chains.get(norm, []):
                got = index.keys_at(chain)
                if got[0] and (not best[0] or got[2] == "exact"):
                    best = got
                if best[2] == "exact":
                    break
            if not best[0]:
                # Nothing the scan recorded: still say where it is.
                for chain in chains.get(norm, []):
                    for f in chain:
                        if not _API_PATHS.search(f.path):
                            best = ([], Frame(f.function, index.relative(
                                f.path) or f.path, f.line), "unmapped")
                            break
                    if best[1] is not None:
                        break
            out[site] = best
    return out


def _module_object(module_dir: Optional[Path], name: str) -> Optional[Path]:
    if module_dir is None:
        return None
    for cand in (name, name.replace("-", "_"), name.replace("_", "-")):
        found = sorted(module_dir.rglob(f"{cand}.ko"))
        if found:
            return found[0]
    return None


def make(start: Optional[Dump], end: Dump,
         mapping: dict[str, tuple[list[str], Optional[Frame], str]],
         records: list[Record],
         explained: Optional[dict[str, str]] = None,
         horizon_s: float = YEAR_S) -> Forecast:
    """The forecast: per site, per counter, and the flagged counters the
    workload did not move.  EXPLAINED: key -> the reason of a human
    decision recorded after the counter's runtime evidence."""
    explained = explained or {}
    by_key = {r["key"]: r for r in records}
    sites = []
    for name, row in sorted(end.sites.items()):
        before = start.sites.get(name) if start is not None else None
        sf = site_forecast(row, before, start, end)
        keys, frame, how = mapping.get(name, ([], None, "unmapped"))
        sf.keys, sf.match = list(keys), how
        if frame is not None:
            sf.location = f"{frame.path}:{frame.line}"
            sf.function = frame.function
        if not sf.keys and deliberate(sf.location):
            sf.match = "test"
        sites.append(sf)
    per_key: dict[str, list[SiteForecast]] = {}
    for sf in sites:
        for k in sf.keys:
            per_key.setdefault(k, []).append(sf)
    counters = []
    for key, ss in sorted(per_key.items()):
        rec = by_key.get(key, {})
        dec = verdicts.decision(rec) if rec else None
        final = dec.final if dec else "unknown"
        source = dec.source if dec else "machine"
        converted = bool(rec) and verdicts.may_wrap(rec)
        counters.append(CounterForecast(
            key, ss, final, source, converted, key in explained,
            explained.get(key)))
    moved = set(per_key)
    not_exercised = [r for r in records if verdicts.wraps_by_design(r)
                     and r["key"] not in moved]
    return Forecast(start, end, sites, counters, not_exercised, horizon_s)


# ---------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------

def human_time(seconds: Optional[float]) -> str:
    """"3.2 days", "41 years", "never"."""
    if seconds is None:
        return "never"
    if seconds < 120:
        return f"{seconds:.0f} s"
    for unit, size in (("years", YEAR_S), ("days", 86400.0),
                       ("hours", 3600.0), ("min", 60.0)):
        if seconds >= size:
            value = seconds / size
            if value >= 1000:
                return f"{value:.2g} {unit}".replace("e+0", "e").replace(
                    "e+", "e")
            return f"{value:.1f} {unit}" if value < 100 else \
                f"{value:.0f} {unit}"
    return f"{seconds:.0f} s"


def human_rate(rate: float) -> str:
    """"0", "19.3", "700", "1.2e+07"."""
    if rate == 0:
        return "0"
    if rate >= 1e6:
        return f"{rate:.2g}"
    if rate >= 100:
        return f"{rate:.0f}"
    return f"{rate:.3g}"


def to_json(fc: Forecast) -> Record:
    """The forecast as JSON (Documentation/forecast.rst)."""
    def site(s: SiteForecast) -> Record:
        return {"site": s.site, "bits": s.bits, "magnitude": s.magnitude,
                "changes": s.changes, "decreases": s.decreases,
                "rate": s.rate, "rate_dumps": s.rate_dumps,
                "rate_life": s.rate_life,
                "overflow_uptime_s": s.overflow_uptime_s,
                "location": s.location, "function": s.function,
                "keys": s.keys, "match": s.match, "new": s.new}
    return {
        "schema": 1,
        "floor": fc.end.floor,
        "start_ns": fc.start.now_ns if fc.start else None,
        "end_ns": fc.end.now_ns,
        "horizon_s": fc.horizon_s,
        "sites": [site(s) for s in fc.sites],
        "counters": [{"key": c.key, "final": c.final, "source": c.source,
                      "converted": c.converted, "explained": c.explained,
                      "reason": c.reason, "rate": c.rate,
                      "decreased": c.decreased,
                      "overflow_uptime_s": c.overflow_uptime_s,
                      "status": c.status(fc.horizon_s),
                      "sites": [s.site for s in c.sites]}
                     for c in fc.counters],
        "unmapped": [s.site for s in fc.sites
                     if not s.keys and s.match != "test"],
        "tests": [s.site for s in fc.sites if s.match == "test"],
        "not_exercised": [{"key": r["key"], "decl": r.get("decl"),
                           "final": verdicts.decision(r).final,
                           "wrap_evidence": list(r.get("wrap_evidence")
                                                 or [])[:1]}
                          for r in fc.not_exercised],
        "failing": [c.key for c in fc.failing],
        "unmapped_due": [s.site for s in fc.unmapped_due],
    }


def _table(rows: list[list[str]], head: list[str]) -> list[str]:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    out = []
    for r in [head, *rows]:
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths))
                   .rstrip())
    return out


def text(fc: Forecast, not_exercised_limit: int = 0) -> str:
    """The terminal report: the counters, the unmapped sites, the flagged
    counters the workload did not move, and the verdict line."""
    lines = []
    span = ""
    if fc.start is not None:
        span = f", {(fc.end.now_ns - fc.start.now_ns) / 1e9:.0f} s between " \
               "the dumps"
    lines.append(f"forecast: {len(fc.end.sites)} sites at or above "
                 f"{fc.end.floor}{span}; uptime at the end "
                 f"{human_time(fc.end.now_ns / 1e9)}; horizon "
                 f"{human_time(fc.horizon_s)}")
    rows = []
    order = sorted(fc.counters, key=lambda c: (
        c.overflow_uptime_s if c.overflow_uptime_s is not None
        else math.inf, c.key))
    for c in order:
        s = min(c.sites, key=lambda x: (
            x.overflow_uptime_s if x.overflow_uptime_s is not None
            else math.inf))
        rows.append([c.status(fc.horizon_s), s.site,
                     s.location or "?", c.key, human_rate(c.rate),
                     "yes" if c.decreased else "no",
                     human_time(c.overflow_uptime_s),
                     c.final + (f" ({c.source})" if c.source != "machine"
                                else "")])
    lines.append("")
    lines.extend(_table(rows, ["status", "call site", "source", "counter",
                               "rate/s", "decreased", "overflow at uptime",
                               "final"]))
    tests = [s for s in fc.sites if s.match == "test"]
    if tests:
        lines.append("")
        lines.append(f"test code that overflows on purpose: {len(tests)} "
                     "sites (KUnit, LKDTM), not projected")
    unmapped = [s for s in fc.sites if not s.keys and s.match != "test"]
    if unmapped:
        lines.append("")
        lines.append(f"sites no scanned operation matches ({len(unmapped)}):")
        urows = [[s.site, s.location or "?", human_rate(s.rate),
                  human_time(s.overflow_uptime_s)] for s in sorted(
                      unmapped, key=lambda x: (
                          x.overflow_uptime_s if x.overflow_uptime_s
                          is not None else math.inf, x.site))]
        lines.extend(_table(urows, ["call site", "source", "rate/s",
                                    "overflow at uptime"]))
    lines.append("")
    shown = fc.not_exercised if not not_exercised_limit else \
        fc.not_exercised[:not_exercised_limit]
    lines.append(f"not exercised: {len(fc.not_exercised)} counters flagged "
                 "wrap-by-design that no site of the dump moved")
    for r in shown:
        lines.append(f"  {r['key']}  ({r.get('decl')})")
    if len(shown) < len(fc.not_exercised):
        lines.append(f"  ... {len(fc.not_exercised) - len(shown)} more "
                     "(--json has them all)")
    lines.append("")
    failing, udue = fc.failing, fc.unmapped_due
    if failing or udue:
        lines.append(f"FAIL: {len(failing)} counters projected to overflow "
                     f"within {human_time(fc.horizon_s)} of uptime are "
                     "neither converted nor explained"
                     + (f"; {len(udue)} such sites map to no counter"
                        if udue else ""))
        for c in failing:
            lines.append(f"  {c.key}: {human_rate(c.rate)}/s, overflow at "
                         f"{human_time(c.overflow_uptime_s)} of uptime "
                         f"({c.final})")
        for s in udue:
            lines.append(f"  {s.site} ({s.location or 'no source line'}): "
                         f"{human_rate(s.rate)}/s, overflow at "
                         f"{human_time(s.overflow_uptime_s)} of uptime")
    else:
        lines.append(f"PASS: no unexplained counter projected to overflow "
                     f"within {human_time(fc.horizon_s)} of uptime")
    return "\n".join(lines) + "\n"
