"""Optimistic read-modify-write of a table on top of :class:`~bot.store._ports.TableStore`."""

from __future__ import annotations

import asyncio
import inspect
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import NamedTuple, TypeAlias

from bot.store._ports import StoredTable, TableNotFound, TableStore, VersionConflict

__all__ = ["Mutate", "MutateResult", "Mutation", "update_with_retries"]


class Mutation(NamedTuple):
    """What a mutate function returns: the new data and the arguments of ``compare_and_set``.

    A plain 4-tuple ``(data, chat_key, user_keys, finished)`` is accepted as well.
    """

    data: str
    chat_key: str | None
    user_keys: Sequence[str]
    finished: bool = False


MutateResult: TypeAlias = tuple[str, str | None, Sequence[str], bool] | None
"""A new state to write, or ``None`` to write nothing (e.g. the action no longer applies)."""

Mutate: TypeAlias = Callable[[StoredTable], MutateResult | Awaitable[MutateResult]]
"""Function from the current stored table to a :data:`MutateResult` (it may be a coroutine function)."""


async def update_with_retries(
    store: TableStore,
    table_id: str,
    mutate: Mutate,
    attempts: int = 5,
    *,
    backoff_seconds: float = 0.0,
) -> StoredTable:
    """Load the table, apply ``mutate`` and compare-and-set the result, retrying on :class:`VersionConflict`.

    ``mutate`` is called again on the fresh table after each conflict, so it must be free of side effects
    (or idempotent). It may raise to abort (the exception propagates and nothing is written), or return
    ``None`` to write nothing, in which case the current table is returned. After ``attempts`` conflicting
    attempts the last conflict is raised as a :class:`VersionConflict`. ``backoff_seconds`` > 0 adds a
    random pause of up to ``backoff_seconds × attempt`` between attempts (0: just yield to the loop).

    Raises :class:`TableNotFound` if the table does not exist (or disappears between attempts) and
    :class:`~bot.store._ports.StoreUnavailable` if the backend is unreachable.
    """
    if attempts < 1:
        raise ValueError(f"attempts must be >= 1, not {attempts}")
    last: VersionConflict | None = None
    for attempt in range(1, attempts + 1):
        current = await store.load(table_id)
        if current is None:
            raise TableNotFound(table_id)
        outcome = mutate(current)
        result: MutateResult = await outcome if inspect.isawaitable(outcome) else outcome
        if result is None:
            return current
        data, chat_key, user_keys, finished = result
        try:
            return await store.compare_and_set(
                table_id,
                current.version,
                data,
                chat_key=chat_key,
                user_keys=user_keys,
                finished=finished,
            )
        except VersionConflict as conflict:
            last = conflict
        if attempt < attempts:
            # Jitter spreads colliding writers apart; plain 0 just lets the winner's siblings run first.
            await asyncio.sleep(random.uniform(0.0, backoff_seconds * attempt) if backoff_seconds > 0 else 0)
    assert last is not None
    raise VersionConflict(
        table_id,
        last.expected,
        last.actual,
        f"table {table_id!r}: still conflicting after {attempts} attempts (last found version {last.actual})",
    ) from last
