"""Run by `test_a_forked_worker_sees_the_end_of_its_input_while_a_sibling_runs` in a fresh
interpreter (a test process may have threads by then, and then nothing is forked): fork two
workers, end the first while the second waits for work, print how each ended."""

from __future__ import annotations

import json
import time

from isrcheck.conformance.engine.worker_process import WorkerProcess, _fork, can_fork, encode


def main() -> None:
    assert can_fork(), "a fresh interpreter has a single thread"
    first, second = (WorkerProcess(number, _fork()) for number in range(2))
    try:
        for worker in (first, second):
            worker.tell(encode(("calls",)))
        started = time.monotonic()
        first_code = first.end()
        took = time.monotonic() - started
    finally:
        first.end()
        second.end()
    print(json.dumps({"first": first_code, "took_s": took, "second": second.process.poll()}))


if __name__ == "__main__":
    main()
