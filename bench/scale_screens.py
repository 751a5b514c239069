"""bench/scale.py's ``--check-screens``: once the workers' lanes have drained, whether each group's screen
shows the hand and turn its table has stored, and which hands two messages of a group show."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

from bench.players import Group
from bench.scale_load import Load
from bot.kernel import TableStatus
from engine.hand import Phase
from engine.state import restore_match
from tests.e2e.fake_telegram import FakeTelegram, StoredMessage

QUIET = 4.0
"""The workers' lanes count as drained when no Bot API call came for this many seconds (the adapter's
``ChatRateLimiter`` lets a process post in a group once every 3 s after a burst of 20)."""


async def quiet(tg: FakeTelegram, timeout: float = 90.0) -> float:
    """Wait until no Bot API call came for ``QUIET`` seconds (lanes drained); the seconds it took."""
    started = tg.now()
    while tg.now() - started < timeout:
        calls = tg.calls()
        last = calls[-1].time if calls else started
        if tg.now() - last >= QUIET:
            return max(0.0, last - started)
        await asyncio.sleep(0.2)
    return timeout


def table_message(tg: FakeTelegram, group: Group, table_id: str) -> StoredMessage | None:
    """The group's latest table message of this table (the one with its "My cards" button)."""
    for message in reversed(tg.bot_messages(group.chat)):
        if any(d and d.startswith(f"{table_id}.") and d.endswith(".cards") for _, d in message.buttons):
            return message
    return None


def last_calls(tg: FakeTelegram, group: Group, count: int = 12) -> list[str]:
    """The group's last calls (what left a screen behind): method, message, first line, buttons."""
    lines = []
    for call in tg.calls(chat_id=group.chat.id)[-count:]:
        params = call.params if isinstance(call.params, dict) else {}
        markup = params.get("reply_markup")
        rows = (markup or {}).get("inline_keyboard", []) if isinstance(markup, dict) else []
        first = str(params.get("text", "")).split("\n")[0][:50]
        kept = "ok" if call.ok else f"{call.status}"
        lines.append(
            f"{call.time:.3f} {call.method} msg={params.get('message_id', '-')} {kept} "
            f"buttons={sum(len(r) for r in rows)} {first!r}"
        )
    return lines


async def screens_behind(load: Load, examples: list[str]) -> tuple[int, int]:
    """After the lanes drained: (group screens not showing the stored hand and turn, tables checked); each
    screen behind is described in ``examples``, with the group's last calls."""
    behind = checked = 0
    examples.clear()
    for group in load.groups:
        if not group.tables:
            continue
        table_id = group.tables[-1]
        loaded = await load.load(table_id)
        if loaded is None or loaded[1].status is not TableStatus.PLAYING or loaded[1].match is None:
            continue
        state, match = loaded[1], loaded[1].match
        hand = restore_match(match, random.Random(0)).hand
        if hand is None or hand.over:
            continue
        checked += 1
        step = None if hand.phase is Phase.DISCARD else f"{state.hand_no}-{len(hand.log)}"
        message = table_message(load.tg, group, table_id)
        buttons = [] if message is None else [(d or "").split(".") for _, d in message.buttons]
        hands = {parts[1] for parts in buttons if len(parts) == 3 and parts[2] == "cards"}
        steps = {parts[1] for parts in buttons if len(parts) == 3 and "-" in parts[1]}
        if hands != {str(state.hand_no)} or steps != ({step} if step else set()):
            behind += 1
            shown = "/".join(sorted(steps)) or f"hand {'/'.join(sorted(hands)) or '-'}, no turn buttons"
            examples.append(
                f"{table_id}: stored v{loaded[0]} turn {step or 'discards'}, screen shows {shown}"
            )
            examples.extend(f"        {line}" for line in last_calls(load.tg, group))
    return behind, checked


def hand_of(message: StoredMessage) -> tuple[str, str] | None:
    """The (table, hand) a table message was posted for: its "My cards" button, in any of its versions."""
    for version in message.history:
        for row in (version.reply_markup or {}).get("inline_keyboard", []):
            for button in row:
                parts = str(button.get("callback_data", "")).split(".")
                if len(parts) == 3 and parts[2] == "cards":
                    return parts[0], parts[1]
    return None


def hands_shown_twice(tg: FakeTelegram, groups: list[Group]) -> int:
    """Hands of which a group shows more than one table message (each hand is one message)."""
    repeated = 0
    for group in groups:
        shown = [hand_of(message) for message in tg.bot_messages(group.chat)]
        hands = Counter(hand for hand in shown if hand is not None)
        repeated += sum(1 for n in hands.values() if n > 1)
    return repeated
