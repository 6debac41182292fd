"""AlterPartition (API key 56) versions 0 and 1, missing from kio (controller.md §2.1)."""
