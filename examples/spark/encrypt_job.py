"""Encrypt (or decrypt) integer columns of a Parquet or CSV dataset with Riffpe.

    spark-submit examples/spark/encrypt_job.py --input cards.parquet --output tokens.parquet \
        --columns card --radix 10 --digits 16

A CSV's columns are read as strings and stay strings (zero-padded tokens, as the riffpe
command writes them); Parquet integer columns stay longs. The key is never a command-line
argument: each executor reads it (hex) from the environment
variable named by --key-env (default RIFFPE_KEY).
"""

import argparse

from pyspark.sql import SparkSession
from riffpe.spark import decrypt_columns, encrypt_columns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="Parquet directory or CSV file")
    parser.add_argument("--output", required=True, help="Parquet directory to write")
    parser.add_argument("--columns", required=True, help="comma-separated integer columns")
    parser.add_argument("--radix", type=int, default=10)
    parser.add_argument("--digits", type=int, default=16)
    parser.add_argument("--radices", help="comma-separated radices (RiffpeX) instead")
    parser.add_argument("--tweak", default="", help="tweak as text")
    parser.add_argument("--big-endian", action="store_true")
    parser.add_argument("--decrypt", action="store_true")
    parser.add_argument("--key-env", default="RIFFPE_KEY")
    args = parser.parse_args()

    spark = SparkSession.builder.appName("riffpe-encrypt").getOrCreate()
    if args.input.endswith(".csv"):
        df = spark.read.csv(args.input, header=True, inferSchema=False)
    else:
        df = spark.read.parquet(args.input)
    domain = (
        {"radices": [int(r) for r in args.radices.split(",")]}
        if args.radices
        else {"radix": args.radix, "digits": args.digits}
    )
    transform = decrypt_columns if args.decrypt else encrypt_columns
    out = transform(
        df,
        [c.strip() for c in args.columns.split(",")],
        key_env=args.key_env,
        tweak=args.tweak.encode(),
        order="big" if args.big_endian else "little",
        **domain,
    )
    out.write.mode("overwrite").parquet(args.output)
    spark.stop()


if __name__ == "__main__":
    main()
