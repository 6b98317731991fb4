# SPDX-License-Identifier: GPL-2.0-only
#
# refsweep: PaX-style refcount overflow protection for the current kernel.
#
#   make run     the main job: install, prepare the newest Linux, scan,
#                classify
#   make test    install, then every test (mypy, pytest, core-patch KUnit)
#   make bench   correctness and speed benchmarks (long)

PYTHON   := /usr/bin/python3
REFSWEEP := bin/refsweep
JOBS     ?= $(shell nproc)
WORK     ?= $(or $(REFSWEEP_WORK),work)
# bin/refsweep and the benchmarks find the work directory through this.
export REFSWEEP_WORK := $(abspath $(WORK))
TREE     ?= $(WORK)/trees/linux-6.12
# core-patch: the series for the newest tree are primary, 6.12 is the LTS
# backport; the single-tree core-* targets take CORE_TREE (default: the
# newest tree, printed by "refsweep tree next").
CORE_TREE ?= $$($(REFSWEEP) tree next)
CORE_LTS  ?= $$($(REFSWEEP) tree 6.12)

.PHONY: all run setup tree test pytest mypy core-test bench \
	bench-verdicts bench-deconverted bench-labelled bench-upstream \
	bench-speed core-bench \
	core-test-x86_64 core-build-x86_64 core-lkdtm-x86_64 core-bloat-x86_64 \
	core-cross core-build-cross \
	core-prove-tests core-prove-lkdtm core-sanitize-mutate core-test-next core-test-lts \
	test-check-kernel \
	core-workload core-workload-churn core-workload-short clean

all: run

setup:
	$(REFSWEEP) setup

run: setup
	$(REFSWEEP) run --no-setup --jobs $(JOBS)

tree: setup
	$(REFSWEEP) tree 6.12

# The Python suites (with tests/test_check_kernel.py: convert, series and
# check of one small real subsystem, an x86_64 defconfig build), both
# kernel series' KUnit suites on the LTS tree under UML, then the short
# core-patch workload on the newest tree: an SMP x86_64 kernel under qemu
# whose boot runs the same suites (atomic_overflow, atomic_wrap_by_design,
# slab_sanitize) before its workload, so the newest tree's suites run in
# CI without a UML build of their own ("make core-test" adds it).
# "make test-check-kernel" runs the end-to-end check alone.
test: setup
	$(MAKE) mypy pytest core-test-lts core-workload-short

pytest:
	$(PYTHON) -m pytest -q tests

test-check-kernel: setup
	$(PYTHON) -m pytest -q tests/test_check_kernel.py

mypy:
	mypy --python-executable $(PYTHON) --strict --ignore-missing-imports \
		refsweep bench/verdicts.py bench/labelled.py bench/carryover.py \
		bench/upstream_refcounts.py bench/sample_atomics.py \
		bench/refcount_contract.py \
		core-patch/workload/summarize

# Both series (atomic, sanitize) on both trees: one UML build per tree.
core-test: core-test-next core-test-lts

core-test-lts: setup
	core-patch/run-tests "$(CORE_LTS)"

core-test-next: setup
	core-patch/run-tests "$(CORE_TREE)"

# Every benchmark in one run: the two hand-labelled samples, the
# de-converted refcount_t, upstream's own refcount_t decisions, speed.
# Outputs are kept in bench/results/ (see bench/RESULTS.rst).
VERDICTS ?= $(WORK)/verdicts/linux-6.12.jsonl
RESULTS  := bench/results

bench: bench-labelled bench-deconverted bench-upstream bench-speed

bench-verdicts: tree
	$(REFSWEEP) classify --tree $(TREE) --jobs $(JOBS) --json $(VERDICTS)

bench-labelled: bench-verdicts
	$(PYTHON) bench/labelled.py --labels bench/labels.tsv $(VERDICTS) \
		| tee $(RESULTS)/labelled.txt
	$(PYTHON) bench/labelled.py --labels bench/labels-2.tsv $(VERDICTS) \
		| tee $(RESULTS)/labelled-2.txt

bench-deconverted: tree
	$(PYTHON) bench/deconverted.py --tree $(TREE) --jobs $(JOBS) \
		| tee $(RESULTS)/deconverted.txt

bench-upstream: bench-verdicts
	$(PYTHON) bench/upstream_refcounts.py --old $(TREE) \
		--new "$$($(REFSWEEP) tree next | tail -n 1)" \
		--list $(RESULTS)/upstream-refcounts.tsv $(VERDICTS) \
		| tee $(RESULTS)/upstream.txt

bench-speed: tree
	bench/speed.sh $(TREE)

clean:
	rm -rf $(WORK)/cache $(WORK)/scans $(WORK)/verdicts $(WORK)/tmp

core-bench: setup
	MIN_TESTS=1 core-patch/run-tests "$(CORE_TREE)" \
		core-patch/kunitconfig/atomic-bench.kunitconfig \
		core-patch/kunitconfig/sanitize-bench.kunitconfig

