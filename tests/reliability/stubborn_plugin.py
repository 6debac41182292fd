"""An `exec:` plug-in that breaks the protocol's one lifecycle rule: at end of stdin it does not
exit but sleeps on, ignoring SIGTERM and SIGINT too (what a JVM with a stuck shutdown hook does).
isrcheck must kill it rather than leave it running."""

from __future__ import annotations

import signal
import time

from isrcheck.adapters.plugins.stdio_reference import serve
from isrcheck.adapters.reference.controller_target import ReferenceTarget

if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(ReferenceTarget(), "stubborn")
    while True:
        time.sleep(3600)
