"""Spark on a local[2] session: exact 16-19-digit values, nulls, no key in the plan."""

import os
import sys

import pytest

pytestmark = pytest.mark.spark

pytest.importorskip("pyspark")

KEY_HEX = "2b7e151628aed2a6abf7158809cf4f3c"


@pytest.fixture(scope="module")
def spark():
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["RIFFPE_TEST_KEY"] = KEY_HEX
    # Workers must run the interpreter that has riffpe installed.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("riffpe-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    yield session
    session.stop()


VALUES = [4111111111111111, None, 1234567890123456789, 0, None, 8999999999999999999]
RADICES = [9] + [10] * 18  # 19-digit values below 9 * 10^18: fits a long


def _expected(values, encrypt=True):
    from riffpe import RiffpeX

    fpe = RiffpeX(RADICES, bytes.fromhex(KEY_HEX), b"t")
    present = [v for v in values if v is not None]
    out = iter((fpe.encrypt_ints if encrypt else fpe.decrypt_ints)(present, order="big"))
    return [None if v is None else next(out) for v in values]


def test_column_functions(spark):
    from pyspark.sql import functions as F

    from riffpe.spark import decrypt_column, encrypt_column

    if not hasattr(F, "arrow_udf"):
        pytest.skip("pyspark has no arrow_udf")
    df = spark.createDataFrame([(i, v) for i, v in enumerate(VALUES)], "id long, card long")
    params = dict(radices=RADICES, key_env="RIFFPE_TEST_KEY", tweak=b"t", order="big")
    enc = df.withColumn("card", encrypt_column("card", **params))
    plan = enc._jdf.queryExecution().toString()
    assert KEY_HEX not in plan and KEY_HEX.upper() not in plan
    rows = sorted(enc.collect())
    assert [r.card for r in rows] == _expected(VALUES)
    dec = enc.withColumn("card", decrypt_column("card", **params))
    assert [r.card for r in sorted(dec.collect())] == VALUES


def test_map_in_arrow(spark):
    from riffpe.spark import decrypt_columns, encrypt_columns

    df = spark.createDataFrame([(i, v) for i, v in enumerate(VALUES)], "id long, card long")
    params = dict(radices=RADICES, key_provider=lambda: bytes.fromhex(KEY_HEX),
                  key_id="test-key", tweak=b"t", order="big")
    enc = encrypt_columns(df, ["card"], **params)
    assert [r.card for r in sorted(enc.collect())] == _expected(VALUES)
    assert [r.card for r in sorted(decrypt_columns(enc, ["card"], **params).collect())] == VALUES


def test_domain_must_fit_long():
    from riffpe.spark import encrypt_column

    with pytest.raises(ValueError):
        encrypt_column("c", radix=10, digits=19)
