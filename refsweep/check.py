# SPDX-License-Identifier: GPL-2.0-only
"""Prove each generated patch before anyone mails it.

For every series of ``refsweep series --out DIR`` and every patch in it:
``git am`` on the base plus the core series (the conversion's starting
commit), checkpatch (no errors; no warning type a touched file did not
have before), a GCC build of every touched .c file and of one file
including each touched header, and sparse (C=2) on the same objects,
compared with the unpatched tree: no new sparse warnings.

The kernel is configured once per build directory: x86_64 allmodconfig
with the core options on (CONFIG_HARDENED_ATOMIC=y), or defconfig, or
defconfig plus a fragment (cheaper; what the test suite uses).  Results
are written after every patch to DIR/<slug>/check.json and reused when
the patch has not changed, so an interrupted check resumes.
"""

import hashlib
import json
import os
import re
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple, Optional

from refsweep import build_blame, workdir

CORE_OPTIONS = ["CONFIG_HARDENED_ATOMIC=y"]


class Arch(NamedTuple):
    """An architecture to build for: make's ARCH (and CROSS_COMPILE), the
    compiler and the Debian package that has it, the directory under arch/
    of its own files (the others' are counted as not built, never silently
    skipped)."""
    name: str
    make: tuple[str, ...]
    gcc: str
    own: str
    package: str

    def other(self, path: str) -> bool:
        """Whether PATH belongs to another architecture."""
        return path.startswith("arch/") and \
            not path.startswith(f"arch/{self.own}/")

    @property
    def suffix(self) -> str:
        """Appended to output names: none for x86_64, the default."""
        return "" if self.name == "x86_64" else f"-{self.name}"


ARCHES = {
    "x86_64": Arch("x86_64", ("ARCH=x86_64",), "gcc", "x86", "gcc"),
    "arm64": Arch("arm64", ("ARCH=arm64", "CROSS_COMPILE=aarch64-linux-gnu-"),
                  "aarch64-linux-gnu-gcc", "arm64", "gcc-aarch64-linux-gnu"),
}
X86_64 = ARCHES["x86_64"]
_DIAG = re.compile(r"^(?P<file>[\w./+-]+):(?P<line>\d+):(?:(?P<col>\d+):)?"
                   r"\s*(?P<kind>error|warning|note):\s*(?P<msg>.*)$")


class CheckError(Exception):
    """The check cannot run; the message says why."""


def _run(cmd: list[str], cwd: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                          check=False, **kw)


def _git(wt: Path, *args: str) -> str:
    res = _run(["git", *args], wt)
    if res.returncode != 0:
        raise CheckError(f"git {' '.join(args[:2])} in {wt}: "
                         f"{res.stderr.strip()[:300]}")
    return res.stdout


# ---------------------------------------------------------------------
# Build directory
# ---------------------------------------------------------------------

def _make(wt: Path, build: Path, jobs: int, *args: str,
          timeout: Optional[int] = None, merged: bool = False,
          arch: Arch = X86_64) -> subprocess.CompletedProcess[str]:
    """make in BUILD for the source WT; MERGED: stderr into stdout, in
    order (the diagnostics after the CC line of their object)."""
    _need_compiler(arch)
    cc = f"ccache {arch.gcc}" if _have("ccache") else arch.gcc
    cmd = ["nice", "make", "-C", str(wt), f"O={build}", *arch.make,
           f"CC={cc}", f"-j{jobs}", *args]
    if merged:
        return subprocess.run(cmd, cwd=wt, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              check=False, timeout=timeout)
    return _run(cmd, wt, timeout=timeout)


def _need_compiler(arch: Arch) -> None:
    """Raise CheckError unless ARCH's compiler is installed."""
    if not _have(arch.gcc):
        raise CheckError(f"building for {arch.name} needs {arch.gcc} "
                         f"(Debian package {arch.package})")


def _have(prog: str) -> bool:
    return any((Path(d) / prog).is_file()
               for d in os.environ.get("PATH", "/usr/bin").split(":"))


