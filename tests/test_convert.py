# SPDX-License-Identifier: GPL-2.0-only
"""convert, series: groups convert whole or not at all, the result
compiles, and regenerating gives the same bytes.

The fixture trees are scanned and classified with the real spatch; the
converted C is compiled with GCC against a stub of the atomic API in which
atomic_t, atomic_unchecked_t and refcount_t are distinct structs, so a
half-converted group is a compile error, as in the kernel.
"""

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, classify_tree, make_tree, slow_source
from refsweep import atomic_api, convert, maintainers, refcount_contract
from refsweep import series, split

CONVERT_FIXTURES = FIXTURES / "convert"
MAINTAINERS = """\
FX DRIVER
M:\tFx Maintainer <fx@example.org>
L:\tfx-devel@example.org
S:\tMaintained
F:\tdrivers/fx/

FX SUBDRIVER
M:\tSub Maintainer <sub@example.org>
S:\tMaintained
F:\tdrivers/fx/sub/

THE REST
M:\tSomeone <rest@example.org>
L:\tlkml@example.org
F:\t*
F:\t*/
"""


# git_identity: tests/conftest.py, used by name.
pytestmark = pytest.mark.usefixtures("git_identity")


def fixture_tree(root: Path, names: list[str]) -> Path:
    files = {f"drivers/fx/{n}": (CONVERT_FIXTURES / n).read_text()
             for n in names}
    files["MAINTAINERS"] = MAINTAINERS
    return make_tree(root, files)


def records(tree: Path) -> list[dict[str, Any]]:
    return [v for _, v in sorted(classify_tree(tree).items())]


def run(tree: Path, recs: list[dict[str, Any]], target: convert.Target,
        wt: Path) -> dict[str, Any]:
    return split.run(tree, wt, recs, target, None, 1, "refsweep convert "
                     "--tree fx", log=lambda _s: None)


def branch_text(wt: Path, summary: dict[str, Any], path: str) -> str:
    commit = summary["all_branch"]["commit"]
    return split.git(wt, "show", f"{commit}:{path}")


def stub_header(path: Path) -> Path:
    """Distinct atomic types and every operation, for GCC."""
    widths = {"": "int", "64": "long long", "_long": "long"}
    lines = ["struct seq_file;", "void kfree(const void *);",
             "void *kcalloc(unsigned long n, unsigned long size, int gfp);",
             "void *kmalloc(unsigned long size, int gfp);",
             "void *kzalloc(unsigned long size, int gfp);",
             "#define NULL ((void *)0)",
             "#define GFP_KERNEL 0", "#define ENOMEM 12",
             "int seq_printf(struct seq_file *, const char *, ...);",
             "typedef struct { int counter; } atomic_t;",
             "typedef struct { long long counter; } atomic64_t;",
             "typedef struct { long counter; } atomic_long_t;",
             "typedef struct { atomic_t a; } atomic_unchecked_t;",
             "typedef struct { atomic64_t a; } atomic64_unchecked_t;",
             "typedef struct { atomic_long_t a; } atomic_long_unchecked_t;",
             "typedef struct { atomic_t refs; } refcount_t;",
             "#define ATOMIC_INIT(i) { (i) }",
             "#define ATOMIC_UNCHECKED_INIT(i) { ATOMIC_INIT(i) }",
             "#define ATOMIC64_INIT(i) { (i) }",
             "#define ATOMIC64_UNCHECKED_INIT(i) { ATOMIC64_INIT(i) }",
             "#define ATOMIC_LONG_INIT(i) { (i) }",
             "#define ATOMIC_LONG_UNCHECKED_INIT(i) { ATOMIC_LONG_INIT(i) }",
             "#define REFCOUNT_INIT(i) { .refs = ATOMIC_INIT(i) }"]
    bases = sorted(atomic_api.OPS)
    for w, ctype in widths.items():
        t = {"": "atomic_t", "64": "atomic64_t", "_long": "atomic_long_t"}[w]
        u = t.replace("_t", "_unchecked_t")
        for base in bases:
            last = atomic_api.OPS[base].counter_last
            for name, typ in ((f"atomic{w}_{base}", t),
                              (f"atomic{w}_{base}_unchecked", u)):
                params = f"{ctype} i, {typ} *v" if last else f"{typ} *v, ..."
                lines.append(f"{ctype} {name}({params});")
    for name in sorted(set(convert.REFCOUNT_OPS.values()) |
                       set(refcount_contract.ADD_UNLESS.values()) |
                       set(refcount_contract.SHAPED.values()) - {""}):
        if name in ("refcount_add", "refcount_sub_and_test"):
            lines.append(f"int {name}(int i, refcount_t *r);")
        else:
            lines.append(f"int {name}(refcount_t *r, ...);")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def compiles(tmp: Path, name: str, text: str) -> subprocess.CompletedProcess[
        str]:
    src = tmp / name
    src.write_text(text, encoding="utf-8")
    return subprocess.run(
        ["gcc", "-fsyntax-only", "-Werror=incompatible-pointer-types",
         "-Werror=int-conversion", "-include", str(stub_header(
             tmp / "stub.h")), str(src)],
        capture_output=True, text=True, check=False)


