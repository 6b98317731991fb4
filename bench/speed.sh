#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Speed benchmark: cold whole-tree scan+classify, a re-run after changing
# 10 files, and the kernel's own atomic_as_refcounter.cocci under
# "make coccicheck" on the same tree, for scale.
#
#   bench/speed.sh TREE [JOBS]
set -eu
tree=$(cd "$1" && pwd)
jobs=${2:-$(nproc)}
top=$(cd "$(dirname "$0")/.." && pwd)
work=${REFSWEEP_WORK:-$top/work}
out=$work/bench/speed
mkdir -p "$out"
export REFSWEEP_WORK="$work/bench/speed-work"
rm -rf "$REFSWEEP_WORK"

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
# Each refsweep run also records its CPU seconds (user + system, children
# included), so that a run on a loaded machine still says what it costs.

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tree: $tree ($(git -C "$tree" log -1 --format=%s))"

l0=$(load)
t0=$(now)
/usr/bin/time -f '%U %S' -o "$out/cold.cpu" \
	"$top/bin/refsweep" classify --tree "$tree" --jobs "$jobs" \
	--json "$out/cold.jsonl" > "$out/cold.log"
t1=$(now)
echo "cold scan+classify: $(elapsed "$t0" "$t1") s," \
	"$(awk '{print $1 + $2}' "$out/cold.cpu") CPU s (load before: $l0)"
grep -E '^refsweep:|parse failures' "$out/cold.log"

# Change 10 files in a scratch worktree; the cache is keyed by content,
# so the unchanged files of the worktree hit the cache of the cold run.
scratch=$work/bench/speed-tree
git -C "$tree" worktree remove --force "$scratch" 2>/dev/null || true
git -C "$tree" worktree add -q --detach "$scratch" HEAD
git -C "$scratch" grep -l -E 'atomic_(inc|dec)\(' -- 'drivers/*.c' |
	head -n 10 | while read -r f; do
		printf '\n/* refsweep speed benchmark */\n' >> "$scratch/$f"
	done
l2=$(load)
t2=$(now)
/usr/bin/time -f '%U %S' -o "$out/warm.cpu" \
	"$top/bin/refsweep" classify --tree "$scratch" --jobs "$jobs" \
	--json "$out/warm.jsonl" > "$out/warm.log"
t3=$(now)
echo "re-run after changing 10 files: $(elapsed "$t2" "$t3") s," \
	"$(awk '{print $1 + $2}' "$out/warm.cpu") CPU s (load before: $l2)"
git -C "$tree" worktree remove --force "$scratch"

l4=$(load)
t4=$(now)
make -s -C "$tree" coccicheck MODE=report J="$jobs" \
	COCCI=scripts/coccinelle/api/atomic_as_refcounter.cocci \
	> "$out/coccicheck.log" 2>&1 || true
t5=$(now)
echo "make coccicheck atomic_as_refcounter.cocci: $(elapsed "$t4" "$t5") s" \
	"(load before: $l4)" \
	"($(grep -c 'atomic_as_refcounter\|WARNING' "$out/coccicheck.log") report lines)"
