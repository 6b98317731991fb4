# SPDX-License-Identifier: GPL-2.0-only
#
# Sourced by the core-patch scripts: where things live, and the steps and
# choices they share.

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
work=${REFSWEEP_WORK:-$top/work}
jobs=${JOBS:-$(nproc)}
# ccache when installed: the kernel builds of both trees and both
# configurations share most objects between runs.
if [ -z "${KCC:-}" ]; then
	KCC=gcc
	command -v ccache > /dev/null && KCC="ccache gcc"
fi

# kernel_tree ARG: ARG as an absolute path if it is a kernel tree (an
# empty ARG is what a failed "refsweep tree next" leaves in the Makefile).
kernel_tree() {
	[ -n "$1" ] && [ -f "$1/Makefile" ] || {
		echo "core-patch: '$1' is not a kernel tree (bin/refsweep tree prepares one)" >&2
		return 2
	}
	(cd "$1" && pwd)
}

# tree_version TREE: "X.Y" from TREE's top Makefile (7.2, 6.12): the name
# of the series directories written for that tree.
tree_version() {
	_v=$(sed -n 's/^VERSION = //p' "$1/Makefile")
	_p=$(sed -n 's/^PATCHLEVEL = //p' "$1/Makefile")
	[ -n "$_v" ] && [ -n "$_p" ] || {
		echo "core-patch: $1 is not a kernel tree (no VERSION in Makefile)" >&2
		return 2
	}
	echo "$_v.$_p"
}

# series_dirs TREE: the series written for TREE's version, one directory
# a line, core-patch/FAMILY/X.Y (atomic before sanitize: the sanitize
# series is written on top of the atomics series).
series_dirs() {
	_ver=$(tree_version "$1") || return 2
	_found=""
	for _d in "$here"/atomic/"$_ver" "$here"/sanitize/"$_ver"; do
		[ -f "$_d/series" ] && echo "$_d" && _found=1
	done
	[ -n "$_found" ] || {
		echo "core-patch: no series for Linux $_ver (core-patch/*/$_ver/series)" >&2
		return 2
	}
}

# check_series_dir DIR: DIR has a "series" file naming patches that exist.
check_series_dir() {
	[ -f "$1/series" ] || {
		echo "core-patch: $1 is not a series directory (no $1/series)" >&2
		return 2
	}
	while read -r _patch; do
		case $_patch in ''|'#'*) continue ;; esac
		[ -f "$1/$_patch" ] || {
			echo "core-patch: $1/series names $_patch, which does not exist" >&2
			return 2
		}
	done < "$1/series"
}

# series_family DIR: "atomic" for core-patch/atomic/7.2
series_family() {
	basename "$(dirname "$(cd "$1" && pwd)")"
}

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

# arch_qemu ARCH: the qemu-system binary suffix kunit.py runs for ARCH
# (kunit's qemu_configs/ARCH.py).
arch_qemu() {
	case $1 in
	arm64) echo aarch64 ;;
	riscv) echo riscv64 ;;
	*) echo "$1" ;;
	esac
}

# arch_cross ARCH: the Debian cross toolchain prefix for ARCH ("" for the
# native one): gcc-aarch64-linux-gnu, gcc-riscv64-linux-gnu,
# gcc-i686-linux-gnu.
arch_cross() {
	case $1 in
	arm64) echo aarch64-linux-gnu- ;;
	riscv) echo riscv64-linux-gnu- ;;
	i386) echo i686-linux-gnu- ;;
	um|x86_64) echo "" ;;
	*) echo "core-patch: no cross compiler known for ARCH=$1" >&2
	   return 2 ;;
	esac
}

# arch_cc ARCH: CC for ARCH, through ccache when KCC has it.
arch_cc() {
	_cross=$(arch_cross "$1") || return 2
	case $KCC in
	ccache\ *) echo "ccache ${_cross}gcc" ;;
	*) echo "${_cross}gcc" ;;
	esac
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

# qemu_tcg_wrapper DIR ARCH: write DIR/qemu-system-ARCH, which runs the
# real qemu without "-accel kvm" and "-accel hvf", and print DIR (to put
# first in PATH).  kunit.py of Linux 7.x asks for "-accel kvm -accel hvf
# -accel tcg" before our own options, qemu takes the first accelerator
# that opens, and a /dev/kvm that does not boot a stock kernel (kvm_pvm)
# then hangs the run until kunit.py's timeout.
qemu_tcg_wrapper() {
	real=$(command -v "qemu-system-$2") || return 2
	mkdir -p "$1"
	cat > "$1/qemu-system-$2" <<WRAPPER
#!/bin/sh
# Written by core-patch/common.sh (qemu_tcg_wrapper): drops -accel kvm/hvf.
pending=
for a do
	shift
	if [ -n "\$pending" ]; then
		pending=
		case \$a in kvm|hvf) continue ;; esac
		set -- "\$@" -accel "\$a"
		continue
	fi
	if [ "\$a" = -accel ]; then
		pending=1
		continue
	fi
	set -- "\$@" "\$a"
done
exec $real "\$@"
WRAPPER
	chmod +x "$1/qemu-system-$2"
	echo "$1"
}
