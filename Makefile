# SPDX-License-Identifier: GPL-2.0-only
#
# refsweep: PaX-style refcount overflow protection for the current kernel.
#
#   make run     the main job: install, prepare Linux 6.12, scan, classify
#   make test    install, then every test (pytest, mypy, core-patch KUnit)
#   make bench   correctness and speed benchmarks (long)

PYTHON   := /usr/bin/python3
REFSWEEP := bin/refsweep
JOBS     ?= $(shell nproc)
WORK     ?= work
TREE     ?= $(WORK)/trees/linux-6.12
# core-patch: the series for the newest tree are primary, 6.12 is the LTS
# backport; the single-tree core-* targets take CORE_TREE (default: the
# newest tree, printed by "refsweep tree next").
CORE_TREE ?= $$($(REFSWEEP) tree next)
CORE_LTS  ?= $$($(REFSWEEP) tree 6.12)

.PHONY: all run setup tree test pytest mypy core-test bench \
	bench-deconverted bench-labelled bench-speed core-bench \
	core-test-x86_64 core-build-x86_64 core-lkdtm-x86_64 core-bloat-x86_64 \
	core-prove-tests core-sanitize-mutate clean

all: run

setup:
	$(REFSWEEP) setup

run: setup
	$(REFSWEEP) run --no-setup --jobs $(JOBS)

tree: setup
	$(REFSWEEP) tree 6.12

test: setup
	$(MAKE) core-test mypy pytest

pytest:
	$(PYTHON) -m pytest -q tests

mypy:
	mypy --python-executable $(PYTHON) --strict --ignore-missing-imports \
		refsweep bench/verdicts.py bench/labelled.py

# Both series (atomic, sanitize) on both trees: one UML build per tree.
core-test: setup
	core-patch/run-tests "$(CORE_TREE)"
	core-patch/run-tests "$(CORE_LTS)"

bench: bench-deconverted bench-labelled bench-speed

bench-deconverted: tree
	$(PYTHON) bench/deconverted.py --tree $(TREE) --jobs $(JOBS)

bench-labelled: tree
	$(REFSWEEP) classify --tree $(TREE) --jobs $(JOBS) \
		--json $(WORK)/verdicts/linux-6.12.jsonl
	$(PYTHON) bench/labelled.py $(WORK)/verdicts/linux-6.12.jsonl

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

core-lkdtm-x86_64: setup
	core-patch/lkdtm-x86_64 "$(CORE_TREE)"

# Each KUnit case revision 3 added fails with its feature reverted (one
# UML build, then incremental rebuilds).
core-prove-tests: setup
	core-patch/prove-tests "$(CORE_TREE)"

# Each slab_sanitize case fails under a mutant of the sanitize series
# (one UML build, then one incremental rebuild per mutant).
core-sanitize-mutate: setup
	core-patch/sanitize/mutate "$(CORE_TREE)"

# Code size with and without CONFIG_HARDENED_ATOMIC (two defconfig builds).
core-bloat-x86_64: setup
	nice core-patch/bloat-x86_64 "$(CORE_TREE)"
