"""Bounded, validating pre-pass that runs before kio's native reader sees untrusted bytes.

Why this exists (found while building the fake-controller server of controller.md §9): kio
0.6.5 decodes with a Rust extension (``kio._kio_native``) that pre-allocates arrays from the
declared element count.  A 5-byte compact-array length of 2**32-2 makes it request ~34 GB and, on
allocation failure, Rust *aborts the whole Python process* (``memory allocation of N bytes
failed``) - no exception to catch.  Any peer could kill a test run, or the server in
:mod:`isrcheck.adapters.reference_server.server`, with one frame.  kio also raises ``KeyError`` on unknown tagged
fields, where Kafka skips them (forward compatibility of flexible versions).

This module walks the bytes along the kio entity class's own field list, using kio's own
primitive readers (``kio.serial.readers`` and kio's ``get_field_reader``/``get_reader``), and

* rejects any array whose declared count cannot fit in the remaining bytes (count * minimum
  encoded element size), so kio's pre-allocation is bounded by the frame size;
* drops tagged fields the class does not declare (as Kafka does) and rejects known tagged fields
  whose value does not fill exactly the declared size, so the walk and kio agree on every offset;
* re-emits the accepted bytes, which kio's ``entity_reader`` then decodes into the entity.

It is not a second codec: it builds no values, and all decoding of values is kio's.
"""

from __future__ import annotations

import enum
import io
from collections.abc import Callable, Mapping
from dataclasses import Field, dataclass, fields
from types import MappingProxyType
from typing import Any, TypeAlias

from kio.serial import entity_reader, entity_writer
from kio.serial._introspect import (
    EntityField,
    EntityTupleField,
    PrimitiveField,
    PrimitiveTupleField,
    classify_field,
    get_field_tag,
    get_schema_field_type,
    is_optional,
)
from kio.serial._parse import get_field_reader
from kio.serial.readers import (
    read_compact_array_length,
    read_int8,
    read_legacy_array_length,
    read_unsigned_varint,
)
from kio.serial.writers import write_unsigned_varint
from kio.static.primitive import uvarint

from .errors import WireError

Buffer: TypeAlias = bytes | bytearray | memoryview
#: kio reader signature: ``reader(buffer, offset) -> (value, number of bytes consumed)``.
_FieldReader: TypeAlias = Callable[[memoryview, int], tuple[Any, int]]

#: Smallest encoding of each kio ``kafka_type`` (flexible, non-flexible).  Strings and byte
#: strings shrink to a 1-byte varint length in flexible versions.
_MIN_PRIMITIVE_SIZE: Mapping[str, tuple[int, int]] = MappingProxyType(
    {
        "bool": (1, 1),
        "int8": (1, 1),
        "uint8": (1, 1),
        "int16": (2, 2),
        "uint16": (2, 2),
        "error_code": (2, 2),
        "int32": (4, 4),
        "uint32": (4, 4),
        "timedelta_i32": (4, 4),
        "int64": (8, 8),
        "uint64": (8, 8),
        "float64": (8, 8),
        "timedelta_i64": (8, 8),
        "datetime_i64": (8, 8),
        "uuid": (16, 16),
        "string": (1, 2),
        "bytes": (1, 4),
        "records": (1, 4),
    }
)


class _Kind(enum.Enum):
    PRIMITIVE = enum.auto()
    ENTITY = enum.auto()
    NULLABLE_ENTITY = enum.auto()
    PRIMITIVE_ARRAY = enum.auto()
    ENTITY_ARRAY = enum.auto()


@dataclass(frozen=True, slots=True)
class _Step:
    """How to walk one field."""

    name: str
    kind: _Kind
    reader: _FieldReader | None  # kio's reader for primitive fields and primitive arrays
    element: type[Any] | None  # nested entity class
    element_min_size: int  # minimal encoded size of one array element (>= 1)


@dataclass(frozen=True, slots=True)
class _Plan:
    """Per-class walk plan, derived once from the class's dataclass fields."""

    flexible: bool
    fields: tuple[_Step, ...]
    tagged: Mapping[int, _Step]
    min_size: int


