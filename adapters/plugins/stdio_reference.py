"""The example external implementation: the reference controller (or a mutant) behind the
`exec:` JSON-lines protocol. `python -m isrcheck.adapters.plugins.stdio_reference [--mutant ID]`.

It shows a plug-in author everything the protocol needs: describe, open (a fresh system),
execute, observe, close — and that errors are replies, not crashes. `--snapshot` adds the
optional `snapshot` capability (each `execute` answered with the state after it)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from isrcheck.adapters.base import UnsupportedConfiguration
from isrcheck.adapters.plugins.stdio_protocol import PROTOCOL, reply_line
from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.reference_impl.mutants import CATALOGUE


def snapshot(target: ReferenceTarget) -> dict[str, Any]:
    """Every partition and registered broker, with the fields `observe` answers."""
    controller = target.controller
    return {
        "partitions": {f"{t}/{p}": target.observe("partition", {"topic": t, "partition": p})
                       for t, p in controller.partition_keys()},
        "brokers": {str(b): target.observe("broker", {"broker": b}) for b in sorted(controller.brokers)},
    }


def serve(target: ReferenceTarget, name: str, snapshots: bool = False) -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            method, params, request_id = request["method"], request.get("params", {}), request.get("id")
        except (json.JSONDecodeError, KeyError, TypeError):
            sys.stdout.write(reply_line(None, error={"kind": "bad_request", "message": "not a request"}))
            sys.stdout.flush()
            continue
        try:
            result: Any = None
            if method == "describe":
                result = {"protocol": PROTOCOL, "name": name, "levels": ["controller"], "releases": None}
                if snapshots:
                    result["capabilities"] = ["snapshot"]
            elif method == "open":
                target.open(str(params["release"]), params.get("config", {}))
            elif method == "execute":
                result = target.execute(str(params["op"]), params["args"])
                if snapshots and params.get("snapshot"):
                    result = {"result": result, "snapshot": snapshot(target)}
            elif method == "snapshot" and snapshots:
                result = snapshot(target)
            elif method == "observe":
                result = target.observe(str(params["what"]), params["args"])
            elif method == "close":
                target.close()
            else:
                raise ValueError(f"unknown method {method!r}")
            sys.stdout.write(reply_line(request_id, result))
        except UnsupportedConfiguration as error:
            sys.stdout.write(reply_line(request_id, error={"kind": "unsupported_configuration", "message": str(error)}))
        except Exception as error:
            failure = {"kind": "failure", "message": f"{type(error).__name__}: {error}"}
            sys.stdout.write(reply_line(request_id, error=failure))
        sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mutant", help="serve a controller-level mutant instead of the reference")
    parser.add_argument("--snapshot", action="store_true", help="declare and answer the snapshot capability")
    args = parser.parse_args()
    if args.mutant:
        entry = CATALOGUE.get(args.mutant)
        if entry is None or entry.controller_class is None:
            parser.error(f"unknown controller-level mutant {args.mutant!r}")
        serve(ReferenceTarget(entry.controller_class), f"stdio-reference+{args.mutant}", args.snapshot)
    else:
        serve(ReferenceTarget(), "stdio-reference", args.snapshot)


if __name__ == "__main__":
    main()