def test_fixtures_compile_before_conversion(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for header in CONVERT_FIXTURES.glob("*.h"):
        (tmp_path / header.name).write_text(header.read_text())
    for path in sorted(CONVERT_FIXTURES.glob("*.c")):
        # the sub_*.c fixtures include "../shared.h", as they sit in
        # drivers/fx/sub/ of the fixture trees
        name = (f"sub/{path.name[4:]}" if path.name.startswith("sub_")
                else path.name)
        res = compiles(tmp_path, name, path.read_text())
        assert res.returncode == 0, res.stderr


def test_unchecked_converts_groups_and_compiles(tmp_path: Path) -> None:
    tree = fixture_tree(tmp_path / "tree", ["stats_group.c", "refs_map.c"])
    recs = records(tree)
    wt = tmp_path / "wt"
    summary = run(tree, recs, convert.unchecked_target(None), wt)
    [sec] = summary["sections"]
    assert sec["section"] == "FX DRIVER"
    assert sec["variables"] == [
        "drivers/fx/stats_group.c:fx_cv_next_id", "struct fx_cv_stats.bytes",
        "struct fx_cv_stats.rx", "struct fx_cv_stats.tx"]
    text = branch_text(wt, summary, "drivers/fx/stats_group.c")
    assert "static void fx_cv_bump(atomic_unchecked_t *v)" in text
    assert "static atomic_unchecked_t fx_cv_next_id = " \
           "ATOMIC_UNCHECKED_INIT(0);" in text
    assert "atomic64_add_unchecked(len, &s->bytes)" in text
    refs = branch_text(wt, summary, "drivers/fx/refs_map.c")
    assert "unchecked" not in refs
    res = compiles(tmp_path, "stats_group.c", text)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("final", ["refcount", "usage", "unknown"])
def test_checked_member_keeps_whole_group(tmp_path: Path,
                                          final: str) -> None:
    """A human's refcount/usage/unknown on tx keeps rx (its helper group
    partner, a statistic) unconverted too, and the helper untouched."""
    tree = fixture_tree(tmp_path / "tree", ["stats_group.c"])
    recs = copy.deepcopy(records(tree))
    for r in recs:
        if r["key"] == "struct fx_cv_stats.tx":
            r.update(final=final, source="human", reviewer="t",
                     reason="fixture")
    summary = run(tree, recs, convert.unchecked_target(None),
                  tmp_path / "wt")
    converted = {k for s in summary["sections"] for k in s["variables"]}
    assert "struct fx_cv_stats.rx" not in converted
    assert "struct fx_cv_stats.tx" not in converted
    assert "struct fx_cv_stats.bytes" in converted
    [blocked] = [b for b in summary["blocked"]
                 if "struct fx_cv_stats.rx" in b["keys"]]
    assert blocked["keys"] == ["struct fx_cv_stats.rx",
                               "struct fx_cv_stats.tx"]
    assert any(f"struct fx_cv_stats.tx is {final} (human" in r
               for r in blocked["reasons"])
    text = branch_text(tmp_path / "wt", summary, "drivers/fx/stats_group.c")
    assert "fx_cv_bump(atomic_t *v)" in text
    assert "atomic_t rx;" in text and "atomic_t tx;" in text
    assert compiles(tmp_path, "s.c", text).returncode == 0


def test_pointer_held_counters_convert_with_their_local_pointer(
        tmp_path: Path) -> None:
    """Counters allocated behind a pointer convert: the pointer's
    declaration, every operation (through an offset too) and the local
    pointer an operation reaches them through (as ip_idents_reserve()'s
    p_id); otherwise the result would not compile."""
    tree = fixture_tree(tmp_path / "tree", ["ptr_idents.c"])
    wt = tmp_path / "wt"
    summary = run(tree, records(tree), convert.unchecked_target(None), wt)
    assert summary["blocked"] == []
    [sec] = summary["sections"]
    assert sec["variables"] == ["drivers/fx/ptr_idents.c:fx_idents",
                                "struct fx_pi_dev.hits"]
    text = branch_text(wt, summary, "drivers/fx/ptr_idents.c")
    assert "static atomic_unchecked_t *fx_idents;" in text
    assert "\tatomic_unchecked_t *hits;" in text
    assert "\tatomic_unchecked_t *p_id;" in text
    assert "atomic_read_unchecked(d->hits + i)" in text
    res = compiles(tmp_path, "p.c", text)
    assert res.returncode == 0, res.stderr


def test_local_pointer_shared_with_a_checked_count_blocks(tmp_path: Path
                                                          ) -> None:
    """A local pointer aimed at an identifier and at a refcount cannot
    change type: the classifier leaves the identifier unknown (its one
    operation is ambiguous), and a human's "id" on it still converts
    nothing, since the shared site ties it to the refcount."""
    text = (CONVERT_FIXTURES / "ptr_idents.c").read_text()
    text = text.replace("static atomic_t *fx_idents;", "static atomic_t "
                        "*fx_idents;\nstatic atomic_t fx_users;").replace(
        "\treturn atomic_add_return(segs, p_id) - segs;",
        "\tif (!segs)\n\t\tp_id = &fx_users;\n"
        "\treturn atomic_add_return(segs, p_id) - segs;\n}\n\n"
        "void fx_pi_put(void *obj)\n{\n"
        "\tif (atomic_dec_and_test(&fx_users))\n\t\tkfree(obj);")
    tree = make_tree(tmp_path / "tree", {"MAINTAINERS": MAINTAINERS,
                                         "drivers/fx/ptr_idents.c": text})
    recs = copy.deepcopy(records(tree))
    by_key = {r["key"]: r for r in recs}
    assert by_key["drivers/fx/ptr_idents.c:fx_idents"]["verdict"] == \
        "unknown"
    assert by_key["drivers/fx/ptr_idents.c:fx_users"]["verdict"] == \
        "refcount"
    by_key["drivers/fx/ptr_idents.c:fx_idents"].update(
        final="id", source="human", reviewer="t", reason="fixture")
    summary = run(tree, recs, convert.unchecked_target(None),
                  tmp_path / "wt")
    converted = {k for s in summary["sections"] for k in s["variables"]}
    assert converted == {"struct fx_pi_dev.hits"}
    [blocked] = summary["blocked"]
    assert blocked["keys"] == ["drivers/fx/ptr_idents.c:fx_idents",
                               "drivers/fx/ptr_idents.c:fx_users"]


def test_wrap_by_design_refcount_converts_with_reason(tmp_path: Path
                                                      ) -> None:
    tree = fixture_tree(tmp_path / "tree", ["refs_map.c"])
    recs = copy.deepcopy(records(tree))
    for r in recs:
        if r["key"] == "struct fx_rm_obj.refs":
            r.update(wrap_by_design=True,
                     wrap_evidence=["adds a bias at refs_map.c:1"])
    wt = tmp_path / "wt"
    summary = run(tree, recs, convert.unchecked_target(None), wt)
    [sec] = summary["sections"]
    assert sec["variables"] == ["struct fx_rm_obj.refs"]
    msg = split.git(wt, "log", "-1", "--format=%B", sec["commit"])
    assert "wraps by design (rule verdict refcount)" in msg
    assert "adds a bias at refs_map.c:1" in msg
    assert "Signed-off-by: Test Submitter <submitter@example.org>" in msg


def test_refcount_target_lists_blocking_op(tmp_path: Path) -> None:
    tree = fixture_tree(tmp_path / "tree", ["refs_map.c", "stats_group.c"])
    wt = tmp_path / "wt"
    summary = run(tree, records(tree), convert.REFCOUNT_TARGET, wt)
    [sec] = summary["sections"]
    assert sec["variables"] == ["struct fx_rm_obj.refs"]
    text = branch_text(wt, summary, "drivers/fx/refs_map.c")
    assert "refcount_t refs;" in text
    assert "if (refcount_dec_and_test(&o->refs))" in text
    assert "refcount_set(&o->refs, 1);" in text
    assert "atomic_inc_return(&p->users)" in text
    [blocked] = summary["blocked"]
    assert blocked["keys"] == ["struct fx_rm_pool.users"]
    assert any(r.startswith("atomic_inc_return at drivers/fx/refs_map.c:36"
                            " has no refcount_t") for r in blocked["reasons"])
    assert compiles(tmp_path, "r.c", text).returncode == 0


def test_regeneration_is_byte_identical(tmp_path: Path) -> None:
    tree = fixture_tree(tmp_path / "tree", ["stats_group.c"])
    recs = records(tree)
    outs = []
    for i in range(2):
        wt = tmp_path / f"wt{i}"
        run(tree, recs, convert.unchecked_target(None), wt)
        out = tmp_path / f"out{i}"
        series.write_all(wt, out)
        outs.append({p.relative_to(out).as_posix(): p.read_bytes()
                     for p in sorted(out.rglob("*"))
                     if p.is_file() and p.name != "series.json"})
    assert outs[0] == outs[1]
    index = json.loads(outs[0]["index.json"])
    assert [s["slug"] for s in index] == ["fx-driver"]
    assert index[0]["to"] == [] or all("@" in a for a in index[0]["to"])
    cover = outs[0]["fx-driver/0000-cover-letter.patch"].decode()
    assert "*** SUBJECT HERE ***" not in cover
    assert "*** BLURB HERE ***" not in cover


def test_most_specific_section_owns(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "t", {"MAINTAINERS": MAINTAINERS,
                                      "drivers/fx/sub/a.c": "",
                                      "drivers/fx/b.c": "", "kernel/c.c": ""})
    owners = maintainers.Owners(tree)
    assert owners.owner("drivers/fx/sub/a.c").name == "FX SUBDRIVER"
    assert owners.owner("drivers/fx/b.c").name == "FX DRIVER"
    assert owners.owner("kernel/c.c").name == "THE REST"
    assert maintainers.slug("NFS, SUNRPC, AND LOCKD CLIENTS") == \
        "nfs-sunrpc-and-lockd-clients"
    assert maintainers.subject_prefix(tree, ["drivers/scsi/lpfc/lpfc_init.c"]
                                      ) == "scsi: lpfc: "
    assert maintainers.subject_prefix(tree, ["net/sunrpc/xprt.c"]) == \
        "net: sunrpc: "


def test_bad_verdict_file_is_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "v.jsonl"
    bad.write_text('{"key": "x", "verdict": "id"}\nnot json\n')
    res = subprocess.run([str(Path(__file__).parent.parent / "bin" /
                               "refsweep"), "convert", "--tree",
                          str(tmp_path), "--verdicts", str(bad)],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 1
    assert res.stderr.strip() == \
        f"refsweep: error: {bad}:2: not JSON: Expecting value"


def run_two_sections(tmp_path: Path, sub_fixture: str
                     ) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """Convert shared.h and shared.c (FX DRIVER) with SUB_FIXTURE as
    drivers/fx/sub/<name without "sub_"> (FX SUBDRIVER), which includes
    "../shared.h": (worktree, summary, sections by name)."""
    files = {f"drivers/fx/{n}": (CONVERT_FIXTURES / n).read_text()
             for n in ("shared.h", "shared.c")}
    files[f"drivers/fx/sub/{sub_fixture[4:]}"] = (
        CONVERT_FIXTURES / sub_fixture).read_text()
    files["MAINTAINERS"] = MAINTAINERS
    tree = make_tree(tmp_path / "tree", files)
    wt = tmp_path / "wt"
    summary = run(tree, records(tree), convert.unchecked_target(None), wt)
    return wt, summary, {s["section"]: s for s in summary["sections"]}


def test_file_shared_by_two_sections(tmp_path: Path) -> None:
    """Each section's commit changes only its own lines of a file both
    touch; the whole-churn branch has both."""
    wt, summary, by_name = run_two_sections(tmp_path, "sub_user.c")
    assert by_name["FX DRIVER"]["variables"] == ["struct fx_sh_stats.hits"]
    assert by_name["FX SUBDRIVER"]["variables"] == [
        "drivers/fx/sub/user.c:fx_sub_events"]
    assert by_name["FX DRIVER"]["cross_section_files"] == [
        "drivers/fx/sub/user.c"]
    drv = split.git(wt, "show", by_name["FX DRIVER"]["commit"])
    sub = split.git(wt, "show", by_name["FX SUBDRIVER"]["commit"])
    def changed(show: str) -> str:
        return "\n".join(ln for ln in show.splitlines()
                         if ln.startswith(("+\t", "-\t", "+static",
                                           "-static")))

    assert "+\tatomic_inc_unchecked(&s->hits);" in changed(drv)
    assert "fx_sub_events" not in changed(drv)
    assert "+\tatomic_inc_unchecked(&fx_sub_events);" in changed(sub)
    assert "hits" not in changed(sub)
    assert summary["all_branch"]["differs"] == []
    both = branch_text(wt, summary, "drivers/fx/sub/user.c")
    assert "atomic_inc_unchecked(&s->hits)" in both
    assert "static atomic_unchecked_t fx_sub_events;" in both
    (tmp_path / "c" / "sub").mkdir(parents=True)
    (tmp_path / "c" / "shared.h").write_text(
        branch_text(wt, summary, "drivers/fx/shared.h"))
    res = compiles(tmp_path / "c", "sub/user.c", both)
    assert res.returncode == 0, res.stderr


def test_local_pointer_converts_in_its_sections_pass(tmp_path: Path
                                                    ) -> None:
    """A file two sections touch is rewritten once per section, each pass
    limited to that section's variables; the local pointer through which
    one section's buckets are reached belongs to that pass (7.2: route.c's
    "atomic_t *p_id" stayed when struct netns_ipv4.rt_genid, of another
    section, was converted in the same file: the churn did not compile)."""
    wt, summary, by_name = run_two_sections(tmp_path, "sub_idents.c")
    assert by_name["FX SUBDRIVER"]["variables"] == [
        "drivers/fx/sub/idents.c:fx_sub_idents"]
    assert by_name["FX DRIVER"]["cross_section_files"] == [
        "drivers/fx/sub/idents.c"]
    sub = split.git(wt, "show", by_name["FX SUBDRIVER"]["commit"])
    assert "+\tatomic_unchecked_t *p_id;" in sub
    assert summary["all_branch"]["differs"] == []
    both = branch_text(wt, summary, "drivers/fx/sub/idents.c")
    (tmp_path / "c" / "sub").mkdir(parents=True)
    (tmp_path / "c" / "shared.h").write_text(
        branch_text(wt, summary, "drivers/fx/shared.h"))
    res = compiles(tmp_path / "c", "sub/idents.c", both)
    assert res.returncode == 0, res.stderr


def test_group_spatch_cannot_rewrite_is_undone(tmp_path: Path) -> None:
    """A declarator list is not rewritten: its variables' operations are
    undone in a second round, the neighbour converts, the result compiles."""
    tree = fixture_tree(tmp_path / "tree", ["decl_list.c"])
    wt = tmp_path / "wt"
    summary = run(tree, records(tree), convert.unchecked_target(None), wt)
    [sec] = summary["sections"]
    assert sec["variables"] == ["drivers/fx/decl_list.c:fx_dl_events"]
    blocked = {k for b in summary["blocked"] for k in b["keys"]}
    assert blocked == {"drivers/fx/decl_list.c:fx_dl_rx",
                       "drivers/fx/decl_list.c:fx_dl_tx"}
    assert all("was not rewritten" in b["reasons"][0]
               for b in summary["blocked"])
    text = branch_text(wt, summary, "drivers/fx/decl_list.c")
    assert "atomic_inc(&fx_dl_rx);" in text
    assert "atomic_inc_unchecked(&fx_dl_events);" in text
    assert compiles(tmp_path, "d.c", text).returncode == 0


def test_member_of_a_struct_with_a_trailing_attribute_converts(
        tmp_path: Path) -> None:
    """"} __randomize_layout;" (struct net's ending) does not hide the
    struct's members from the declaration rules."""
    tree = fixture_tree(tmp_path / "tree", ["attr_struct.c"])
    wt = tmp_path / "wt"
    summary = run(tree, records(tree), convert.unchecked_target(None), wt)
    assert summary["blocked"] == []
    [sec] = summary["sections"]
    assert sec["variables"] == ["struct fx_at_ns.drops"]
    text = branch_text(wt, summary, "drivers/fx/attr_struct.c")
    assert "\tatomic_unchecked_t drops;\n} __randomize_layout;" in text
    assert compiles(tmp_path, "a.c", text).returncode == 0


def test_spatch_timeout_names_the_file_and_blocks_its_groups(
        tmp_path: Path) -> None:
    """A file spatch times out on is named with spatch's own exception
    (it runs --very-quiet, so only its "EXN:" lines say which file), and
    the group declared there stays unconverted; the other file of the
    same spatch run converts."""
    stats = ("\nstatic atomic_t fx_slow_ids;\n\n"
             "int fx_slow_new_id(void)\n{\n"
             "\treturn atomic_inc_return(&fx_slow_ids);\n}\n")
    tree = make_tree(tmp_path / "tree", {
        "drivers/fx/stats_group.c":
            (CONVERT_FIXTURES / "stats_group.c").read_text(),
        "drivers/fx/zz_slow.c": slow_source(functions=30) + stats,
        "MAINTAINERS": MAINTAINERS})
    recs = records(tree)
    assert {r["key"]: r["verdict"] for r in recs}[
        "drivers/fx/zz_slow.c:fx_slow_ids"] == "id"
    summary = split.run(tree, tmp_path / "wt", recs,
                        convert.unchecked_target(None), None, 1,
                        "refsweep convert --tree fx", log=lambda _s: None,
                        timeout=1)
    [blocked] = [b for b in summary["blocked"]
                 if "drivers/fx/zz_slow.c:fx_slow_ids" in b["keys"]]
    # spatch's timer may go off while a Python rule of convert.cocci runs
    # (the operation rule calls one per position constraint): spatch then
    # names the Python failure instead of its Timeout.
    assert any(r.startswith("spatch failed on drivers/fx/zz_slow.c: ")
               and ("Timeout" in r or "Python failure" in r)
               for r in blocked["reasons"]), blocked
    converted = {k for sec in summary["sections"] for k in sec["variables"]}
    assert "drivers/fx/stats_group.c:fx_cv_next_id" in converted


def test_series_out_relative_to_the_caller(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    """A relative --out is the caller's directory, not the worktree's
    (git format-patch runs in the worktree)."""
    tree = fixture_tree(tmp_path / "tree", ["stats_group.c"])
    wt = tmp_path / "wt"
    run(tree, records(tree), convert.unchecked_target(None), wt)
    monkeypatch.chdir(tmp_path)
    index = series.write_all(wt, Path("out"))
    patches = sorted((tmp_path / "out" / "fx-driver").glob("*.patch"))
    assert [p.name for p in patches] == index[0]["patches"]
    assert len(patches) == 2
    assert not (wt / "out").exists()


def test_op_inside_a_shared_macro_blocks_with_the_macro_named(
        tmp_path: Path) -> None:
    tree = fixture_tree(tmp_path / "tree", ["macro_stats.c"])
    wt = tmp_path / "wt"
    recs = records(tree)
    assert {r["key"]: r["verdict"] for r in recs} == {
        "struct fx_ms_tcon.num_reads": "statistic",
        "struct fx_ms_tcon.bytes": "statistic"}
    summary = run(tree, recs, convert.unchecked_target(None), wt)
    [sec] = summary["sections"]
    assert sec["variables"] == ["struct fx_ms_tcon.bytes"]
    [blocked] = summary["blocked"]
    assert blocked["keys"] == ["struct fx_ms_tcon.num_reads"]
    assert blocked["reasons"] == [
        "atomic_inc at drivers/fx/macro_stats.c:20: inside macro "
        "fx_ms_stats_inc(), used for other counters too"]
    text = branch_text(wt, summary, "drivers/fx/macro_stats.c")
    assert "atomic_t num_reads;" in text
    assert "atomic_unchecked_t bytes;" in text
    assert compiles(tmp_path, "m.c", text).returncode == 0


def test_extern_declaration_converts_with_its_definition(
        tmp_path: Path) -> None:
    files = {f"drivers/fx/{n}": (CONVERT_FIXTURES / n).read_text()
             for n in ("extern_id.h", "extern_id.c")}
    files["MAINTAINERS"] = MAINTAINERS
    tree = make_tree(tmp_path / "tree", files)
    recs = records(tree)
    [rec] = recs
    assert rec["key"] == "drivers/fx/extern_id.c:fx_ei_last_ctx_id"
    assert rec["verdict"] == "id"
    assert rec["also_declared"] == ["drivers/fx/extern_id.h:7"]
    wt = tmp_path / "wt"
    summary = run(tree, recs, convert.unchecked_target(None), wt)
    assert summary["blocked"] == []
    header = branch_text(wt, summary, "drivers/fx/extern_id.h")
    assert "extern atomic64_unchecked_t fx_ei_last_ctx_id;" in header
    assert "atomic64_inc_return_unchecked(&fx_ei_last_ctx_id)" in header
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "extern_id.h").write_text(header)
    res = compiles(tmp_path / "c", "extern_id.c",
                   branch_text(wt, summary, "drivers/fx/extern_id.c"))
    assert res.returncode == 0, res.stderr


def test_refcount_maps_ops_by_the_use_of_their_result(tmp_path: Path
                                                      ) -> None:
    """atomic_dec_return() == 0 (and 0 == ...), !atomic_dec_return(),
    a bare atomic_dec_return() condition, != 0 (and 0 != ...),
    atomic_sub_return() == 0 and
    atomic_add_unless(v, 1, 0) / (v, -1, 1) become the refcount_t
    operation that returns what the code tests; the result is
    tests/fixtures/convert/rc_map_ops.c.expected and compiles."""
    tree = fixture_tree(tmp_path / "tree", ["rc_map_ops.c"])
    recs = records(tree)
    assert {r["key"]: r["verdict"] for r in recs} == {
        f"struct fx_rmo_obj.{m}": "refcount" for m in (
            "dr_zero", "dr_not", "dr_nonzero", "dr_zero_rev", "dr_ne",
            "dr_ne_rev", "sr_zero", "au_get", "au_put")}
    wt = tmp_path / "wt"
    summary = run(tree, recs, convert.REFCOUNT_TARGET, wt)
    assert summary["blocked"] == []
    [sec] = summary["sections"]
    assert len(sec["variables"]) == 9
    text = branch_text(wt, summary, "drivers/fx/rc_map_ops.c")
    assert text == (CONVERT_FIXTURES / "rc_map_ops.c.expected").read_text()
    res = compiles(tmp_path, "m.c", text)
    assert res.returncode == 0, res.stderr


def test_refcount_contract_refusals(tmp_path: Path) -> None:
    """Counters that count from 0 (set to 0, ATOMIC_INIT(0), kzalloc()ed
    and then taken) or that a plain decrement may take to 0 stay atomic_t,
    each with its reason; a plain decrement that gives back the increment
    (or the inc_not_zero) before it in the same block converts."""
    tree = fixture_tree(tmp_path / "tree", ["rc_contract.c"])
    recs = records(tree)
    assert {r["key"]: r["verdict"] for r in recs} == {
        "struct fx_rcc_css.online_cnt": "refcount",
        "drivers/fx/rc_contract.c:fx_rcc_users": "refcount",
        "struct fx_rcc_inode.opencnt": "refcount",
        "struct fx_rcc_req.refs": "refcount",
        "struct fx_rcc_ctx.pending": "refcount",
        "struct fx_rcc_sb.active": "refcount",
        "struct fx_rcc_xd.refcnt": "refcount",
        "struct fx_rcc_node.refcnt": "refcount"}
    wt = tmp_path / "wt"
    summary = run(tree, recs, convert.REFCOUNT_TARGET, wt)
    [sec] = summary["sections"]
    assert sec["variables"] == ["struct fx_rcc_ctx.pending",
                                "struct fx_rcc_sb.active"]
    why = {b["keys"][0]: b["reasons"] for b in summary["blocked"]}
    f = "drivers/fx/rc_contract.c"
    assert why["struct fx_rcc_css.online_cnt"] == [
        f"struct fx_rcc_css.online_cnt starts at or is set to 0 "
        f"(atomic_set() in fx_rcc_css_init at {f}:16): refcount_inc() on "
        "0 WARNs (addition on 0)"]
    assert why[f"{f}:fx_rcc_users"] == [
        f"{f}:fx_rcc_users starts at or is set to 0 (ATOMIC_INIT() at "
        f"{f}:31): refcount_inc() on 0 WARNs (addition on 0)"]
    assert why["struct fx_rcc_inode.opencnt"] == [
        "struct fx_rcc_inode.opencnt has no initial value in sight (no "
        "ATOMIC_INIT(), no atomic_set(); zeroed memory counts as 0)",
        f"atomic_inc at {f}:55 takes struct fx_rcc_inode.opencnt right "
        "after a zeroing allocation (i = kzalloc(... at "
        f"{f}:51) with no set in between: refcount_inc() would add on 0"]
    assert why["struct fx_rcc_req.refs"] == [
        f"atomic_dec at {f}:82 (fx_rcc_req_drop): plain decrement of "
        "struct fx_rcc_req.refs not shown to stay above 0 (no increment "
        "of it earlier in the same block): refcount_dec() to 0 WARNs"]
    assert why["struct fx_rcc_xd.refcnt"] == [
        "struct fx_rcc_xd.refcnt: struct fx_rcc_xd comes from "
        f"fx_rcc_xd_scan() (allocated at {f}:158) at {f}:165 "
        "(fx_rcc_xd_link) and the counter is not set there: it starts at 0 "
        "or at garbage"]
    assert why["struct fx_rcc_node.refcnt"] == [
        f"atomic_dec_and_test at {f}:197 (fx_rcc_node_put): struct "
        "fx_rcc_node.refcnt reaching 0 there neither frees nor releases on "
        "every path (its zero branch frees or releases only on some paths, "
        "or not at all): it may be taken again from 0"]
    text = branch_text(wt, summary, f)
    assert "\trefcount_t pending;" in text
    assert "\t\trefcount_dec(&c->pending);" in text
    assert "atomic_t online_cnt;" in text and "atomic_t opencnt;" in text
    msg = " ".join(split.git(wt, "log", "-1", "--format=%B",
                             sec["commit"]).split())
    assert f"starts at 1: atomic_set() in fx_rcc_ctx_init at {f}:98" in msg
    assert f"atomic_dec at {f}:105 (fx_rcc_ctx_submit) gives back " \
        f"atomic_inc at {f}:103" in msg
    assert f"last put: atomic_dec_and_test at {f}:113 (fx_rcc_ctx_put): " \
        "reaching 0 there calls kfree()" in msg
    assert f"atomic_dec at {f}:132 (fx_rcc_sb_try) gives back " \
        f"atomic_inc_not_zero at {f}:129" in msg
    assert "\t\trefcount_dec(&s->active);" in text
    assert compiles(tmp_path, "c.c", text).returncode == 0


def test_refcount_designated_initializers_by_their_type(tmp_path: Path
                                                         ) -> None:
    """A converted member's designated initializers (a static object's, a
    compound literal's) become REFCOUNT_INIT(); those of another struct's
    member of the same name, which counts from 0 and stays atomic_t, keep
    ATOMIC_INIT(): the type the initializer is of decides."""
    tree = fixture_tree(tmp_path / "tree", ["rc_inits.c"])
    recs = records(tree)
    assert {r["key"]: r["verdict"] for r in recs} == {
        "struct fx_rci_obj.refs": "refcount",
        "struct fx_rci_use.refs": "refcount"}
    wt = tmp_path / "wt"
    summary = run(tree, recs, convert.REFCOUNT_TARGET, wt)
    [sec] = summary["sections"]
    assert sec["variables"] == ["struct fx_rci_obj.refs"]
    f = "drivers/fx/rc_inits.c"
    assert [b["keys"] for b in summary["blocked"]] == [
        ["struct fx_rci_use.refs"]]
    assert summary["blocked"][0]["reasons"][0].startswith(
        "struct fx_rci_use.refs starts at or is set to 0 (designated "
        f"ATOMIC_INIT() at {f}:22)")
    text = branch_text(wt, summary, f)
    assert "static struct fx_rci_obj fx_rci_root = { .data = 1, .refs = " \
        "REFCOUNT_INIT(1) };" in text
    assert "*o = (struct fx_rci_obj){ .refs = REFCOUNT_INIT(1), " \
        ".data = data };" in text
    assert "static struct fx_rci_use fx_rci_users = { .refs = " \
        "ATOMIC_INIT(0), .data = 1 };" in text
    assert "*u = (struct fx_rci_use){ .refs = ATOMIC_INIT(0), " \
        ".data = 0 };" in text
    assert "\trefcount_t refs;" in text and "\tatomic_t refs;" in text
    assert compiles(tmp_path, "c.c", text).returncode == 0