# The KUnit suites and benchmarks in an SMP x86-64 kernel under qemu, with
# KFENCE; the full x86_64 defconfig build, to run whenever the series
# changes; LKDTM from a user shell in that kernel.  Both too slow or too
# machine-dependent for every CI run; results go in core-patch/README.rst.
core-test-x86_64: setup
	KUNIT_ARCH=x86_64 core-patch/run-tests "$(CORE_TREE)" \
		core-patch/kunitconfig/atomic.kunitconfig \
		core-patch/kunitconfig/sanitize.kunitconfig \
		core-patch/kunitconfig/atomic-bench.kunitconfig \
		core-patch/kunitconfig/sanitize-bench.kunitconfig \
		core-patch/kunitconfig/x86_64.kunitconfig

core-build-x86_64: setup
	core-patch/build-x86_64 "$(CORE_TREE)"

# Beyond x86-64, with Debian's cross compilers and qemu: the KUnit suites
# of both series and the atomics benchmark in an SMP kernel under qemu for
# each of CROSS_ARCHS (arm64, riscv and i386 take the generic
# compare-and-exchange implementation; x86_64 its fast path), then
# defconfig + CONFIG_HARDENED_ATOMIC=y of each, the whole kernel, with the
# warnings the series adds (none allowed) and bloat-o-meter against the
# option off.  Hours on 2 cores, too slow for CI; results go in
# core-patch/README.rst.
CROSS_ARCHS ?= x86_64 arm64 i386 riscv
core-cross: setup
	@status=0; for a in $(CROSS_ARCHS); do \
		KUNIT_ARCH=$$a core-patch/run-tests "$(CORE_TREE)" \
			core-patch/kunitconfig/atomic.kunitconfig \
			core-patch/kunitconfig/atomic-7.2.kunitconfig \
			core-patch/kunitconfig/sanitize.kunitconfig \
			core-patch/kunitconfig/atomic-bench.kunitconfig || \
			status=1; \
	done; exit $$status

core-build-cross: setup
	@status=0; for a in $(CROSS_ARCHS); do \
		BLOAT=1 nice core-patch/build-arch $$a "$(CORE_TREE)" || \
			status=1; \
	done; exit $$status

core-lkdtm-x86_64: setup
	core-patch/lkdtm-x86_64 "$(CORE_TREE)"

# Each KUnit case revision 3 added fails with its feature reverted (one
# UML build, then incremental rebuilds).
core-prove-tests: setup
	core-patch/prove-tests "$(CORE_TREE)"

# The LKDTM atomic crash types fail under each mutant of
# core-patch/atomic/mutants/ and pass intact (the workload kernel, lkdtm
# phase only: one x86_64 build, then incremental rebuilds).
core-prove-lkdtm: setup
	core-patch/prove-lkdtm "$(CORE_TREE)"

# Each slab_sanitize case fails under a mutant of the sanitize series
# (one UML build, then one incremental rebuild per mutant).
core-sanitize-mutate: setup
	core-patch/sanitize/mutate "$(CORE_TREE)"

# Code size with and without CONFIG_HARDENED_ATOMIC (two defconfig builds).
core-bloat-x86_64: setup
	nice core-patch/bloat-x86_64 "$(CORE_TREE)"

# A kernel with the series, CONFIG_HARDENED_ATOMIC=y (hardened_atomic=warn)
# and slab sanitization, booted under qemu (x86-64, 2 CPUs) with a userland
# workload; counts overflow reports, hangs and oopses.  core-workload: 10
# minutes of workload on the newest tree and on 6.12 (a build each);
# core-workload-short (in `make test`): one round of every phase, 5 s
# each, on CORE_TREE, with only the series' own KUnit suites built in
# (a smaller build; `make core-test` runs them under UML too).
# WORKLOAD_ARGS passes more options (--series DIR, --extra DIR,
# --duration S, ...: core-patch/workload/run).
WORKLOAD_ARGS ?=
core-workload: setup
	@status=0; for t in "$(CORE_TREE)" "$(CORE_LTS)"; do \
		core-patch/workload/run --duration 600 $(WORKLOAD_ARGS) "$$t" || \
			status=1; \
	done; exit $$status

# The newest tree's kernel with the whole churn of "refsweep convert"
# (CHURN_SERIES, outputs of "refsweep series": the atomic_unchecked_t
# churn, then the refcount_t one stacked on it) applied on the core
# series: 600 s of workload; no overflow report may be new, no refcount_t
# may warn.
CHURN_SERIES ?= $(WORK)/series/7.2-unchecked $(WORK)/series/7.2-refcount
core-workload-churn: setup
	core-patch/workload-churn/whole-churn $(CHURN_SERIES) \
		"$(WORK)/core-patch/whole-churn"
	core-patch/workload/run --duration 600 --no-churn \
		--extra "$(WORK)/core-patch/whole-churn" $(WORKLOAD_ARGS) \
		"$(CORE_TREE)"

core-workload-short: setup
	core-patch/workload/run --duration 1 --slice 5 --grace 60 \
		--suites own $(WORKLOAD_ARGS) "$(CORE_TREE)"
