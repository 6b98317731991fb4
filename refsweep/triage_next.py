# SPDX-License-Identifier: GPL-2.0-only
"""``triage next``: one variable at a time, a one-key answer and a reason.

On a terminal the answer key is read without Enter (cbreak mode), the
reason as a line.  With answers piped on stdin, each variable takes two
lines: the key, then the reason.  End of input stops cleanly; nothing is
recorded for a variable whose reason was not given.
"""

import os
import sys
from typing import Callable, Optional, TextIO

from refsweep.triage_db import WRAP_SAFE, Entry

# One key per human verdict; n skips, q quits.
KEYS = {"r": "refcount", "u": "usage", "s": "statistic", "i": "id",
        "t": "state", "w": "wraps"}
PROMPT = ("[r]efcount [u]sage [s]tatistic [i]d s[t]ate [w]raps "
          "[n]ext [q]uit? ")


def queue(items: list[Entry], conflicted: set[str],
          runtime_open: Optional[set[str]] = None) -> list[Entry]:
    """What needs a human: counters a forecast saw grow that stay checked
    and no decision has answered since (RUNTIME_OPEN), then stale
    decisions, open conflicts, undecided.

    Gone decisions need no answer (there is no code to look at).
    """
    runtime_open = runtime_open or set()
    runtime = [e for e in items if e.key in runtime_open and
               e.record is not None and e.final not in WRAP_SAFE and
               not (e.source != "human" and e.record.get("wrap_by_design"))]
    first = {e.key for e in runtime}
    stale = [e for e in items if e.source == "stale" and e.key not in first]
    conflicts = [e for e in items if e.key in conflicted and
                 e.source != "stale" and e.record is not None and
                 e.key not in first]
    undecided = [e for e in items if e.source == "machine" and
                 e.key not in conflicted and e.key not in first]
    return runtime + stale + conflicts + undecided


def _read_key(inp: TextIO, out: TextIO) -> Optional[str]:
    """One answer key; None at end of input."""
    if inp.isatty():
        import termios
        import tty
        fd = inp.fileno()
        saved = termios.tcgetattr(fd)
        try:
            # TCSANOW, not setcbreak's default TCSAFLUSH: a key typed
            # before the prompt was read must not be thrown away.
            tty.setcbreak(fd, termios.TCSANOW)
            ch = os.read(fd, 1).decode("utf-8", "replace")
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        if ch in ("", "\x04"):
            return None
        out.write(ch + "\n")
        return ch.lower()
    line = inp.readline()
    if not line:
        return None
    out.write(line.strip() + "\n")     # echoed, so a transcript reads well
    return line.strip()[:1].lower()


def _read_reason(inp: TextIO, out: TextIO) -> Optional[str]:
    while True:
        out.write("reason: ")
        out.flush()
        line = inp.readline()
        if not line:
            return None
        if not inp.isatty():
            out.write(line.strip() + "\n")
        if line.strip():
            return line.strip()
        out.write("a decision needs a reason\n")


def run(todo: list[Entry], show: Callable[[Entry, TextIO], None],
        record: Callable[[Entry, str, str], None],
        inp: TextIO = sys.stdin, out: TextIO = sys.stdout,
        limit: int = 0) -> int:
    """Ask about every entry of TODO; the number of decisions recorded."""
    done = 0
    if not todo:
        out.write("nothing to triage: no runtime evidence unanswered, no "
                  "stale, conflicting or undecided variable\n")
        return 0
    for n, entry in enumerate(todo, 1):
        if limit and done >= limit:
            break
        out.write(f"\n[{n}/{len(todo)}] ")
        show(entry, out)
        while True:
            out.write(PROMPT)
            out.flush()
            key = _read_key(inp, out)
            if key is None or key == "q":
                return done
            if key == "n" or key in KEYS:
                break
            out.write(f"unknown answer {key!r}\n")
        if key == "n":
            continue
        reason = _read_reason(inp, out)
        if reason is None:
            return done
        record(entry, KEYS[key], reason)
        done += 1
        out.write(f"recorded: {entry.key} = {KEYS[key]}\n")
    return done
