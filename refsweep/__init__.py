# SPDX-License-Identifier: GPL-2.0-only
"""refsweep: classify the kernel's atomic counters for PaX-style overflow checking."""

VERSION = "0.1"
