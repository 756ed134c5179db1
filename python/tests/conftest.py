import os

import pytest

KEY = bytes.fromhex("00112233445566778899aabbccddeeff")


@pytest.fixture
def key() -> bytes:
    return KEY


def pytest_collection_modifyitems(config, items):
    # Spark tests need pyspark and a JVM; without them they are skipped, not failed.
    try:
        import pyspark  # noqa: F401
    except ImportError:
        skip = pytest.mark.skip(reason="pyspark is not installed")
        for item in items:
            if "spark" in item.keywords:
                item.add_marker(skip)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
