"""Every shared conformance case (copied into tests/data) agrees with its ``expect``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine import replay
from engine.replay import run_case

DATA = Path(__file__).resolve().parents[1] / "data" / "conformance"
FILES = sorted(DATA.glob("*.json"))


def _cases() -> list[Any]:
    cases = []
    for path in FILES:
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            cases.append(pytest.param(case, id=f"{path.stem}:{case['id']}"))
    return cases


def test_the_shared_files_are_here() -> None:
    assert {p.name for p in FILES} >= {"crafted.json", "random-public.json"}


@pytest.mark.parametrize("case", _cases())
def test_case_agrees_with_expect(case: dict[str, Any]) -> None:
    out = run_case(case)
    assert out["id"] == case["id"]
    if "error" in case["expect"]:
        assert "error" in out, f"an illegal record was accepted: {out}"
        assert isinstance(out["error"], str) and out["error"]
    else:
        assert out.get("result") == case["expect"], out.get("error")


def test_cli_prints_one_line_per_case_in_order(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "format": "mus-conformance/1",
                "cases": [
                    {"id": "x", "type": "hand", "mano": 9},
                    {"id": "y", "type": "compare", "lance": "grande", "mano": 0, "hands": {"0": ["99z"]}},
                    "not a case",
                    {"id": "z", "type": "nope"},
                ],
            }
        )
    )
    files = [str(p) for p in FILES] + [str(bad)]
    proc = subprocess.run(
        [sys.executable, "-m", "engine.replay", *files], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    expected_ids = [c["id"] for p in FILES for c in json.loads(p.read_text())["cases"]]
    assert [line["id"] for line in lines[: len(expected_ids)]] == expected_ids
    assert all("error" in line for line in lines[len(expected_ids) :])
    assert len(lines) == len(expected_ids) + 4


def test_cli_reports_unreadable_file(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "engine.replay", str(tmp_path / "missing.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "cannot read" in proc.stderr


def test_cli_checks_expect_and_names_the_hand_and_the_field_of_a_mismatch(tmp_path: Path) -> None:
    cases = json.loads(FILES[0].read_text())["cases"]
    hand = next(
        c for c in cases if c["type"] == "hand" and "result" not in c["expect"] and "scores" in c["expect"]
    )
    wrong = json.loads(json.dumps(hand))
    wrong["id"] = "tbl-7"
    wrong["expect"]["scores"] = [wrong["expect"]["scores"][0] + 1, wrong["expect"]["scores"][1]]
    error_expected = dict(hand, id="tbl-8", expect={"error": "whatever"})
    path = tmp_path / "match.json"
    path.write_text(json.dumps({"format": "mus-conformance/1", "cases": [hand, wrong, error_expected]}))
    proc = subprocess.run(
        [sys.executable, "-m", "engine.replay", str(path)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 1
    assert len(proc.stdout.splitlines()) == 3  # the JSON lines are as ever
    told = proc.stderr.splitlines()
    a, b = hand["expect"]["scores"]
    assert told[0] == f"{path}: case tbl-7: scores: expected {a + 1}–{b}, replayed {a}–{b}"
    assert told[1].startswith(f"{path}: case tbl-8: expected an error, replayed {{")
    assert told[-1] == f"{path}: 1 of 3 cases agree with their expect"


def test_cli_tells_scores_capped_at_the_target_as_the_table_does() -> None:
    case = {"target": 40, "expect": {"scores": [79, 26]}}
    out = {"id": "t-3", "result": {"scores": [40, 26]}}
    assert replay.differences(case, out) == ["scores: expected 40–26 ([79, 26] uncapped), replayed 40–26"]
    assert replay._shown(case, "scores", [39, 26]) == "39–26"
    assert replay.differences(case, {"id": "t-3", "result": {"scores": [79, 26]}}) == []
