"""The `apache/kafka` images the container tests use, and how a test asks for them: skip without
the engine or the image — except where ISRCHECK_REQUIRE_DOCKER is set (CI builds the images with
../shared/docker/build-image.sh and sets it), where a missing engine or image fails the test
instead of going green untested."""

from __future__ import annotations

import os

import pytest
from isrcheck.adapters.real_kafka.docker_engine import docker_unavailable, missing_image

IMAGES = {"3.9": "apache/kafka:3.9.0", "3.7": "apache/kafka:3.7.1"}


def require(image: str | None = None) -> None:
    """Skip (or, under ISRCHECK_REQUIRE_DOCKER, fail) unless an engine answers and has `image`."""
    reason = docker_unavailable()
    if reason is None and image is not None:
        reason = missing_image(image)
    if reason is None:
        return
    if os.environ.get("ISRCHECK_REQUIRE_DOCKER"):
        pytest.fail(f"ISRCHECK_REQUIRE_DOCKER is set but {reason}")
    pytest.skip(reason)
