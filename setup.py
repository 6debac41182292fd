"""Package list for the `isrcheck` namespace (pyproject.toml has everything else).

The repository's top-level folders adapters/, conformance/, contract/, reference_impl/ and reports/ install
as isrcheck.adapters, isrcheck.conformance, ... (pyproject's package-dir); `packages.find`
cannot discover sub-packages through that mapping, so they are listed here.
"""

from setuptools import find_packages, setup

MAPPED = ("adapters", "conformance", "contract", "reference_impl", "reports")

packages = find_packages(include=["isrcheck", "isrcheck.*"])
for folder in MAPPED:
    packages += [f"isrcheck.{name}" for name in find_packages(include=[folder, f"{folder}.*"])]

setup(packages=packages)
