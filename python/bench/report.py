"""The Python package's benchmark report: writes its section of the top-level BENCHMARKS.md.

    target/python-ci-venv/bin/python python/bench/report.py        # after python/ci.sh

Needs the package installed with numpy, pyarrow and pyspark (python/ci.sh's environment), the
peers ``pyffx`` and ``ff3`` (``pip install pyffx ff3``), Java for Spark, and cargo: it builds
the Rust rate binary (``python/bench/rate``) and the command line in release mode. Everything
is measured in this one run, on this machine; the section replaces the one between the
``python-bench`` markers.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import riffpe

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
START, END = "<!-- python-bench:start -->", "<!-- python-bench:end -->"
KEY = bytes.fromhex("00112233445566778899aabbccddeeff")


# --- Machine ------------------------------------------------------------------------------


def _cpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def _commit() -> str:
    out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def _cargo_build(*args: str) -> None:
    env = dict(os.environ, CARGO_TARGET_DIR=str(TARGET))
    subprocess.run(["cargo", "build", "--release", "--quiet", *args], cwd=ROOT, env=env,
                   check=True)


# --- Batch encrypt_ints against the Rust batch crate -----------------------------------------

# (label, radix, digits, bytes per value): 16-digit numbers, as in the crate's throughput bench.
BATCH_CONFIGS = [("Riffpe(100,8) b=16", 100, 8, 16), ("Riffpe(10,16) b=18", 10, 16, 18)]


def batch_against_rust(count: int, rounds: int) -> list[tuple]:
    """Rows of (config, mode, Rust rows/s, Python rows/s), best of ``rounds`` interleaved runs."""
    _cargo_build("--manifest-path", str(ROOT / "python/bench/rate/Cargo.toml"))
    binary = TARGET / "release" / "riffpe-batch-rate"
    numbers = np.random.default_rng(1).integers(0, 10**16, size=count, dtype=np.uint64)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "numbers.u64"
        numbers.astype("<u8").tofile(path)
        for label, radix, digits, bpv in BATCH_CONFIGS:
            fpe = riffpe.Riffpe(radix, digits, KEY, b"", bpv)
            for mode, threads in (("lockstep", 1), ("parallel", None)):
                rust, python = [], []
                fpe.encrypt_ints(numbers[:4096], threads=threads)
                for _ in range(rounds):
                    out = subprocess.run(
                        [str(binary), str(path), str(radix), str(digits), str(bpv), mode],
                        capture_output=True, text=True, check=True,
                    )
                    rust.append(float(out.stdout))
                    start = time.perf_counter()
                    fpe.encrypt_ints(numbers, threads=threads)
                    python.append(time.perf_counter() - start)
                rows.append((label, mode, count / min(rust), count / min(python)))
                print(f"batch {label} {mode}: rust {count / min(rust):.0f}/s, "
                      f"python {count / min(python):.0f}/s", file=sys.stderr)
    return rows


# --- Spark against the command line -------------------------------------------------------


def spark_against_cli(count: int, cli: Path | None) -> dict:
    """A ``local[2]`` job encrypts a file of ``count`` 16-digit numbers (every thousandth-ish
    row null), another encrypts and decrypts it and counts rows that differ; the CLI encrypts
    the same file."""
    if cli is None:
        _cargo_build("-p", "riffpe-cli")
        cli = TARGET / "release" / "riffpe"
    key_file = ROOT / "examples/data/demo.key"
    key_hex = key_file.read_text().strip()
    rng = np.random.default_rng(2)
    numbers = rng.integers(0, 10**16, size=count, dtype=np.uint64)
    result = {"rows": count}
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "numbers.txt"
        text.write_text("\n".join(map(str, numbers.tolist())) + "\n")
        out = Path(tmp) / "tokens.txt"
        start = time.perf_counter()
        subprocess.run([str(cli), "encrypt", "--key-file", str(key_file), "--input", str(text),
                        "--output", str(out)], check=True)
        result["cli_seconds"] = time.perf_counter() - start

        os.environ["RIFFPE_BENCH_KEY"] = key_hex
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        from pyspark.sql import SparkSession
        from pyspark.sql import functions as F

        from riffpe.spark import decrypt_columns, encrypt_columns

        spark = (SparkSession.builder.master("local[2]").appName("riffpe-bench")
                 .config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false")
                 .config("spark.driver.memory", "2g")
                 .getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        params = dict(radix=100, digits=8, key_env="RIFFPE_BENCH_KEY")
        # Nulls where the value ends in 007: about one row in a thousand, fixed by the file.
        source = spark.read.text(str(text)).select(F.col("value").cast("long").alias("orig"))
        source = source.withColumn(
            "card", F.when(F.col("orig") % 1000 == 7, F.lit(None)).otherwise(F.col("orig"))
        )
        # One untimed job starts the Python workers and builds their ciphers.
        encrypt_columns(source.limit(1000), ["card"], **params).write.format("noop") \
            .mode("overwrite").save()
        start = time.perf_counter()
        encrypt_columns(source.select("card"), ["card"], **params).write \
            .mode("overwrite").parquet(str(Path(tmp) / "tokens.parquet"))
        result["spark_seconds"] = time.perf_counter() - start

        start = time.perf_counter()
        back = decrypt_columns(encrypt_columns(source, ["card"], **params), ["card"], **params)
        expected_null = F.col("orig") % 1000 == 7
        same = (expected_null & F.col("card").isNull()) | (~expected_null
                                                          & (F.col("card") == F.col("orig")))
        stats = back.agg(F.count(F.lit(1)).alias("rows"),
                         F.sum(F.when(same, 0).otherwise(1)).alias("differ"),
                         F.sum(F.when(F.col("card").isNull(), 1).otherwise(0)).alias("nulls")) \
            .collect()[0]
        result["roundtrip_seconds"] = time.perf_counter() - start
        result["roundtrip_rows"], result["differ"], result["nulls"] = \
            stats["rows"], stats["differ"], stats["nulls"]
        spark.stop()
    print(f"spark: {result}", file=sys.stderr)
    return result


# --- The reference's table ----------------------------------------------------------------

TAG = bytes.fromhex("0011223344556677")
BENCH_KEY = bytes.fromhex("0123456789abcdef0123456789abcdef")
# The reference benchmark's bytes per value: (bits, radix) -> bytes.
BPVS = {(128, 10): 18, (128, 100): 18, (128, 1000): 19,
        (256, 10): 34, (256, 100): 34, (256, 1000): 35}
# (label, digits, RiffpeX thresholds, Riffpe radices), as the reference's script runs them.
DATASETS = [("6-digit", 6, (25, 50), (10, 100, 1000)),
            ("9-digit", 9, (25, 50), (10, 1000)),
            ("16-digit", 16, (16, 25, 50), (10, 100))]


def _per_op(values, encode, encrypt, decrypt) -> tuple[float, float]:
    """Median µs per encryption and per decryption, each call timed on its own (the median,
    not the reference's mean, so that another process taking the core skews no cell)."""
    enc, dec = [], []
    for v in values:
        message = encode(v)
        a = time.perf_counter_ns()
        token = encrypt(message)
        b = time.perf_counter_ns()
        back = decrypt(token)
        c = time.perf_counter_ns()
        assert back == message
        enc.append(b - a)
        dec.append(c - b)
    return statistics.median(enc) / 1000, statistics.median(dec) / 1000


def _batch_per_item(fpe, values, repeats: int = 3) -> tuple[float, float]:
    """µs per item of one ``encrypt_ints`` / ``decrypt_ints`` call on one thread, best of
    ``repeats`` calls."""
    array = np.array(values, dtype=np.uint64)
    fpe.encrypt_ints(array[:64], threads=1)
    enc, dec = [], []
    for _ in range(repeats):
        a = time.perf_counter_ns()
        tokens = fpe.encrypt_ints(array, threads=1)
        b = time.perf_counter_ns()
        back = fpe.decrypt_ints(tokens, threads=1)
        c = time.perf_counter_ns()
        assert (back == array).all()
        enc.append(b - a)
        dec.append(c - b)
    return min(enc) / len(values) / 1000, min(dec) / len(values) / 1000


def reference_table(samples: int) -> dict:
    """{row: {dataset: (encrypt µs, decrypt µs) or a note}} in the reference's row order."""
    import ff3
    import pyffx

    table: dict[str, dict[str, object]] = {}

    def put(row, dataset, cell):
        table.setdefault(row, {})[dataset] = cell

    rng = random.Random(3)
    for label, nd, thresholds, radices in DATASETS:
        values = [rng.randrange(10**nd) for _ in range(samples)]
        fx = pyffx.Integer(BENCH_KEY, nd)
        put("pyffx", label, _per_op(values, lambda v: v, fx.encrypt, fx.decrypt))
        f3 = ff3.FF3Cipher(BENCH_KEY.hex(), TAG.hex())
        put("FF3 [Python]", label,
            _per_op(values, lambda v, nd=nd: format(v, f"0{nd}d"), f3.encrypt, f3.decrypt))
        for api in ("one call", "batch"):
            for radix in (10, 100, 1000):
                log = int(math.log10(radix))
                for bits in (128, 256):
                    row = f"Riffpe(n={radix}, bits={bits}) [riffpe, {api}]"
                    if radix not in radices or nd % log:
                        put(row, label, None)
                        continue
                    digits = nd // log
                    fpe = riffpe.Riffpe(radix, digits, BENCH_KEY, TAG, BPVS[bits, radix])
                    if api == "one call":
                        cell = _per_op(values, lambda v, d=digits, r=radix: riffpe.int_to_digits(
                            v, d, r), fpe.encrypt, fpe.decrypt)
                    else:
                        cell = _batch_per_item(fpe, values)
                    put(row, label, cell)
            for th in (16, 25, 50):
                row = f"RiffpeX(n>={th}) [riffpe, {api}]"
                if th not in thresholds:
                    put(row, label, "(same as n>=25)")
                    continue
                bases = riffpe.find_best_bases(xfactors={2: nd, 5: nd}, threshold=th)
                fpe = riffpe.RiffpeX(bases, BENCH_KEY, TAG)
                if api == "one call":
                    cell = _per_op(values, lambda v, b=bases: riffpe.int_to_bases(v, b),
                                   fpe.encrypt, fpe.decrypt)
                else:
                    cell = _batch_per_item(fpe, values)
                put(row, label, cell)
        print(f"reference table: {label} done", file=sys.stderr)
    return table


# --- The section --------------------------------------------------------------------------


def _rate(per_second: float) -> str:
    return f"{per_second / 1e6:.2f} M" if per_second >= 1e6 else f"{per_second / 1e3:.0f} k"


def _cell(value, which: int) -> str:
    if value is None:
        return "*N/A*"
    if isinstance(value, str):
        return value
    return f"{value[which]:.2f}"


def render(batch, spark, table, samples: int, batch_count: int, rounds: int) -> str:
    w = [START, "", "## Python package", ""]
    w.append(f"Written by `python/bench/report.py` in one run: {_cpu()}, {os.cpu_count()} cores, "
             f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit "
             f"{_commit()}, Python {sys.version.split()[0]}, riffpe {riffpe.__version__}.")
    w += ["", "### Batch `encrypt_ints` against the Rust batch crate", ""]
    w.append(f"{batch_count:,} random 16-digit numbers as numpy `uint64`, little-endian digits. "
             "Rust: `riffpe-batch`'s `encrypt_ints` timed inside a small Rust binary "
             "(`python/bench/rate`, the extension's release profile) on the same numbers; "
             "Python: `Riffpe.encrypt_ints` (`threads=1` for lockstep, `threads=None` for "
             f"parallel), timed around the call. Best of {rounds} runs each, the two sides "
             "alternating.")
    w += ["", "| configuration | mode | Rust rows/s | Python rows/s | Python ÷ Rust |",
          "| --- | --- | ---: | ---: | ---: |"]
    for label, mode, rust, python in batch:
        w.append(f"| {label} | {mode} | {_rate(rust)} | {_rate(python)} | {python / rust:.3f} |")
    if spark is not None:
        w += ["", "### Spark against the command line", ""]
        w.append(f"A text file of {spark['rows']:,} random 16-digit numbers, Riffpe(100, 8) "
                 "(the command line's default), key `examples/data/demo.key`. Spark "
                 "(`local[2]`, `encrypt_columns`, `mapInArrow`): read the file, cast to long, "
                 "null where the value ends in 007, encrypt, write Parquet; the session and "
                 "its Python workers started beforehand. Command line: `riffpe encrypt "
                 "--key-file ... --input FILE --output OUT` (release build, the binary timed "
                 "from start to exit).")
        w += ["", "| job | rows | seconds | rows/s |", "| --- | ---: | ---: | ---: |"]
        w.append(f"| command line: encrypt the file | {spark['rows']:,} | "
                 f"{spark['cli_seconds']:.2f} | {_rate(spark['rows'] / spark['cli_seconds'])} |")
        w.append(f"| Spark: encrypt the file | {spark['rows']:,} | {spark['spark_seconds']:.2f} | "
                 f"{_rate(spark['rows'] / spark['spark_seconds'])} |")
        w.append(f"| Spark: encrypt, decrypt, compare | {spark['roundtrip_rows']:,} | "
                 f"{spark['roundtrip_seconds']:.2f} | "
                 f"{_rate(spark['roundtrip_rows'] / spark['roundtrip_seconds'])} |")
        w += ["", f"Encrypt then decrypt gave the input back: {spark['differ']} rows differ of "
              f"{spark['roundtrip_rows']:,}, {spark['nulls']:,} nulls kept as nulls."]
    w += ["", "### The reference's Python benchmark, reproduced", ""]
    w.append("The layout of the reference's `Benchmark.md` (`pyriffpe/extras/benchmark.py`): "
             f"µs per operation over {samples:,} random samples per column (the median call; the "
             "reference gives the mean), its key, tag, "
             "bytes per value and RiffpeX bases (`find_best_bases(xfactors={2: d, 5: d}, "
             "threshold=n)`). `pyffx` and `ff3` (PyPI) are the peers. `one call`: "
             "`encrypt(digits)` timed per call, as the reference times its own; `batch`: "
             "`encrypt_ints` over all samples in one call on one thread (best of 3), divided by "
             "the count.")
    columns = [label for label, *_ in DATASETS]
    heads = [f"[{c} base10 integers]" for c in columns]
    for which, title in ((0, "Encryption time"), (1, "Decryption time")):
        w += ["", f"#### {title} (µs)", "", "| Implementation | " + " | ".join(heads) + " |",
              "| --- | " + " | ".join("---:" for _ in heads) + " |"]
        for row, cells in table.items():
            w.append(f"| {row} | " + " | ".join(_cell(cells.get(c), which) for c in columns)
                     + " |")
    w += ["", END]
    return "\n".join(w) + "\n"


def write_section(section: str) -> None:
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if START in text and END in text:
        before, rest = text.split(START, 1)
        after = rest.split(END, 1)[1].lstrip("\n")
        text = before + section + after
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-count", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spark-rows", type=int, default=1_000_000)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--cli", type=Path, help="a release build of the command line to time "
                        "(default: build this workspace's riffpe-cli)")
    parser.add_argument("--print", action="store_true", help="print, do not write BENCHMARKS.md")
    args = parser.parse_args()
    batch = batch_against_rust(args.batch_count, args.rounds)
    spark = None if args.no_spark else spark_against_cli(args.spark_rows, args.cli)
    table = reference_table(args.samples)
    section = render(batch, spark, table, args.samples, args.batch_count, args.rounds)
    if args.print:
        print(section)
    else:
        write_section(section)


if __name__ == "__main__":
    main()
