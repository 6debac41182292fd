"""Metadata records decoded with the schemas a Kafka release ships, not with hand-written codecs.

Every `__cluster_metadata` record value is framed by `MetadataRecordSerde`
(`AbstractApiMessageSerde.read`): an unsigned varint frame version (1), an unsigned varint
api key (the record type), an unsigned varint record version, then the record body in Kafka's
message serialisation at that version (controller.md §9.4 item 2). The bodies are described by
the JSON message schemas of `kafka-metadata-<version>.jar` (`common/metadata/*.json`), the same
files Kafka's generator turns into `PartitionChangeRecord` & co. This module reads those files
from the release under test and interprets them, so a record type or field added by a release
is decoded without changes here.

Output is the JSON form `kafka-dump-log.sh --cluster-metadata-decoder` prints (the generated
`*JsonConverter.write`): camelCase field names, uuids as Kafka's base64 `Uuid.toString()`, bytes
as base64 — i.e. `isrcheck.adapters.kafka_wire.metadata_records.MetadataEntry`, which
`isrcheck.adapters.kafka_wire.metadata_image`
replays. A tagged field absent from the wire takes the schema default, as the generated `read`
does; a field outside the record's `versions` is left out, as the JSON converter does.
"""

from __future__ import annotations

import base64
import glob
import json
import re
import struct
import uuid
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from isrcheck.adapters.kafka_wire.metadata_records import MetadataEntry, kafka_uuid

SCHEMA_PREFIX = "common/metadata/"
FRAME_VERSION = 1
"""`AbstractApiMessageSerde.DEFAULT_FRAME_VERSION`."""


class SchemaError(ValueError):
    """A record that does not match the schemas (or a schema this decoder cannot read)."""


@dataclass(frozen=True)
class Versions:
    """A Kafka schema version range ("0+", "1-3", "2", "none")."""

    low: int
    high: int

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        if text is None or text == "none":
            return cls(1, 0)
        if text.endswith("+"):
            return cls(int(text[:-1]), 2**15)
        if "-" in text:
            low, high = text.split("-")
            return cls(int(low), int(high))
        return cls(int(text), int(text))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high


@dataclass(frozen=True)
class FieldSpec:
    name: str
    """The JSON converter's key: the schema name with a lower-case first letter."""
    type: str
    versions: Versions
    tagged: Versions
    tag: int | None
    default: Any
    fields: tuple[FieldSpec, ...] = ()
    """Members of an inline struct (`[]Foo` with `fields`, or a struct-typed field)."""


@dataclass(frozen=True)
class RecordSchema:
    api_key: int
    name: str
    type_name: str
    """`MetadataRecordType` name: PartitionChangeRecord → PARTITION_CHANGE_RECORD."""
    flexible: Versions
    fields: tuple[FieldSpec, ...]


def strip_comments(text: str) -> str:
    """Kafka's schema files are JSON with `//` comments (outside strings)."""
    out, in_string, escaped, i = [], False, False, 0
    while i < len(text):
        char = text[i]
        if in_string:
            out.append(char)
            escaped = char == "\\" and not escaped
            if char == '"' and not escaped:
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif text.startswith("//", i):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(char)
        i += 1
    return "".join(out)


