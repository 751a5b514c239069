"""How the benchmarks reduce what they measured to figures: percentiles, the most events in a sliding
window, the shortest gap, durations printed in ms or s."""

from __future__ import annotations

import itertools
import statistics


def percentile(values: list[float], q: float) -> float:
    """The value at quantile ``q`` (0..1) of ``values``, nearest rank (``nan`` when there are none)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def ms(seconds: float, digits: int = 0) -> str:
    """A duration: ``"12 ms"`` (``digits`` decimals) below 10 s, ``"12.3 s"`` above, ``"n/a"`` for nan."""
    if seconds != seconds:  # nan
        return "n/a"
    return f"{seconds * 1e3:.{digits}f} ms" if seconds < 10 else f"{seconds:.1f} s"


def spread(values: list[float]) -> str:
    """p50, p99, max and mean of values in milliseconds, on one line."""
    return (
        f"p50 {percentile(values, 0.5):.1f} ms · p99 {percentile(values, 0.99):.1f} ms · "
        f"max {max(values):.1f} ms · mean {statistics.fmean(values):.1f} ms"
    )


def most_within(series: list[float], width: float) -> int:
    """The most of the sorted instants ``series`` within any ``width`` seconds (sliding)."""
    j, most = 0, 0
    for i, t in enumerate(series):
        while series[j] <= t - width:
            j += 1
        most = max(most, i - j + 1)
    return most


def shortest_gap(series: list[float]) -> float:
    """The shortest time between two consecutive sorted instants (``inf`` with fewer than two)."""
    return min((b - a for a, b in itertools.pairwise(series)), default=float("inf"))