def _primitive_min(field: Field[Any], flexible: bool) -> int:
    sizes = _MIN_PRIMITIVE_SIZE.get(get_schema_field_type(field))
    if sizes is None:
        return 0
    return sizes[0] if flexible else sizes[1]


_PLANS: dict[type[Any], _Plan] = {}


def _plan(cls: type[Any]) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = _make_plan(cls)
    return plan


def _make_plan(cls: type[Any]) -> _Plan:
    flexible = bool(cls.__flexible__)
    is_request_header = cls.__name__ == "RequestHeader"  # kio's own test for client_id's encoding
    untagged: list[_Step] = []
    tagged: dict[int, _Step] = {}
    min_size = 1 if flexible else 0  # the tagged-field count
    for field in fields(cls):
        tag = get_field_tag(field)
        shape = classify_field(field)
        match shape:
            case PrimitiveField():
                reader = get_field_reader(cls, field, is_request_header, tag is not None)
                step = _Step(field.name, _Kind.PRIMITIVE, reader, None, 0)
                size = _primitive_min(field, flexible)
            case PrimitiveTupleField():
                reader = get_field_reader(cls, field, is_request_header, tag is not None)
                element_min = max(1, _primitive_min(field, flexible))
                step = _Step(field.name, _Kind.PRIMITIVE_ARRAY, reader, None, element_min)
                size = 1 if flexible else 4
            case EntityField(nested):
                nullable = tag is None and is_optional(field)
                kind = _Kind.NULLABLE_ENTITY if nullable else _Kind.ENTITY
                step = _Step(field.name, kind, None, nested, 0)
                size = 1 if nullable else _plan(nested).min_size
            case EntityTupleField(nested):
                element_min = max(1, _plan(nested).min_size)
                step = _Step(field.name, _Kind.ENTITY_ARRAY, None, nested, element_min)
                size = 1 if flexible else 4
        if tag is None:
            untagged.append(step)
            min_size += size
        else:
            tagged[int(tag)] = step
    return _Plan(flexible, tuple(untagged), MappingProxyType(tagged), min_size)


def _walk_entity(cls: type[Any], buf: memoryview, offset: int, out: io.BytesIO) -> int:
    plan = _plan(cls)
    for step in plan.fields:
        offset = _walk_step(step, plan.flexible, buf, offset, out)
    if plan.flexible:
        offset = _walk_tagged(cls, plan, buf, offset, out)
    return offset


def _walk_step(step: _Step, flexible: bool, buf: memoryview, offset: int, out: io.BytesIO) -> int:
    if step.kind is _Kind.PRIMITIVE:
        assert step.reader is not None
        _, size = step.reader(buf, offset)
        end = offset + size
        out.write(buf[offset:end])
        return end
    if step.kind is _Kind.ENTITY:
        assert step.element is not None
        return _walk_entity(step.element, buf, offset, out)
    if step.kind is _Kind.NULLABLE_ENTITY:
        assert step.element is not None
        marker, size = read_int8(buf, offset)
        end = offset + size
        if marker not in (-1, 1):
            raise WireError(f"field {step.name}: nullable-struct marker {marker} is neither -1 nor 1")
        out.write(buf[offset:end])
        return end if marker == -1 else _walk_entity(step.element, buf, end, out)

    # Arrays: bound the declared count before anything allocates for it.
    count: int | None
    if flexible:
        count, size = read_compact_array_length(buf, offset)
    else:
        count, size = read_legacy_array_length(buf, offset)
        if count == -1:
            count = None
    end = offset + size
    if count is None:  # null array: kio decides whether null is allowed here
        out.write(buf[offset:end])
        return end
    if count < 0:
        raise WireError(f"field {step.name}: negative array length {count}")
    remaining = len(buf) - end
    if count * step.element_min_size > remaining:
        raise WireError(f"field {step.name}: array declares {count} elements but only {remaining} bytes remain")
    if step.kind is _Kind.PRIMITIVE_ARRAY:
        assert step.reader is not None
        _, size = step.reader(buf, offset)  # kio's reader, now with a bounded count
        out.write(buf[offset : offset + size])
        return offset + size
    assert step.element is not None
    out.write(buf[offset:end])
    for _ in range(count):
        end = _walk_entity(step.element, buf, end, out)
    return end


