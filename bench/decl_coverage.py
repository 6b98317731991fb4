#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check that every declaration line found by git grep is in the verdicts.

    bench/decl_coverage.py TREE VERDICTS.jsonl

The independent count is bench/sample_atomics.py's git grep filter, run for
atomic_t, atomic64_t and atomic_long_t outside tools/ and Documentation/.
Prints both counts and every grep declaration missing from the output.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sample_atomics  # noqa: E402
import verdicts  # noqa: E402


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    tree, out = sys.argv[1], Path(sys.argv[2])
    found = verdicts.by_decl(out)
    total = missing = 0
    for type_name in sample_atomics.ATOMIC_TYPES:
        decls = sample_atomics.candidates(tree, type_name)
        lost = [d for d in decls if f"{d.path}:{d.line}" not in found]
        total += len(decls)
        missing += len(lost)
        print(f"{type_name}: git grep {len(decls)} declarations, "
              f"{len(decls) - len(lost)} in the verdicts")
        for d in lost[:30]:
            print(f"  missing {d.path}:{d.line} {d.name}")
    print(f"all types: git grep {total}, verdict records "
          f"{len({id(v) for v in found.values()})}, missing {missing}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