def configure(wt: Path, build: Path, config: str, jobs: int,
              arch: Arch = X86_64, core: bool = True) -> None:
    """Configure BUILD once (allmodconfig/defconfig/fragment, plus the
    core options when the series sits on the core series: CORE)."""
    options = CORE_OPTIONS if core else []
    stamp = build / ".refsweep-config"
    want = f"{arch.name}\n{config}\n" + "\n".join(options)
    if config not in ("allmodconfig", "defconfig"):
        want += "\n" + Path(config).read_text(encoding="utf-8")
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == want:
        return
    build.mkdir(parents=True, exist_ok=True)
    frag = build / ".refsweep-fragment"
    lines = list(options)
    if config not in ("allmodconfig", "defconfig"):
        lines += Path(config).read_text(encoding="utf-8").splitlines()
    frag.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if config == "allmodconfig":
        _need_compiler(arch)
        # KCONFIG_ALLCONFIG: the fragment's values win over "all m".
        res = _run(["make", "-C", str(wt), f"O={build}", *arch.make,
                    "-s", "allmodconfig"], wt,
                   env=dict(os.environ, KCONFIG_ALLCONFIG=str(frag)))
    else:
        res = _make(wt, build, jobs, "-s", "defconfig", arch=arch)
        if res.returncode == 0:
            res = _run([str(wt / "scripts/kconfig/merge_config.sh"), "-m",
                        "-O", str(build), str(build / ".config"), str(frag)],
                       wt)
        if res.returncode == 0:
            res = _make(wt, build, jobs, "-s", "olddefconfig", arch=arch)
    if res.returncode != 0:
        raise CheckError(f"configuring {build} failed: "
                         f"{res.stderr.strip()[-300:]}")
    have = (build / ".config").read_text(encoding="utf-8").splitlines()
    for opt in options:
        if opt not in have:
            raise CheckError(f"{opt} did not survive the configuration "
                             f"({config}): is the core series applied?")
    stamp.write_text(want, encoding="utf-8")


# ---------------------------------------------------------------------
# What to build for a patch
# ---------------------------------------------------------------------

def touched_files(patch: Path) -> list[str]:
    text = patch.read_text(encoding="utf-8", errors="replace")
    return sorted(set(re.findall(r"^\+\+\+ b/(\S+)$", text, re.M)))


def includer(wt: Path, header: str, arch: Arch = X86_64) -> Optional[str]:
    """One .c file that includes HEADER (a header, or a .c file that is
    included rather than built), preferring its own directory."""
    pats = []
    inc = "#[[:space:]]*include[[:space:]]*"
    if header.startswith("include/"):
        pats.append(f"{inc}[<\"]{re.escape(header[8:])}[>\"]")
    if "/" in header:
        # "ext/ext.c" from kernel/sched/build_policy.c too
        pats.append(f"{inc}\"([[:alnum:]_.-]+/)*"
                    f"{re.escape(header.rsplit('/', 1)[1])}\"")
    cands: list[str] = []
    for pat in pats:
        res = _run(["git", "grep", "-lE", pat, "--", "*.c"], wt)
        cands += res.stdout.split()
    hdir = header.rsplit("/", 1)[0]
    local = [c for c in cands if c.startswith(hdir + "/")
             and not arch.other(c)]
    if local:
        return sorted(local)[0]
    wide = [c for c in cands if not arch.other(c)
            and (header.startswith("include/") or
                 c.startswith(hdir.rsplit("/", 1)[0]))]
    return sorted(wide, key=lambda c: (c.count("/"), c))[0] if wide else None


def objects(wt: Path, files: list[str], arch: Arch = X86_64
            ) -> tuple[list[str], list[str]]:
    """(objects to build, files ARCH cannot build) for FILES."""
    objs: set[str] = set()
    skipped: list[str] = []
    for f in files:
        if arch.other(f):
            skipped.append(f)
        elif f.endswith(".c"):
            objs.add(f[:-2] + ".o")
        elif f.endswith(".h"):
            inc = includer(wt, f, arch)
            if inc:
                objs.add(inc[:-2] + ".o")
            else:
                skipped.append(f)
    return sorted(objs), skipped


