"""Sample entities and byte mutations shared by the codec and fuzz tests."""

from __future__ import annotations

import random
import uuid
from dataclasses import MISSING, fields
from typing import Any

from isrcheck.adapters.wire.apis import API_TABLE
from isrcheck.adapters.wire.codec import NO_THROTTLE, encode_request, encode_response, unframe
from kio.schema.errors import ErrorCode
from kio.serial._introspect import EntityField, EntityTupleField, PrimitiveTupleField, classify_field

_PRIMITIVES: dict[str, object] = {
    "bool": True,
    "int8": 1,
    "int16": 1,
    "uint16": 1,
    "int32": 1,
    "int64": 1,
    "string": "s",
    "uuid": uuid.UUID(int=1),
    "error_code": ErrorCode.none,
    "timedelta_i32": NO_THROTTLE,
}

#: Byte strings that decode as enormous counts or lengths (compact uvarint 2**32-1, int32 max).
HOSTILE_COUNTS = (b"\xff\xff\xff\xff\x0f", b"\x7f\xff\xff\xff", b"\xff\xff\xff\x7f")


def minimal(cls: type) -> Any:
    """An instance with one element in every array, so mutations reach nested structures."""
    values: dict[str, object] = {}
    for field in fields(cls):
        shape = classify_field(field)
        kafka_type = str(field.metadata.get("kafka_type"))
        if isinstance(shape, EntityTupleField):
            values[field.name] = (minimal(shape.type_),)
        elif isinstance(shape, EntityField):
            values[field.name] = minimal(shape.type_)
        elif isinstance(shape, PrimitiveTupleField):
            values[field.name] = (_PRIMITIVES[kafka_type],)
        elif field.default is MISSING:
            values[field.name] = _PRIMITIVES[kafka_type]
    return cls(**values)


def valid_payloads() -> list[tuple[bool, int, int, bytes]]:
    """(is_request, api_key, api_version, payload) for every table entry, both directions."""
    samples: list[tuple[bool, int, int, bytes]] = []
    for spec in API_TABLE.values():
        for entry in spec.versions.values():
            request = unframe(encode_request(minimal(entry.request), 3, "x"))
            samples.append((True, entry.api_key, entry.api_version, request))
            response = unframe(encode_response(minimal(entry.response), 3))
            samples.append((False, entry.api_key, entry.api_version, response))
    return samples


def mutate(rng: random.Random, payload: bytes) -> bytes:
    """Bit flips, a splice, a truncation or an inserted hostile count."""
    data = bytearray(payload)
    choice = rng.randrange(4)
    if choice == 0 and data:
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif choice == 1 and data:
        position = rng.randrange(len(data))
        data[position : position + rng.randint(1, 5)] = rng.randbytes(rng.randint(1, 5))
    elif choice == 2:
        del data[rng.randrange(len(data) + 1) :]
    else:
        position = rng.randrange(len(data) + 1)
        data[position:position] = rng.choice([*HOSTILE_COUNTS, rng.randbytes(3)])
    return bytes(data)
