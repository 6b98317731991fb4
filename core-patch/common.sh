# SPDX-License-Identifier: GPL-2.0-only
#
# Sourced by the core-patch scripts: where things live, and the steps and
# choices they share.

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
work=${REFSWEEP_WORK:-$top/work}
jobs=${JOBS:-$(nproc)}

# base_commit TREE: the prepared tree's root commit, the series' base.
base_commit() {
	git -C "$1" rev-list --max-parents=0 HEAD | tail -n 1
}

# base_worktree TREE DIR: make DIR a clean worktree of TREE's base commit,
# reusing it if it exists (its build directories live elsewhere, O=).
base_worktree() {
	_base=$(base_commit "$1")
	mkdir -p "$(dirname "$2")"
	if [ -e "$2/.git" ]; then
		git -C "$2" am --abort 2>/dev/null || true
		git -C "$2" checkout -q --detach "$_base"
		git -C "$2" reset -q --hard "$_base"
		git -C "$2" clean -q -fdx
	else
		git -C "$1" worktree prune
		git -C "$1" worktree add -q --detach "$2" "$_base"
	fi
}

# qemu_accel_args: qemu's accelerator options for QEMU_ACCEL.  qemu
# emulates (multi-threaded TCG) unless QEMU_ACCEL=kvm: KVM is opt-in
# because a /dev/kvm can be one that does not boot a stock kernel
# (kvm_pvm does not).
qemu_accel_args() {
	case ${QEMU_ACCEL:-tcg} in
	tcg) echo "-accel tcg,thread=multi" ;;
	kvm) echo "-enable-kvm -cpu host" ;;
	*) echo "core-patch: QEMU_ACCEL must be tcg or kvm, not $QEMU_ACCEL" >&2
	   return 2 ;;
	esac
}
