#!/usr/bin/env bash
# Regenerate deploy/constraints.txt: the exact versions the image installs (deploy/Dockerfile), so that two
# builds of one commit run the same dependencies and a rollback rebuilds what ran before.
#
#   deploy/lock.sh [PYTHON]   # PYTHON: the image's Python (3.12, as in the Dockerfile's FROM); default python3.12
#
# It resolves pyproject.toml's runtime dependencies (no dev extras) in a throwaway virtualenv and writes what
# pip installed. Run it after changing a dependency range in pyproject.toml, and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3.12}
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir .
{
    echo "# The exact versions the image installs (deploy/Dockerfile: pip install --constraint ...)."
    echo "# Written by deploy/lock.sh with $("$venv/bin/python" -V); do not edit by hand."
    "$venv/bin/pip" freeze --exclude musbot --exclude pip --exclude setuptools --exclude wheel
} >deploy/constraints.txt
echo "deploy/constraints.txt: $(grep -vc '^#' deploy/constraints.txt) packages"
