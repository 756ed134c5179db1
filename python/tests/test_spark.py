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


def test_sql_functions(spark):
    from decimal import Decimal

    from pyspark.sql import functions as F

    from riffpe.spark import decrypt_udf, encrypt_udf

    if not hasattr(F, "arrow_udf"):
        pytest.skip("pyspark has no arrow_udf")
    params = dict(radices=RADICES, key_env="RIFFPE_TEST_KEY", tweak=b"t", order="big")
    ssn = dict(format="ssn", context=b"people")
    spark.udf.register("enc_card", encrypt_udf(**params))
    spark.udf.register("dec_card", decrypt_udf(**params))
    spark.udf.register("enc_ssn", encrypt_udf(**ssn, key_env="RIFFPE_TEST_KEY"))
    spark.udf.register("dec_ssn", decrypt_udf(**ssn, key_env="RIFFPE_TEST_KEY"))
    small = [42, None, 7, 0, None, 2**31 - 1]
    rows = [
        (i, v, None if v is None else f" {v}", None if v is None else Decimal(v), n, s)
        for i, (v, n, s) in enumerate(zip(VALUES, small, SSNS + [None]))
    ]
    spark.createDataFrame(
        rows, "id long, card long, text string, amount decimal(19,0), small int, ssn string"
    ).createOrReplaceTempView("people")
    query = (
        "SELECT enc_card(card) AS card, enc_card(text) AS text, enc_card(amount) AS amount,"
        " enc_card(small) AS small, enc_ssn(ssn) AS ssn FROM people ORDER BY id"
    )
    enc = spark.sql(query)
    plan = enc._jdf.queryExecution().toString()
    assert KEY_HEX not in plan and KEY_HEX.upper() not in plan
    out = enc.collect()
    for name in ("card", "text", "amount"):
        assert [r[name] for r in out] == _expected(VALUES), name
    assert [r.small for r in out] == _expected(small)
    assert [r.ssn for r in out] == _expected_strings(SSNS + [None], **ssn)
    back = spark.sql(
        "SELECT dec_card(enc_card(card)) AS card, dec_ssn(enc_ssn(ssn)) AS ssn"
        " FROM people ORDER BY id"
    ).collect()
    assert [r.card for r in back] == VALUES and [r.ssn for r in back] == SSNS + [None]
    with pytest.raises(Exception, match="takes integers, decimal\\(p, 0\\) or strings, not double"):
        spark.sql("SELECT enc_card(CAST(card AS DOUBLE)) FROM people").collect()
    with pytest.raises(Exception, match="takes strings, not int64: cast its argument to string"):
        spark.sql("SELECT enc_ssn(card) FROM people").collect()


def test_map_in_arrow(spark):
    from riffpe.spark import decrypt_columns, encrypt_columns

    df = spark.createDataFrame([(i, v) for i, v in enumerate(VALUES)], "id long, card long")
    params = dict(radices=RADICES, key_provider=lambda: bytes.fromhex(KEY_HEX),
                  key_id="test-key", tweak=b"t", order="big")
    enc = encrypt_columns(df, ["card"], **params)
    assert [r.card for r in sorted(enc.collect())] == _expected(VALUES)
    assert [r.card for r in sorted(decrypt_columns(enc, ["card"], **params).collect())] == VALUES


@pytest.mark.parametrize("constant_time", [True, False])
def test_selection_columns(spark, constant_time):
    from riffpe.spark import decrypt_columns, encrypt_columns

    cards = VALUES[: len(SSNS)]
    df = spark.createDataFrame(
        [(i, v, s) for i, (v, s) in enumerate(zip(cards, SSNS))], "id long, card long, ssn string"
    )
    key = dict(key_env="RIFFPE_TEST_KEY", constant_time=constant_time)
    card_params = dict(radices=RADICES, tweak=b"t", order="big", **key)
    ssn_params = dict(format="ssn", context=b"people", **key)
    enc = encrypt_columns(encrypt_columns(df, ["card"], **card_params), ["ssn"], **ssn_params)
    rows = sorted(enc.collect())
    assert [r.card for r in rows] == _expected(cards)
    assert [r.ssn for r in rows] == _expected_strings(SSNS, format="ssn", context=b"people")
    dec = decrypt_columns(decrypt_columns(enc, ["card"], **card_params), ["ssn"], **ssn_params)
    rows = sorted(dec.collect())
    assert [r.card for r in rows] == cards
    assert [r.ssn for r in rows] == SSNS


ACCOUNTS = [" 0843305314807368", None, "", "1465289151938951", "42\t", "  ", "0" * 22 + "42"]


def _padded_tokens(values, encrypt=True):
    """The integers in ``values`` through Riffpe(10, 16), zero-padded between their blanks."""
    from riffpe import Riffpe

    fpe = Riffpe(10, 16, bytes.fromhex(KEY_HEX), b"")
    out = []
    for v in values:
        if v is None or not v.strip():
            out.append(v)
            continue
        lead = v[: len(v) - len(v.lstrip())]
        trail = v[len(v.rstrip()):]
        [n] = (fpe.encrypt_ints if encrypt else fpe.decrypt_ints)([int(v)])
        out.append(f"{lead}{n:016d}{trail}")
    return out


