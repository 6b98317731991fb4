# SPDX-License-Identifier: GPL-2.0-only
"""Install the Debian packages refsweep needs; skip what is present."""

import subprocess

PACKAGES = (
    "coccinelle", "sparse", "linux-source-6.12", "linux-source-6.1",
    "python3-pytest", "mypy",
    "flex", "bison", "bc", "libelf-dev", "libssl-dev", "git", "perl",
    "gcc", "make", "xz-utils", "parallel",
    # reports: templates, and the headless browser their test drives
    "python3-jinja2", "chromium", "chromium-driver", "python3-selenium",
    # core-patch workload: an x86-64 kernel under qemu, a static busybox
    # userland in its initramfs, ext4 disk images
    "qemu-system-x86", "busybox-static", "e2fsprogs", "ccache",
    # core-patch beyond x86-64: cross compilers, and qemu for their KUnit
    # runs (make core-cross)
    "gcc-aarch64-linux-gnu", "gcc-riscv64-linux-gnu", "gcc-i686-linux-gnu",
    "qemu-system-arm", "qemu-system-misc",
)


def missing(packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """The PACKAGES dpkg does not have installed."""
    out = []
    for p in packages:
        res = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p],
                             capture_output=True, text=True, check=False)
        if "install ok installed" not in res.stdout:
            out.append(p)
    return out


def install(packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """apt-get install what is missing; returns what was installed."""
    need = missing(packages)
    if not need:
        return []
    env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-q",
                    "--no-install-recommends", *need], check=True, env=env)
    return need
