#!/usr/bin/env bash
# Runs the reference package's own test files, unchanged, against the installed `riffpe`.
#
#   python/tests/run_reference_tests.sh PATH   # PATH: a checkout or unpacked sdist of the reference
#
# The files are copied to a scratch directory first, so that `import riffpe` finds the installed
# package and not the reference's sources. Extra arguments go to pytest.
set -euo pipefail

src=${1:?usage: run_reference_tests.sh REFERENCE_CHECKOUT [pytest args]}
shift
tests=""
for candidate in "$src/pyriffpe/tests" "$src/tests"; do
    if [ -d "$candidate" ]; then tests=$candidate; break; fi
done
if [ -z "$tests" ]; then
    echo "no tests/ or pyriffpe/tests/ under $src" >&2
    exit 2
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp "$tests"/test_*.py "$scratch"/
cd "$scratch"
python=${PYTHON:-python3}
"$python" -c 'import riffpe, riffpe._native' # fail early if the package is not installed
exec "$python" -m pytest -p no:cacheprovider -q "$@" .