def parse_diagnostics(output: str, wt: Path,
                      out: dict[str, dict[str, Any]]) -> None:
    """Charge make's OUTPUT (stderr merged, -Otarget) to the objects of
    OUT: each error (with the macros it was expanded from, in "diags")
    and each sparse line, to the object whose CC/CHECK line precedes it
    (or whose source it is in)."""
    srcs = {o[:-2] + ".c": o for o in out}
    current: Optional[str] = None
    last: Optional[dict[str, Any]] = None
    for line in output.splitlines():
        m = re.search(r"\b(?:CC \[M\]|CC|CHECK)\s+(\S+)$", line)
        if m:
            current = m.group(1)
            last = None
            continue
        d = _DIAG.match(line)
        if not d:
            continue
        path = os.path.relpath(d.group("file"), wt) \
            if d.group("file").startswith("/") else d.group("file")
        if d.group("kind") == "note":
            if last is not None and \
                    d.group("msg").startswith("in expansion of macro"):
                last["expansions"].append((path, int(d.group("line"))))
            continue
        obj = srcs.get(path) or (srcs.get(current[:-2] + ".c")
                                 if current else None)
        if obj is None:
            continue
        entry = f"{path}: {d.group('kind')}: {d.group('msg')}"
        if d.group("kind") == "error":
            out[obj]["errors"].append(entry)
            last = {"file": path, "line": int(d.group("line")),
                    "col": int(d.group("col") or 1), "msg": d.group("msg"),
                    "expansions": []}
            out[obj].setdefault("diags", []).append(last)
            continue
        last = None
        if not re.search(r"\[-W[\w=-]+\]$", d.group("msg")):
            out[obj]["sparse"].append(f"{path}: {d.group('msg')}")


def build(wt: Path, build_dir: Path, objs: list[str], jobs: int,
          sparse: bool = True, arch: Arch = X86_64
          ) -> dict[str, dict[str, Any]]:
    """Compile OBJS (with sparse unless told not to); per object: built,
    errors, sparse lines."""
    out: dict[str, dict[str, Any]] = {o: {"built": False, "errors": [],
                                         "sparse": []} for o in objs}
    if not objs:
        return out
    checker = ["C=2", "CHECK=sparse"] if sparse else []
    # An object left from an earlier build must not count as built now.
    for o in objs:
        (build_dir / o).unlink(missing_ok=True)
    # -Otarget keeps each object's diagnostics after its CC line, so
    # that an error in a header is charged to the object that included it.
    res = _make(wt, build_dir, jobs, "-k", "-Otarget", *checker, *objs,
                merged=True, arch=arch)
    parse_diagnostics(res.stdout, wt, out)
    for o in objs:
        out[o]["built"] = (build_dir / o).is_file() and not out[o]["errors"]
    return out


# ---------------------------------------------------------------------
# checkpatch
# ---------------------------------------------------------------------

def _checkpatch(wt: Path, args: list[str]) -> list[str]:
    res = _run(["perl", str(wt / "scripts/checkpatch.pl"), "--terse",
                "--no-summary", "--show-types", "--no-tree", *args], wt)
    return [ln for ln in res.stdout.splitlines()
            if ": ERROR:" in ln or ": WARNING:" in ln]


def _types(lines: list[str], kind: str) -> Counter[str]:
    out: Counter[str] = Counter()
    for ln in lines:
        m = re.search(rf": {kind}:(\w+):", ln)
        if m:
            out[m.group(1)] += 1
    return out


def checkpatch(wt: Path, patch: Path, files: list[str],
               before: dict[str, Counter[str]]) -> tuple[int, list[str]]:
    """(errors, new warnings): warnings count as new when the patch has
    them outside any file, or a touched file has more of that type than
    before the patch."""
    lines = _checkpatch(wt, [str(patch)])
    errors = sum(1 for ln in lines if ": ERROR:" in ln)
    new = [ln for ln in lines if ": WARNING:" in ln and
           not any(ln.startswith(f + ":") for f in files)]
    for f in files:
        if not (wt / f).is_file():
            continue
        after = _types(_checkpatch(wt, ["-f", f]), "WARNING")
        for typ, n in after.items():
            if n > before.get(f, Counter())[typ]:
                new.append(f"{f}: WARNING:{typ} x{n - before[f][typ]}")
    return errors, new


# ---------------------------------------------------------------------
# One series, every series
# ---------------------------------------------------------------------

