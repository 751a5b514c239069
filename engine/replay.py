"""The conformance interface: ``python -m engine.replay FILE [FILE…]``.

Reads ``mus-conformance/1`` files and prints one JSON object per case per line, in input order:
``{"id": ID, "result": {...}}`` or ``{"id": ID, "error": "why"}`` when the record is illegal. It never
crashes on bad input.

A case that carries its ``expect`` is checked against it: each difference is told on stderr, one line naming
the file, the case (a hand exported by ``musbot history --json`` is named ``TABLE-HAND``) and the field, with
scores as the table and the history show them (capped at the target: ``40–26``; the JSON lines keep the
uncapped scores of the conformance format); then one line per file says how many cases agreed. The exit
status is 0 when every file could be read and every checked case agrees, 1 otherwise.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from engine.cards import parse_cards
from engine.errors import CardError, MusError, RecordError
from engine.evaluation import Lance, compare, evaluate
from engine.record import parse_record, replay

FORMAT = "mus-conformance/1"


def run_compare(case: dict[str, Any]) -> dict[str, Any]:
    """Result of a ``compare`` case: the winner of the lance, every seat's pares kind and juego total."""
    try:
        lance = Lance(case["lance"])
    except (KeyError, ValueError):
        raise RecordError(f"unknown lance {case.get('lance')!r}") from None
    mano = case.get("mano")
    if mano not in (0, 1, 2, 3):
        raise RecordError(f"mano must be a seat 0..3, not {mano!r}")
    raw = case.get("hands")
    if not isinstance(raw, dict) or sorted(str(k) for k in raw) != ["0", "1", "2", "3"]:
        raise RecordError("hands must name seats 0, 1, 2 and 3")
    try:
        hands = {int(k): parse_cards(v) for k, v in raw.items()}
    except (CardError, TypeError) as exc:
        raise RecordError(str(exc)) from None
    every = [c for h in hands.values() for c in h]
    if any(len(h) != 4 for h in hands.values()) or len(set(every)) != 16:
        raise RecordError("four distinct cards per seat are needed")
    evals = {seat: evaluate(h) for seat, h in hands.items()}
    return {
        "winner": compare(lance, hands, mano),
        "pares": {str(s): evals[s].pares_kind.label for s in range(4)},
        "juego": {str(s): evals[s].total for s in range(4)},
    }


def run_hand(case: dict[str, Any]) -> dict[str, Any]:
    """Result of a ``hand`` case: final scores, the game's winner, stones per lance and any órdago."""
    hand = replay(parse_record(case))
    if not hand.over:
        raise RecordError(f"the record stops while seat {hand.turn} must act ({hand.phase.value})")
    return {
        "scores": list(hand.scores),
        "winner": hand.winner,
        "points": hand.points_by_lance(),
        "ordago": None
        if hand.ordago is None
        else {"lance": hand.ordago.lance.value, "team": hand.ordago.team},
    }


def run_case(case: Any) -> dict[str, Any]:
    """Run one case; never raises (an illegal or malformed case becomes an ``error`` line)."""
    case_id = case.get("id") if isinstance(case, dict) else None
    try:
        if not isinstance(case, dict):
            raise RecordError("a case is a JSON object")
        kind = case.get("type")
        if kind == "compare":
            return {"id": case_id, "result": run_compare(case)}
        if kind == "hand":
            return {"id": case_id, "result": run_hand(case)}
        raise RecordError(f"unknown case type {kind!r}")
    except MusError as exc:
        return {"id": case_id, "error": str(exc)}
    except Exception as exc:
        return {"id": case_id, "error": f"{type(exc).__name__}: {exc}"}


def read_cases(path: str) -> Iterator[Any]:
    """The cases of one conformance file; raises ``OSError`` or ``ValueError`` if it cannot be read."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if isinstance(data, dict) and isinstance(data.get("cases"), list):
        if data.get("format", FORMAT) != FORMAT:
            raise ValueError(f"unsupported format {data.get('format')!r}")
        yield from data["cases"]
    elif isinstance(data, list):
        yield from data
    else:
        raise ValueError("not a mus-conformance file")


def differences(case: Any, out: dict[str, Any]) -> list[str]:
    """How a case's replayed ``out`` differs from its ``expect``: one phrase per field (none: it agrees)."""
    expect = case.get("expect") if isinstance(case, dict) else None
    if not isinstance(expect, dict):
        return []
    if "error" in expect:
        return (
            [] if "error" in out else [f"expected an error, replayed {_shown(case, 'result', out['result'])}"]
        )
    if "error" in out:
        return [f"expected a result, replayed the error {out['error']!r}"]
    result = out["result"]
    found = []
    for field in sorted(set(expect) | set(result)):
        want, got = expect.get(field), result.get(field)
        if want != got:
            found.append(
                f"{field}: expected {_shown(case, field, want)}, replayed {_shown(case, field, got)}"
            )
    return found


def _shown(case: dict[str, Any], field: str, value: Any) -> str:
    """A value as a person reads it: scores capped at the target (as the table says them), else JSON."""
    target = case.get("target", 40)
    if field == "scores" and isinstance(value, list) and all(isinstance(v, int) for v in value):
        capped = "–".join(str(min(v, target)) if isinstance(target, int) else str(v) for v in value)
        return capped if capped == "–".join(map(str, value)) else f"{capped} ({value} uncapped)"
    return json.dumps(value, ensure_ascii=False)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m engine.replay``."""
    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths:
        print("usage: python -m engine.replay FILE [FILE…]", file=sys.stderr)
        return 2
    status = 0
    for path in paths:
        try:
            cases = list(read_cases(path))
        except (OSError, ValueError) as exc:
            print(f"{path}: cannot read: {exc}", file=sys.stderr)
            status = 1
            continue
        checked = agreed = 0
        for case in cases:
            out = run_case(case)
            print(json.dumps(out, ensure_ascii=False), flush=False)
            if isinstance(case, dict) and isinstance(case.get("expect"), dict):
                checked += 1
                found = differences(case, out)
                agreed += not found
                for difference in found:
                    sys.stdout.flush()
                    print(f"{path}: case {out['id']}: {difference}", file=sys.stderr)
        if checked:
            sys.stdout.flush()
            print(f"{path}: {agreed} of {checked} cases agree with their expect", file=sys.stderr)
            if agreed < checked:
                status = 1
    sys.stdout.flush()
    return status


if __name__ == "__main__":
    raise SystemExit(main())
