"""The version (issue 27): one source, ``version`` in ``pyproject.toml``, read back from the installed
distribution's metadata; ``musbot --version`` says it, ``musbot run`` logs it as it starts and exports it as
the ``mus_build_info`` gauge (``tests/e2e/test_musbot_run.py`` checks both on the real process)."""

from __future__ import annotations

import importlib.metadata
import platform
import tomllib
from pathlib import Path

import pytest
from prometheus_client import REGISTRY, generate_latest

from adapters import cli
from bot.kernel import record_build
from bot.ops import musbot_version

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT_VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def test_the_version_is_pyproject_s_read_from_the_metadata() -> None:
    # (an editable install keeps the version it was installed with: reinstall after changing it)
    assert musbot_version() == PYPROJECT_VERSION == importlib.metadata.version("musbot")


def test_musbot_version_says_it_and_reads_no_setting(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURN_TIMEOUT", "nan")  # a bad setting does not stop --version
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"musbot {PYPROJECT_VERSION}\n"


def test_code_that_is_not_installed_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert musbot_version() == "0+unknown"


def test_the_build_info_gauge_names_the_version_and_python() -> None:
    record_build("9.8.7")
    metrics = generate_latest(REGISTRY).decode()
    assert f'mus_build_info{{python="{platform.python_version()}",version="9.8.7"}} 1.0' in metrics