def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def check_series(meta: dict[str, Any], sdir: Path, wt: Path,
                 build_dir: Path, jobs: int,
                 log: Any = print, arch: Arch = X86_64) -> dict[str, Any]:
    """Check one series directory; write and return its check.json
    (check-ARCH.json for another architecture than x86_64)."""
    out_path = sdir / f"check{arch.suffix}.json"
    old: dict[str, Any] = {}
    if out_path.is_file():
        old = {p["name"]: p for p in json.loads(
            out_path.read_text(encoding="utf-8")).get("patches", [])}
    patches = sorted(p for p in sdir.glob("*.patch")
                     if not p.name.startswith("0000-"))
    digests = [_digest(p) for p in patches]
    # Resumable: a series whose patches all passed before and are
    # unchanged is not checked again.  A failure is: it may have been the
    # machine's (a full disk, a wrong path), and is cheap to re-check.
    if all(old.get(p.name, {}).get("digest") == d
           for p, d in zip(patches, digests)) and patches and \
            all(p.name in old and _patch_ok(old[p.name]) for p in patches):
        kept = [old[p.name] for p in patches]
        reused: dict[str, Any] = {"patches": kept,
                                  "ok": all(_patch_ok(p) for p in kept)}
        log(f"check: {sdir.name}: unchanged, reused")
        return reused
    _run(["git", "am", "--abort"], wt)
    _git(wt, "checkout", "-q", "-f", "--detach", meta["start"])
    _git(wt, "clean", "-q", "-fd")
    files = sorted({f for p in patches for f in touched_files(p)})
    objs, skipped = objects(wt, files, arch)
    t0 = time.monotonic()
    base = build(wt, build_dir, objs, jobs, arch=arch)
    cp_before = {f: _types(_checkpatch(wt, ["-f", f]), "WARNING")
                 for f in files if (wt / f).is_file()}
    records: list[dict[str, Any]] = []
    for patch, digest in zip(patches, digests):
        pfiles = touched_files(patch)
        rec: dict[str, Any] = {"name": patch.name, "digest": digest,
                               "applies": False, "checkpatch_errors": None,
                               "checkpatch_new_warnings": None,
                               "compiled": 0, "compile_errors": None,
                               "sparse_new": None, "not_built": [],
                               "details": []}
        am = _run(["git", "-c", "user.name=refsweep", "-c",
                   "user.email=refsweep@localhost", "am", "-q",
                   str(patch)], wt)
        if am.returncode != 0:
            _run(["git", "am", "--abort"], wt)
            rec["details"].append(am.stderr.strip()[:300])
            records.append(rec)
            break
        rec["applies"] = True
        errors, warnings = checkpatch(wt, patch, pfiles, cp_before)
        rec["checkpatch_errors"] = errors
        rec["checkpatch_new_warnings"] = len(warnings)
        rec["details"] += warnings[:20]
        pobjs, pskipped = objects(wt, pfiles, arch)
        after = build(wt, build_dir, pobjs, jobs, arch=arch)
        rec["compiled"] = sum(1 for o in pobjs if after[o]["built"])
        rec["compile_errors"] = sum(len(after[o]["errors"]) for o in pobjs)
        rec["not_built"] = pskipped + [o for o in pobjs
                                       if not after[o]["built"]]
        new_sparse = []
        for o in pobjs:
            was = Counter(_strip_line(s) for s in base.get(o, {}).get(
                "sparse", []))
            for s in after[o]["sparse"]:
                key = _strip_line(s)
                if was[key] > 0:
                    was[key] -= 1
                else:
                    new_sparse.append(s)
            rec["details"] += after[o]["errors"][:10]
        rec["sparse_new"] = len(new_sparse)
        rec["details"] += new_sparse[:20]
        records.append(rec)
    result: dict[str, Any] = {"patches": records,
              "ok": bool(records) and len(records) == len(patches) and
              all(_patch_ok(r) for r in records),
              "objects": len(objs), "skipped": skipped,
              "seconds": round(time.monotonic() - t0)}
    out_path.write_text(json.dumps(result, indent=1) + "\n",
                        encoding="utf-8")
    return result


def _strip_line(s: str) -> str:
    return re.sub(r":\d+(:\d+)?", "", s)


def _patch_ok(r: dict[str, Any]) -> bool:
    return bool(r["applies"]) and r["checkpatch_errors"] == 0 and \
        r["checkpatch_new_warnings"] == 0 and r["compile_errors"] == 0 and \
        r["sparse_new"] == 0 and r["compiled"] > 0 and not [
            n for n in r["not_built"] if n.endswith(".o")]


