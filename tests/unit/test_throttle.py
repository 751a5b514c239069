"""The command throttle: a burst, then one "slow down", then silence until the bucket refills."""

from __future__ import annotations

from bot.app._throttle import Throttle, Verdict


def test_a_burst_then_one_warning_then_silence_then_allowed_again() -> None:
    now = [0.0]
    throttle = Throttle(burst=3, per_second=0.5, clock=lambda: now[0])
    verdicts = [throttle.check("u", "c") for _ in range(6)]
    assert verdicts == [Verdict.ALLOW] * 3 + [Verdict.WARN, Verdict.QUIET, Verdict.QUIET]
    assert throttle.check("u", "other chat") is Verdict.ALLOW  # per chat
    assert throttle.check("someone else", "c") is Verdict.ALLOW  # per person
    now[0] = 2.0  # one token back
    assert throttle.check("u", "c") is Verdict.ALLOW
    assert throttle.check("u", "c") is Verdict.WARN  # a new run of refusals is told once more


def test_the_buckets_are_bounded() -> None:
    throttle = Throttle(capacity=100)
    for i in range(1000):
        throttle.check(f"u{i}", "c")
    assert len(throttle) == 100
