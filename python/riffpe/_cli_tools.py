"""``python -m riffpe.encrypt`` and ``python -m riffpe.decrypt``: the reference's flags."""

from __future__ import annotations

import argparse
import os
import sys

from ._cipher import Riffpe
from ._common import digits_to_int, int_to_digits


def _hex(text: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not hexadecimal") from None


def add_common_cli_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-n", "--radix", help="radix of each digit (default 100)", type=int,
                        default=100)
    parser.add_argument("-l", "--digits", help="number of digits (default 8)", type=int, default=8)
    parser.add_argument("-t", "--tweak", help="hex-encoded tweak", type=_hex, default=b"")
    parser.add_argument("-b", "--bytes-per-value", help="keystream bytes per value (default 16)",
                        type=int, default=16)


def add_crypt_cli_arguments(parser: argparse.ArgumentParser, is_decrypt: bool) -> None:
    add_common_cli_arguments(parser)
    parser.add_argument("-B", "--big-endian", action="store_true",
                        help="digit 0 is the most significant (default: the least)")
    parser.add_argument("-k", "--key", type=_hex,
                        help="hex-encoded AES key of 16, 24 or 32 bytes; without it, the "
                             "RIFFPE_KEY environment variable (other users can read a command "
                             "line)")
    verb = "decrypted" if is_decrypt else "encrypted"
    parser.add_argument("message", type=int,
                        help=f"integer to be {verb}, in [0, n^l) for radix n and l digits")


def crypt_main(parser: argparse.ArgumentParser, is_decrypt: bool) -> None:
    """Parses the command line, prints the result zero-padded to the domain's width."""
    args = parser.parse_args()
    key = args.key
    if key is None:
        try:
            key = _hex(os.environ["RIFFPE_KEY"])
        except (KeyError, argparse.ArgumentTypeError):
            parser.error("give -k/--key or a hex key in RIFFPE_KEY")
    if len(key) not in (16, 24, 32):
        parser.error(f"a {len(key)}-byte key is not an AES key (16, 24 or 32 bytes)")
    order = "big" if args.big_endian else "little"
    try:
        fpe = Riffpe(args.radix, args.digits, key, args.tweak, args.bytes_per_value)
        message = int_to_digits(args.message, args.digits, args.radix, order)
        output = (fpe.decrypt if is_decrypt else fpe.encrypt)(message)
    except ValueError as e:
        parser.error(str(e))
    width = len(str(args.radix**args.digits - 1))
    sys.stdout.write(f"{digits_to_int(output, args.radix, order):0{width}d}\n")