def _prepare(series_dir: Path, config: str, build_dir: Optional[Path],
             jobs: int, log: Any, arch: Arch = X86_64
             ) -> tuple[dict[str, Any], list[dict[str, Any]], Path, Path]:
    """(series.json, index.json, source worktree at the start commit,
    configured build directory) for SERIES_DIR."""
    series_dir = series_dir.resolve()
    meta_path = series_dir / "series.json"
    index_path = series_dir / "index.json"
    if not meta_path.is_file() or not index_path.is_file():
        raise CheckError(f"{series_dir}: no series.json/index.json: not the "
                         "output of 'refsweep series'")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    index = json.loads(index_path.read_text(encoding="utf-8"))
    tree = Path(meta["tree"])
    name = tree.name
    cfg_name = Path(config).stem if config not in ("allmodconfig",
                                                   "defconfig") else config
    root = workdir.sub("check")
    wt = root / f"{name}-src"
    # the series sits on the core series (atomic_unchecked_t) or on the
    # base commit alone (refcount_t): the core options exist only then
    core = meta.get("start") != meta.get("base") if "base" in meta else True
    build_dir = build_dir.resolve() if build_dir else \
        root / f"{name}-{cfg_name}{'' if core else '-nocore'}{arch.suffix}"
    if not (wt / ".git").exists():
        _run(["git", "-C", str(tree), "worktree", "prune"], tree)
        _git(tree, "worktree", "add", "-q", "--detach", str(wt),
             meta["start"])
    _run(["git", "am", "--abort"], wt)
    _git(wt, "checkout", "-q", "-f", "--detach", meta["start"])
    _git(wt, "clean", "-q", "-fd")
    log(f"check: configuring {build_dir} ({arch.name} {config})")
    configure(wt, build_dir, config, jobs, arch, core)
    return meta, index, wt, build_dir


def run(series_dir: Path, jobs: int, only: list[str], config: str,
        build_dir: Optional[Path] = None,
        log: Any = print, arch: Arch = X86_64) -> bool:
    """Check every series (or ONLY those slugs); print the table."""
    series_dir = series_dir.resolve()   # git am runs in the worktree
    meta, index, wt, build_dir = _prepare(series_dir, config, build_dir,
                                          jobs, log, arch)
    slugs = [s["slug"] for s in index if not only or s["slug"] in only]
    missing = set(only) - {s["slug"] for s in index}
    if missing:
        raise CheckError(f"no such series: {', '.join(sorted(missing))}")
    rows = []
    for slug in slugs:
        log(f"check: {slug}")
        res = check_series(meta, series_dir / slug, wt, build_dir, jobs, log,
                           arch)
        rows.append((slug, res))
    log(table(rows))
    return all(r["ok"] for _, r in rows)


