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

.PHONY: all run setup tree test pytest mypy core-test bench \
	bench-deconverted bench-labelled bench-speed core-bench \
	core-test-x86_64 core-build-x86_64 core-lkdtm-x86_64 clean

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
		refsweep bench/verdicts.py bench/labelled.py bench/carryover.py

core-test: tree
	core-patch/run-tests $(TREE)

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

core-bench: tree
	MIN_TESTS=1 core-patch/run-tests $(TREE) \
		core-patch/kunitconfig/atomic-bench.kunitconfig \
		core-patch/kunitconfig/sanitize-bench.kunitconfig

# The KUnit suites and benchmarks in an SMP x86-64 kernel under qemu, with
# KFENCE; the full x86_64 defconfig build, to run whenever the series
# changes; LKDTM from a user shell in that kernel.  Both too slow or too
# machine-dependent for every CI run; results go in core-patch/README.rst.
core-test-x86_64: tree
	KUNIT_ARCH=x86_64 core-patch/run-tests $(TREE) \
		core-patch/kunitconfig/atomic.kunitconfig \
		core-patch/kunitconfig/sanitize.kunitconfig \
		core-patch/kunitconfig/atomic-bench.kunitconfig \
		core-patch/kunitconfig/sanitize-bench.kunitconfig \
		core-patch/kunitconfig/x86_64.kunitconfig

core-build-x86_64: tree
	core-patch/build-x86_64 $(TREE)

core-lkdtm-x86_64:
	core-patch/lkdtm-x86_64
