"""A child a test interrupts with SIGINT must be able to take it.

An ignored SIGINT is inherited across exec, and Python then installs no KeyboardInterrupt
handler. Bash starts a background job of a non-interactive shell (`… &` in a script) with
SIGINT ignored, so a test suite launched that way (a CI wrapper, `nohup`, a detached job)
judged an interrupted isrcheck by what the test process had inherited, not by isrcheck:
`test_kills[INT]` failed in a pytest worker that ignored SIGINT, and
`test_no_container_outlives_isrcheck[SIGINT]` ran on to its budget under a backgrounded
`.ci/run` while passing in a foreground one.
"""

from __future__ import annotations

import signal


def restore_default_sigint() -> None:
    """`preexec_fn` for a child the test will interrupt: SIGINT back to its default, so the
    child's Python installs its KeyboardInterrupt handler whatever the test process ignores."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
