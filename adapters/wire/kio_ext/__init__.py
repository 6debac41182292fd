"""Entities kio 0.6.5 does not ship, written by hand in kio's generated style.

kio's schemas come from a Kafka 4.x tree, where AlterPartition versions 0 and 1 were removed
(KAFKA-18601); 3.3-3.9 controllers still accept them (controller.md §2.1).  The classes below
follow kio's conventions exactly (frozen, slotted, keyword-only dataclasses; ``__type__``,
``__version__``, ``__flexible__``, ``__api_key__``, ``__header_schema__`` class variables;
``kafka_type`` field metadata; fields in wire order) so that ``kio.serial.entity_reader`` and
``entity_writer`` encode them with no special casing.  Do not add
``from __future__ import annotations`` to these modules: kio introspects ``Field.type`` and
needs real types, not strings.
"""