def type_name(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


def _default(type_: str, text: str | None) -> Any:
    if text == "null":
        return None
    if type_.startswith("[]"):
        return []
    if type_ in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
        return int(text, 0) if text else 0
    if type_ == "float64":
        return float(text) if text else 0.0
    if type_ == "bool":
        return text == "true"
    if type_ == "string":
        return text or ""
    if type_ == "uuid":
        return kafka_uuid(uuid.UUID(int=0))
    if type_ in ("bytes", "records"):
        return ""
    return None


def _field(spec: Mapping[str, Any], structs: Mapping[str, Any]) -> FieldSpec:
    name = str(spec["name"])
    type_ = str(spec["type"])
    members = spec.get("fields")
    element = type_[2:] if type_.startswith("[]") else type_
    if members is None and element in structs:
        members = structs[element]
    return FieldSpec(
        name=name[:1].lower() + name[1:], type=type_, versions=Versions.parse(spec.get("versions")),
        tagged=Versions.parse(spec.get("taggedVersions")), tag=spec.get("tag"),
        default=_default(type_, spec.get("default")),
        fields=tuple(_field(m, structs) for m in members or ()),
    )


def parse_schema(text: str) -> RecordSchema:
    document = json.loads(strip_comments(text))
    structs = {str(s["name"]): s.get("fields", []) for s in document.get("commonStructs", [])}
    return RecordSchema(int(document["apiKey"]), str(document["name"]), type_name(str(document["name"])),
                        Versions.parse(document.get("flexibleVersions")),
                        tuple(_field(f, structs) for f in document["fields"]))


def metadata_jar(kafka_home: str) -> Path:
    jars = sorted(p for p in glob.glob(f"{kafka_home}/libs/kafka-metadata-*.jar")
                  if not p.endswith(("-test.jar", "-sources.jar", "-javadoc.jar")))
    if not jars:
        raise SchemaError(f"no libs/kafka-metadata-*.jar under {kafka_home}")
    return Path(jars[0])


def load_schemas(jar: str | Path) -> dict[int, RecordSchema]:
    """api key → schema, for every `common/metadata/*.json` of a `kafka-metadata` jar."""
    schemas: dict[int, RecordSchema] = {}
    with zipfile.ZipFile(jar) as archive:
        for name in archive.namelist():
            if name.startswith(SCHEMA_PREFIX) and name.endswith(".json"):
                document = archive.read(name).decode("utf-8")
                if '"type": "metadata"' not in document and '"type":"metadata"' not in document:
                    continue
                schema = parse_schema(document)
                schemas[schema.api_key] = schema
    return schemas


class Reader:
    """Kafka's `Readable` over one record value."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, size: int) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise SchemaError(f"record truncated at byte {self.pos} (wanted {size})")
        chunk = self.data[self.pos:self.pos + size]
        self.pos += size
        return chunk

    def unpack(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size))[0]

    def uvarint(self) -> int:
        value, shift = 0, 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 35:
                raise SchemaError("varint too long")


_FIXED = {"bool": ">?", "int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q", "uint16": ">H",
          "uint32": ">I", "float64": ">d"}


class RecordDecoder:
    """Decodes framed metadata record values with one release's schemas."""

    def __init__(self, schemas: Mapping[int, RecordSchema]) -> None:
        self.schemas = dict(schemas)

    @classmethod
    def for_kafka_home(cls, kafka_home: str) -> RecordDecoder:
        return cls(load_schemas(metadata_jar(kafka_home)))

    def decode(self, offset: int, value: bytes) -> MetadataEntry | None:
        """The entry of one record value; None for a record type this release's jar lacks."""
        reader = Reader(value)
        frame = reader.uvarint()
        if frame != FRAME_VERSION:
            raise SchemaError(f"offset {offset}: unknown metadata frame version {frame}")
        api_key, version = reader.uvarint(), reader.uvarint()
        schema = self.schemas.get(api_key)
        if schema is None:
            return None
        data = self.struct(reader, schema.fields, version, version in schema.flexible)
        if reader.pos != len(value):
            raise SchemaError(f"offset {offset}: {len(value) - reader.pos} bytes left after {schema.name}")
        return MetadataEntry(offset, schema.type_name, version, data)

    def struct(self, reader: Reader, fields: tuple[FieldSpec, ...], version: int, flexible: bool) -> dict[str, Any]:
        data: dict[str, Any] = {}
        tagged: dict[int, FieldSpec] = {}
        for spec in fields:
            if version not in spec.versions:
                continue
            if flexible and version in spec.tagged:
                tagged[int(spec.tag or 0)] = spec
                data[spec.name] = spec.default
            else:
                data[spec.name] = self.value(reader, spec, spec.type, version, flexible)
        if flexible:
            for _ in range(reader.uvarint()):
                tag, size = reader.uvarint(), reader.uvarint()
                end = reader.pos + size
                spec = tagged.get(tag)
                if spec is None:
                    reader.take(size)  # unknown tagged field: skipped, as Kafka does
                    continue
                data[spec.name] = self.value(reader, spec, spec.type, version, flexible)
                if reader.pos != end:
                    raise SchemaError(f"tagged field {spec.name}: size {size} does not match its value")
        return data

    def value(self, reader: Reader, spec: FieldSpec, type_: str, version: int, flexible: bool) -> Any:
        fixed = _FIXED.get(type_)
        if fixed is not None:
            return reader.unpack(fixed)
        if type_ == "uuid":
            return kafka_uuid(uuid.UUID(bytes=reader.take(16)))
        if type_ == "string":
            size = reader.uvarint() - 1 if flexible else reader.unpack(">h")
            return None if size < 0 else reader.take(size).decode("utf-8")
        if type_ in ("bytes", "records"):
            size = reader.uvarint() - 1 if flexible else reader.unpack(">i")
            return None if size < 0 else base64.b64encode(reader.take(size)).decode("ascii")
        if type_.startswith("[]"):
            count = reader.uvarint() - 1 if flexible else reader.unpack(">i")
            if count < 0:
                return None
            return [self.value(reader, spec, type_[2:], version, flexible) for _ in range(count)]
        if spec.fields:
            return self.struct(reader, spec.fields, version, flexible)
        raise SchemaError(f"field {spec.name}: unknown type {type_}")
