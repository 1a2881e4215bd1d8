#!/usr/bin/env python3
"""Why the last ctest run skipped what it skipped: one line per reason.

    python3 tests/skip_summary.py BUILD_DIR [--only-gpu-may-skip]

ctest lists the entries it skipped but not why; Google Test writes the reason
in each test's output ("file:line: Skipped", the message, "[  SKIPPED ] Name"),
which ctest keeps in BUILD_DIR/Testing/Temporary/LastTest.log. Skips inside an
entry that passed (one test of several) are counted too. With
--only-gpu-may-skip (CI) a skip for any reason that names no GPU fails.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Dict, List

SKIPPED_LINE = "[  SKIPPED ] "


def reasons_of(log: str) -> Dict[str, List[str]]:
    """Reason -> the tests skipped for it, in the order met."""
    reasons: Dict[str, List[str]] = {}
    for block in re.split(r"\n(?=\d+/\d+ Testing: )", log):
        entry = re.match(r"\d+/\d+ Testing: (\S+)", block)
        if not entry:
            continue
        output = block.split("\nOutput:\n", 1)[-1].split("<end of output>", 1)[0].splitlines()
        found = False
        for i, line in enumerate(output):
            if not line.endswith(": Skipped"):
                continue
            message: List[str] = []
            name = entry.group(1)
            for following in output[i + 1:]:
                if following.startswith(SKIPPED_LINE):
                    name = following[len(SKIPPED_LINE):].split(" (")[0]
                    break
                if following.strip():
                    message.append(following.strip())
            reasons.setdefault(" ".join(message) or "(no reason given)", []).append(name)
            found = True
        if not found and ("Skip regular expression found" in block or "\nTest Skipped" in block):
            reasons.setdefault("(no reason in its output)", []).append(entry.group(1))
    return reasons


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    only_gpu = "--only-gpu-may-skip" in sys.argv[1:]
    log = Path(args[0] if args else "build") / "Testing" / "Temporary" / "LastTest.log"
    if not log.is_file():
        print("skip summary: no %s (run ctest first)" % log)
        return 1
    reasons = reasons_of(log.read_text(errors="replace"))
    if not reasons:
        print("ctest: no test skipped")
        return 0
    total = sum(len(tests) for tests in reasons.values())
    print("ctest: %d test%s skipped, by reason:" % (total, "" if total == 1 else "s"))
    for reason, tests in reasons.items():
        shown = ", ".join(tests[:3]) + (", and %d more" % (len(tests) - 3) if len(tests) > 3 else "")
        print("  %4d  %s  (%s)" % (len(tests), reason, shown))
    if only_gpu:
        others = [r for r in reasons if "GPU" not in r and "CUDA" not in r]
        if others:
            print("ctest: only GPU tests may skip here, but tests skipped for: %s" % "; ".join(others))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
