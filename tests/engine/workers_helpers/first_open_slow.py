"""A reference target whose very first `open` in the whole campaign takes long: the first worker
process to get here (it creates the marker file named by ISRCHECK_TEST_SLOW_MARKER) sleeps, the
others run at full speed."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from isrcheck.adapters.reference.controller_target import ReferenceTarget

DELAY_S = 4.0


class FirstOpenSlow(ReferenceTarget):
    name = "first-open-slow"

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        try:
            os.close(os.open(os.environ["ISRCHECK_TEST_SLOW_MARKER"], os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            pass
        else:
            time.sleep(DELAY_S)
        super().open(release, config)


def make(**_: Any) -> FirstOpenSlow:
    return FirstOpenSlow()
