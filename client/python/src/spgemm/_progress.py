"""tqdm progress bars for transfers that take more than a second."""

from __future__ import annotations

import sys
from typing import Any, Optional

from tqdm.auto import tqdm


def enabled(progress: Optional[bool]) -> bool:
    """Whether to show a bar: explicit True/False, or None for "stderr is a terminal"."""
    if progress is None:
        try:
            return sys.stderr.isatty()
        except (AttributeError, ValueError):
            return False
    return bool(progress)


class Bar:
    """A byte-counting bar that shows only once a transfer has run for a second."""

    def __init__(self, progress: Optional[bool], total: Optional[int], desc: str) -> None:
        self._bar: Any = None
        if enabled(progress):
            self._bar = tqdm(
                total=total,
                desc=desc,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                delay=1.0,
                leave=False,
                file=sys.stderr,
            )

    def update(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Bar":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
