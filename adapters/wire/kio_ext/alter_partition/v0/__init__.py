"""AlterPartition v0 request and response entities (controller.md §2.1)."""

from .request import AlterPartitionRequest
from .response import AlterPartitionResponse

__all__ = (
    "AlterPartitionRequest",
    "AlterPartitionResponse",
)
