#!/usr/bin/env bash
# The Python package's CI: a venv under target/, the package and its test dependencies, ruff,
# then pytest. Exits 0 only if tests ran and all passed.
#
#   python/ci.sh            # from anywhere in the repository
#   SKIP_SPARK=1 python/ci.sh   # without pyspark (its tests are then skipped)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
venv=$CARGO_TARGET_DIR/python-ci-venv

if [ ! -x "$venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
fi
py=$venv/bin/python
"$py" -m pip install --quiet --upgrade pip
# pandas below 3, as pyspark 4.3 recommends (it warns that it does not fully support 3 yet).
deps=(pytest hypothesis numpy pyarrow ruff "pandas<3")
if [ -z "${SKIP_SPARK:-}" ]; then deps+=(pyspark); fi
"$py" -m pip install --quiet "${deps[@]}"
"$py" -m pip install --quiet --force-reinstall --no-deps "$here"

"$venv/bin/ruff" check "$here"

export SPARK_LOCAL_IP=127.0.0.1
# From the repository root, so `import riffpe` is the installed package, not the source tree.
cd "$root"
status=0
"$venv/bin/pytest" -q -p no:cacheprovider "$here/tests" || status=$?
if [ "$status" -eq 5 ]; then
    echo "no tests ran" >&2
    exit 1
fi
exit "$status"