def whole(series_dir: Path, jobs: int, config: str,
          build_dir: Optional[Path] = None, log: Any = print,
          arch: Arch = X86_64) -> bool:
    """Apply every series at once on the start commit and compile every
    touched file (one includer per header) with GCC: the whole churn is
    type-consistent when nothing fails.  Writes DIR/whole-churn.json."""
    series_dir = series_dir.resolve()   # git am runs in the worktree
    meta, index, wt, build_dir = _prepare(series_dir, config, build_dir,
                                          jobs, log, arch)
    patches = [series_dir / s["slug"] / p for s in index
               for p in s["patches"] if not p.startswith("0000-")]
    failed: list[str] = []
    without_context: list[str] = []
    conflicting: list[Path] = []
    for patch in patches:
        name = f"{patch.parent.name}/{patch.name}"
        am = _am_stacked(wt, patch, [])
        if am.returncode != 0:
            # Two series that change adjacent lines of one file (zram
            # printing zsmalloc's counters beside its own) leave each
            # other no context line; the lines they remove still match.
            am = _am_stacked(wt, patch, ["-C0"])
            if am.returncode == 0:
                without_context.append(name)
        if am.returncode != 0:
            failed.append(f"{name}: {am.stderr.strip()[:200]}")
            conflicting.append(patch)
    if conflicting:
        stacked_from(wt, meta, conflicting, log)
    files = sorted({f for p in patches for f in touched_files(p)})
    objs, skipped = objects(wt, files, arch)
    log(f"check: whole churn: {len(patches)} patches, {len(files)} files, "
        f"{len(objs)} objects to build ({arch.name} {config})")
    t0 = time.monotonic()
    built = build(wt, build_dir, objs, jobs, sparse=False, arch=arch)
    failing = [o for o in objs if not built[o]["built"]]
    # The same objects on the unpatched tree: what fails there too is the
    # configuration's (a file allmodconfig does not select), not the churn's.
    churn_head = _git(wt, "rev-parse", "HEAD").strip()
    _git(wt, "checkout", "-q", "--detach", meta["start"])
    log(f"check: whole churn: {len(failing)} objects failed; building them "
        "without the churn")
    base = build(wt, build_dir, failing, jobs, sparse=False, arch=arch)
    _git(wt, "checkout", "-q", "--detach", churn_head)
    # A .c file that another one includes (drivers/md/raid1-10.c, in
    # raid1.c and raid10.c) is no unit of its own and fails alone either
    # way: its includer, built with the churn, stands for it.
    via = {o: inc[:-2] + ".o" for o in failing
           if not base[o]["built"] and base[o]["errors"]
           and (inc := includer(wt, o[:-2] + ".c", arch))
           and inc != o[:-2] + ".c"}
    inc_built = build(wt, build_dir, sorted(set(via.values())), jobs,
                      sparse=False, arch=arch)
    seconds = round(time.monotonic() - t0)
    new_errors: list[dict[str, Any]] = []
    base_failures: list[str] = []
    not_built: list[str] = []
    compiled_via: dict[str, str] = {}
    for o in failing:
        if o in via:
            inc_o = via[o]
            if inc_built[inc_o]["built"]:
                compiled_via[o] = inc_o
            else:
                new_errors += [{"object": inc_o, "error": entry, **diag}
                               for diag, entry in zip(
                                   inc_built[inc_o].get("diags", []),
                                   inc_built[inc_o]["errors"])]
            continue
        was = Counter(_strip_line(e) for e in base[o]["errors"])
        for diag, entry in zip(built[o].get("diags", []), built[o]["errors"]):
            if was[_strip_line(entry)] > 0:
                was[_strip_line(entry)] -= 1
            else:
                new_errors.append({"object": o, "error": entry, **diag})
        if not base[o]["built"]:
            (base_failures if base[o]["errors"] else not_built).append(o)
    names = build_blame.names_index(
        [k for s in index for k in s.get("variables", [])])
    units = preprocess(wt, build_dir, sorted({e["object"]
                                              for e in new_errors}), jobs,
                       arch)
    cache: dict[str, list[str]] = {}
    table: dict[str, dict[str, str]] = {}
    blocked: dict[str, str] = {}
    for err in new_errors:
        # No preprocessed source (make FILE.i failed): every converted
        # variable the error names is blamed, and macros come from the
        # files of the error and its expansions.
        unit = units.get(err["object"])
        macros = build_blame.unit_macros(
            wt, unit or build_blame.Unit(
                [err["file"]] + [f for f, _ in err["expansions"]], set()),
            cache, table)
        err["blamed"] = build_blame.blame(wt, err, names, unit, macros, cache)
        for key in err["blamed"]:
            blocked.setdefault(key, f"breaks the build with the whole churn: "
                               f"{err['file']}:{err['line']}: {err['msg']}")
    unexplained = [e for e in new_errors if not e["blamed"]]
    result: dict[str, Any] = {
        "arch": arch.name, "target": meta.get("target"),
        "config": config, "patches": len(patches), "not_applied": failed,
        "applied_without_context": without_context,
        "files": len(files), "objects": len(objs),
        "compiled": sum(1 for o in objs if built[o]["built"]),
        "compiled_through_includer": compiled_via,
        "errors": [f"{e['object']}: {e['error']}" for e in new_errors],
        "errors_unexplained": [f"{e['object']}: {e['error']}"
                               for e in unexplained],
        "blamed": sorted(blocked),
        "fails_without_churn": base_failures,
        "not_built": not_built,
        "other_arch_or_no_includer": skipped, "seconds": seconds,
        "ok": not failed and not new_errors}
    (series_dir / f"whole-churn{arch.suffix}.json").write_text(
        json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (series_dir / f"build-blocked{arch.suffix}.json").write_text(
        json.dumps(blocked, indent=1, sort_keys=True) + "\n",
        encoding="utf-8")
    log(f"check: whole churn: {result['compiled']}/{len(objs)} objects "
        f"compiled ({len(compiled_via)} more through the file that "
        f"includes them), {len(new_errors)} errors the churn adds "
        f"({len(unexplained)} naming no converted variable), "
        f"{len(base_failures)} objects failing without the churn too, "
        f"{len(not_built)} not built by {config}, {len(skipped)} files of "
        f"other architectures or without an includer, {len(failed)} patches "
        f"not applied ({len(without_context)} more applied without context "
        f"lines), {seconds} s")
    if blocked:
        log(f"check: whole churn: {len(blocked)} converted variables named "
            f"by an error: {series_dir / f'build-blocked{arch.suffix}.json'} "
            "(pass it to "
            "convert --blocked)")
    return bool(result["ok"])


def _am_stacked(wt: Path, patch: Path, options: list[str]
                ) -> subprocess.CompletedProcess[str]:
    """git am PATCH on top of the series before it.  Each series is made
    against the start commit, so two that touch neighbouring lines of one
    file need a three-way merge to stack; a failed am is aborted."""
    am = _run(["git", "-c", "user.name=refsweep", "-c",
               "user.email=refsweep@localhost", "am", "-q", "-3", *options,
               str(patch)], wt)
    if am.returncode != 0:
        _run(["git", "am", "--abort"], wt)
    return am


def stacked_from(wt: Path, meta: dict[str, Any], patches: list[Path],
                 log: Any) -> None:
    """Take the files of PATCHES, which did not stack on the other series
    (two sections changing neighbouring lines of one file), from the
    conversion's stacked branch (split.stack_all: every section in order,
    ending at the one-pass conversion), so that the build still sees the
    whole churn."""
    from refsweep import split
    summary = split.summary_path(Path(meta["worktree"]))
    try:
        commit = json.loads(summary.read_text(encoding="utf-8"))[
            "all_branch"]["commit"]
    except (OSError, ValueError, KeyError) as e:
        raise CheckError(f"{len(patches)} patches did not apply and the "
                         f"stacked branch is unknown ({summary}: {e})") from e
    files = sorted({f for p in patches for f in touched_files(p)})
    _git(wt, "checkout", commit, "--", *files)
    _git(wt, "-c", "user.name=refsweep", "-c", "user.email=refsweep@localhost",
         "commit", "-q", "-m", f"whole churn: {len(files)} files of "
         f"{len(patches)} conflicting patches from {commit[:12]}")
    log(f"check: whole churn: {len(patches)} patches did not stack; their "
        f"{len(files)} files come from the stacked branch ({commit[:12]})")


def preprocess(wt: Path, build_dir: Path, objs: list[str], jobs: int,
               arch: Arch = X86_64) -> dict[str, build_blame.Unit]:
    """What each of OBJS' preprocessed source (make FILE.i) shows."""
    targets = [o[:-2] + ".i" for o in objs]
    for t in targets:
        (build_dir / t).unlink(missing_ok=True)
    if targets:
        _make(wt, build_dir, jobs, "-k", *targets, arch=arch)
    return {o: build_blame.read_unit(wt, build_dir / t)
            for o, t in zip(objs, targets) if (build_dir / t).is_file()}


def table(rows: list[tuple[str, dict[str, Any]]]) -> str:
    head = f"{'series':40} {'patches':>7} {'applied':>7} {'cp-err':>6} " \
           f"{'cp-new-w':>8} {'objs':>5} {'errors':>6} {'sparse+':>7}  ok"
    lines = [head, "-" * len(head)]
    for slug, res in rows:
        ps = res["patches"]

        def total(key: str) -> int:
            return sum(p[key] or 0 for p in ps)

        lines.append(f"{slug[:40]:40} {len(ps):7d} "
                     f"{sum(1 for p in ps if p['applies']):7d} "
                     f"{total('checkpatch_errors'):6d} "
                     f"{total('checkpatch_new_warnings'):8d} "
                     f"{total('compiled'):5d} {total('compile_errors'):6d} "
                     f"{total('sparse_new'):7d}  "
                     f"{'yes' if res['ok'] else 'NO'}")
    return "\n".join(lines)
