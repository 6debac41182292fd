"""The bottom layer every other layer shares: what an operation is (`operations`), what a run
records step by step (`history`), what a run leaves on disk (`records`) and the one error a person
fixes (`errors`). It imports nothing of isrcheck outside itself, so the target contract
(`adapters/base.py`), the oracle, the checkers, the engine and the reports all depend on it and
on nothing above them to agree on these shapes (docs/architecture.md)."""