def test_integers_in_string_and_decimal_columns(spark):
    from decimal import Decimal

    from riffpe.spark import decrypt_columns, encrypt_columns

    df = spark.createDataFrame(
        [(i, a, None if a is None or not a.strip() else Decimal(int(a)))
         for i, a in enumerate(ACCOUNTS)],
        "id long, account string, number decimal(16,0)",
    )
    params = dict(radix=10, digits=16, key_env="RIFFPE_TEST_KEY")
    enc = encrypt_columns(df, ["account", "number"], **params)
    assert dict(enc.dtypes) == {"id": "bigint", "account": "string", "number": "bigint"}
    rows = sorted(enc.collect())
    # Strings stay strings, zero-padded between their blanks, as the command line writes them.
    assert [r.account for r in rows] == _padded_tokens(ACCOUNTS)
    assert [None if r.number is None else f"{r.number:016d}" for r in rows] == [
        None if t is None or not t.strip() else t.strip() for t in _padded_tokens(ACCOUNTS)
    ]
    back = sorted(decrypt_columns(enc, ["account"], **params).collect())
    assert [r.account for r in back] == [
        v if v is None or not v.strip() else _padded_tokens([v], False)[0]
        for v in _padded_tokens(ACCOUNTS)
    ]
    assert back[1].account is None and back[4].account == "0000000000000042\t"
    from pyspark.sql import functions as F

    if hasattr(F, "arrow_udf"):
        from riffpe.spark import encrypt_column

        longs = sorted(df.withColumn("account", encrypt_column("account", **params))
                       .withColumn("number", encrypt_column("number", **params)).collect())
        tokens = [None if t is None or not t.strip() else int(t) for t in _padded_tokens(ACCOUNTS)]
        assert [r.account for r in longs] == tokens and [r.number for r in longs] == tokens


def test_malformed_integer_strings_raise_never_become_null(spark):
    from pyspark.sql import functions as F

    from riffpe.spark import encrypt_column, encrypt_columns

    df = spark.createDataFrame([(0, "1465289151938951"), (1, "12a4")], "id long, account string")
    params = dict(radix=10, digits=16, key_env="RIFFPE_TEST_KEY")
    ansi = spark.conf.get("spark.sql.ansi.enabled")
    try:
        # Without ANSI SQL, a cast to long would have made "12a4" null.
        spark.conf.set("spark.sql.ansi.enabled", "false")
        with pytest.raises(Exception, match="row 1: the value is not a decimal integer") as e:
            encrypt_columns(df.coalesce(1), ["account"], **params).collect()
        assert "12a4" not in str(e.value)
        if hasattr(F, "arrow_udf"):
            with pytest.raises(Exception, match="row 1: the value is not a decimal integer"):
                df.coalesce(1).withColumn("account", encrypt_column("account", **params)).collect()
    finally:
        spark.conf.set("spark.sql.ansi.enabled", ansi)
    from decimal import Decimal

    amounts = spark.createDataFrame([(0, Decimal("1.50"))], "id long, amount decimal(10,2)")
    with pytest.raises(TypeError, match="'amount' is decimal\\(10,2\\)"):
        encrypt_columns(amounts, ["amount"], **params)


def test_domain_must_fit_long():
    from riffpe.spark import encrypt_column

    with pytest.raises(ValueError):
        encrypt_column("c", radix=10, digits=19)


SSNS = ["123-45-6789", None, "000-00-0000", "999-99-9999", None]


def _expected_strings(values, **options):
    from riffpe import FormatCipher

    return FormatCipher(bytes.fromhex(KEY_HEX), **options).encrypt_strings(values)


def test_string_column_functions(spark):
    from pyspark.sql import functions as F

    from riffpe.spark import decrypt_column, encrypt_column

    if not hasattr(F, "arrow_udf"):
        pytest.skip("pyspark has no arrow_udf")
    df = spark.createDataFrame([(i, v) for i, v in enumerate(SSNS)], "id long, ssn string")
    params = dict(format="ssn", context=b"people", key_env="RIFFPE_TEST_KEY")
    enc = df.withColumn("ssn", encrypt_column("ssn", **params))
    plan = enc._jdf.queryExecution().toString()
    assert KEY_HEX not in plan and KEY_HEX.upper() not in plan
    assert [r.ssn for r in sorted(enc.collect())] == _expected_strings(
        SSNS, format="ssn", context=b"people"
    )
    dec = enc.withColumn("ssn", decrypt_column("ssn", **params))
    assert [r.ssn for r in sorted(dec.collect())] == SSNS


def test_string_map_in_arrow(spark):
    from riffpe.spark import decrypt_columns, encrypt_columns

    cards = ["4111 1111 1111 1111", None, "5500-0000-0000-0004"]
    df = spark.createDataFrame([(i, v) for i, v in enumerate(cards)], "id long, card string")
    params = dict(template=None, format="card", keep_suffix=4,
                  key_provider=lambda: bytes.fromhex(KEY_HEX), key_id="test-key")
    enc = encrypt_columns(df, ["card"], **params)
    assert [r.card for r in sorted(enc.collect())] == _expected_strings(
        cards, format="card", keep_suffix=4
    )
    assert [r.card for r in sorted(decrypt_columns(enc, ["card"], **params).collect())] == cards


def test_string_format_checked_on_the_driver():
    from riffpe.spark import encrypt_column

    with pytest.raises(ValueError, match="no named format"):
        encrypt_column("c", format="nope")
    with pytest.raises(ValueError, match="not both"):
        encrypt_column("c", format="ssn", radix=10, digits=9)
    with pytest.raises(ValueError, match="need format"):
        encrypt_column("c", radix=10, digits=9, keep_prefix=2)
    # Every FormatCipher argument passes through.
    encrypt_column("c", template="999-99-9999", literals_optional=True)
