"""Two workers of one bot against Telegram's limits (issue 25): the bot's calls a second are one budget for
both, so a crowd that writes to the bot at once is answered at the rate one bot may use — never over it,
as two workers counting each its own would be (twice the rate: Telegram's 429s)."""

from __future__ import annotations

import asyncio

import pytest

from bot.store import MemoryCallBudget

from .conftest import RunningBot
from .fake_telegram import FakeTelegram
from .test_random_sessions_workers import start_two_workers

#: People who open the bot at once: more than two workers' own budgets let through in a second.
CROWD = 90


def busiest_second(times: list[float]) -> int:
    """The most calls in any one-second window."""
    return max((sum(1 for t in times[i:] if t < start + 1.0) for i, start in enumerate(times)), default=0)


@pytest.mark.parametrize("shared", [True, False], ids=["one budget", "a budget each"])
async def test_a_crowd_on_two_workers_is_answered_within_the_bots_rate_only_with_one_budget(
    limited_tg: FakeTelegram, bots: list[RunningBot], shared: bool
) -> None:
    tg = limited_tg
    budget = MemoryCallBudget()
    calls = (budget, budget) if shared else (None, None)
    workers = await start_two_workers(tg, seed=5, pace=0.0, rate_limiter=True, calls=calls)
    bots.append(workers)
    crowd = [tg.add_user(f"Person {n}", language_code="en") for n in range(CROWD)]
    for person in crowd:
        tg.user_starts_bot(person)

    def answered() -> bool:
        return all(tg.bot_messages(tg.private_chat(p)) for p in crowd)

    await tg.wait_for(answered, timeout=30.0)
    await asyncio.sleep(0.2)  # the last answers' calls recorded
    assert workers.second is not None
    both = [workers.runtime.sender.stats["send"], workers.second.runtime.sender.stats["send"]]
    sent = sorted(c.time for c in tg.calls() if c.method == "sendMessage")
    peak = busiest_second(sent)
    print(f"{'one budget' if shared else 'a budget each'}: sent by each worker {both}, busiest second {peak}")
    if shared:
        assert tg.limited() == []  # Telegram never had to refuse the bot
        assert peak <= 30
        assert len(sent) >= CROWD
    else:
        # Each worker keeps its own 25 a second: together they go over the bot's 30, and Telegram refuses.
        assert tg.limited() != []
    assert min(both) > 0, both  # both workers answered people
    assert tg.rejected() == []