def _uvarint(value: int) -> bytes:
    scratch = io.BytesIO()
    write_unsigned_varint(scratch, uvarint(value))
    return scratch.getvalue()


def _walk_tagged(cls: type[Any], plan: _Plan, buf: memoryview, offset: int, out: io.BytesIO) -> int:
    count, size = read_unsigned_varint(buf, offset)
    offset += size
    if count * 2 > len(buf) - offset:  # every tagged field takes at least a tag and a size byte
        raise WireError(f"{cls.__qualname__}: {count} tagged fields cannot fit in the remaining bytes")
    kept: list[bytes] = []
    seen: set[int] = set()
    for _ in range(count):
        tag, tag_size = read_unsigned_varint(buf, offset)
        offset += tag_size
        size, size_size = read_unsigned_varint(buf, offset)
        offset += size_size
        if tag in seen:
            raise WireError(f"{cls.__qualname__}: tagged field {tag} appears twice")
        seen.add(tag)
        end = offset + size
        if end > len(buf):
            raise WireError(f"{cls.__qualname__}: tagged field {tag} of {size} bytes overruns the buffer")
        step = plan.tagged.get(tag)
        if step is None:  # unknown tag: Kafka skips it; kio would raise KeyError
            offset = end
            continue
        value = io.BytesIO()
        stop = _walk_step(step, True, buf[:end], offset, value)
        if stop != end:
            raise WireError(f"{cls.__qualname__}: tagged field {tag} declares {size} bytes, value uses {stop - offset}")
        encoded = value.getvalue()
        kept.append(_uvarint(tag) + _uvarint(len(encoded)) + encoded)
        offset = end
    out.write(_uvarint(len(kept)))
    for chunk in kept:
        out.write(chunk)
    return offset


_READERS: dict[type[Any], Callable[[bytes, int], tuple[Any, int]]] = {}


def _reader(cls: type[Any]) -> Callable[[bytes, int], tuple[Any, int]]:
    # Note: kio readers return (value, bytes consumed), not (value, new offset).
    reader = _READERS.get(cls)
    if reader is None:
        reader = _READERS[cls] = entity_reader(cls)
    return reader


def read_entity(cls: type[Any], data: Buffer, offset: int = 0) -> tuple[Any, int]:
    """Decode one ``cls`` entity starting at ``offset``; return it and the offset after it.

    Every failure - truncation, oversized counts, invalid UTF-8, unknown enum values (kio's
    ``ErrorCode`` rejects codes it does not know), bad booleans - raises :class:`WireError`.
    """
    view = memoryview(data)
    if not 0 <= offset <= len(view):
        raise WireError(f"offset {offset} outside a buffer of {len(view)} bytes")
    out = io.BytesIO()
    try:
        end = _walk_entity(cls, view, offset, out)
        normalized = out.getvalue()
        entity, consumed = _reader(cls)(normalized, 0)
    except WireError:
        raise
    except Exception as exc:  # kio raises DecodeError subclasses, ValueError, KeyError, ...
        raise WireError(f"cannot decode {cls.__qualname__}: {type(exc).__name__}: {exc}") from exc
    if consumed != len(normalized):
        raise WireError(f"cannot decode {cls.__qualname__}: kio stopped at byte {consumed} of {len(normalized)}")
    return entity, end


def write_entity(entity: object) -> bytes:
    """Encode ``entity`` with kio's ``entity_writer``; :class:`WireError` if kio cannot."""
    buffer = io.BytesIO()
    try:
        entity_writer(type(entity))(buffer, entity)  # type: ignore[type-var]
    except Exception as exc:  # out-of-range ints raise struct.error, wrong types TypeError, ...
        raise WireError(f"cannot encode {type(entity).__qualname__}: {type(exc).__name__}: {exc}") from exc
    return buffer.getvalue()
