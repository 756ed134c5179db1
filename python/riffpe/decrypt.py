"""``python -m riffpe.decrypt``: the reference's command line."""

import argparse

from ._cli_tools import add_crypt_cli_arguments, crypt_main

parser = argparse.ArgumentParser(description="Riffpe Decryption Command-Line Tool")
add_crypt_cli_arguments(parser, is_decrypt=True)


if __name__ == "__main__":
    crypt_main(parser, is_decrypt=True)
