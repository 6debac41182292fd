
from pathlib import Path as _Path

_checkout = _Path(__file__).resolve().parent.parent
if (_checkout / "setup.py").is_file() and (_checkout / "reference_impl").is_dir():
    # A source checkout: the mapped folders (adapters/, conformance/, reference_impl/, reports/)
    # sit beside this package, so `isrcheck.adapters` is found in *this* checkout, not in
    # whichever one was installed in editable mode (pyproject's package-dir does the same for a
    # wheel).
    __path__.append(str(_checkout))
