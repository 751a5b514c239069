"""Redis going away under a running bot core: frozen, killed. Commands must answer quickly, and the embedded
server must come back by itself with everything it had acknowledged.

Each test builds the core as ``musbot`` does (:func:`bot.ops._bootstrap.build_app`), on an embedded server in
a temporary data directory of its own.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aof import aof_written

from bot.i18n import LANGUAGES, translator
from bot.i18n import common as msg
from bot.kernel import ChatRef, UserRef
from bot.ops import App, Settings, build_app
from bot.store import StoreUnavailable
from bot.table import FlowSettings

from .redis_processes import redis_servers_in

ANE = UserRef("tg:1", "Ane", "en")
BRAIS = UserRef("tg:2", "Brais", "en")
GROUP = ChatRef("tg:-100", False, "Group")
SLOW = FlowSettings(turn_timeout=3600, machine_delay=0, next_hand_delay=0, lobby_timeout=3600)
UNAVAILABLE = translator("en").gettext(msg.STORE_UNAVAILABLE)
UNAVAILABLE_ANY = {translator(lang).gettext(msg.STORE_UNAVAILABLE) for lang in LANGUAGES}


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")  # type: ignore[call-arg]
    built = await build_app(settings, flow=SLOW)
    try:
        yield built
    finally:
        await built.close()
    assert redis_servers_in(tmp_path / "data") == set()


def seat_token(messages: object, code: str) -> str:
    for message in messages:  # type: ignore[attr-defined]
        for row in message.buttons:
            for button in row:
                if button.token.endswith(f".{code}"):
                    return str(button.token)
    raise AssertionError(f"no {code} button")


async def test_a_frozen_redis_makes_commands_answer_store_unavailable_quickly(app: App) -> None:
    opened = await app.service.new_table(GROUP, ANE)
    assert opened.ok and opened.table is not None
    seat = seat_token(opened.messages, "seat1")
    assert app.server is not None and app.server.pid is not None
    pid = app.server.pid
    os.kill(pid, signal.SIGSTOP)  # the process is there, the socket accepts, nothing answers
    try:
        started = time.monotonic()
        pressed = await asyncio.wait_for(app.service.press(BRAIS, seat), timeout=15)
        elapsed = time.monotonic() - started
        assert pressed.failed and not pressed.ok and pressed.answer == UNAVAILABLE
        assert elapsed < 3.0, f"answered after {elapsed:.1f} s"
        started = time.monotonic()
        other = await asyncio.wait_for(app.service.new_table(ChatRef("tg:-200", False), ANE), timeout=15)
        assert not other.ok and other.answer in UNAVAILABLE_ANY and time.monotonic() - started < 3.0
        await asyncio.sleep(1.5)  # the watchdog looks at a stopped process: alive, so it is left alone
        assert app.server.pid == pid
    finally:
        os.kill(pid, signal.SIGCONT)
    pressed = await asyncio.wait_for(app.service.press(BRAIS, seat), timeout=15)
    assert pressed.ok and not pressed.failed
    state = await app.service.load_table(opened.table)
    assert state is not None and state.seats[1].user == BRAIS.key


async def test_a_killed_embedded_server_is_restarted_and_keeps_its_tables(app: App, tmp_path: Path) -> None:
    opened = await app.service.new_table(GROUP, ANE)
    assert opened.ok and opened.table is not None
    assert app.server is not None and app.server.pid is not None
    killed = app.server.pid
    await aof_written(app.redis)  # (held back for up to 2 s while an earlier fsync runs: a slow disk)
    os.kill(killed, signal.SIGKILL)  # no goodbye: what the kernel had, the AOF has
    deadline = time.monotonic() + 10
    while app.server.pid in (killed, None) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert app.server.pid not in (killed, None), "the watchdog did not restart the server"
    assert (
        app.server.url == f"unix://{tmp_path / 'data' / 'redis.sock'}"
    )  # the same socket: clients reconnect
    state = None
    while state is None and time.monotonic() < deadline:
        try:
            state = await app.service.load_table(opened.table)
        except StoreUnavailable:  # the moment between the restart and the dropped pool
            await asyncio.sleep(0.05)
    assert state is not None and state.seats[0].user == ANE.key
    seat = seat_token(opened.messages, "seat1")
    assert (await app.service.press(BRAIS, seat)).ok  # and it writes again
    assert redis_servers_in(tmp_path / "data") == {app.server.pid}


async def test_the_act_once_check_gives_up_on_a_frozen_redis_at_once_and_acts(app: App) -> None:
    """The act-once check guards against a rare duplicate: it must not spend the time an answer needs (it
    bounds itself to a fraction of a second, inside the update's own budget), and if it cannot tell, the
    update is acted on."""
    assert app.server is not None and app.server.pid is not None
    os.kill(app.server.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        assert await app.service.chats.first_delivery("tg:1:update:9")
        assert time.monotonic() - started < 1.0, "the act-once check waited for a frozen Redis"
    finally:
        os.kill(app.server.pid, signal.SIGCONT)
    assert await app.service.chats.first_delivery("tg:1:update:11")  # thawed: it tells again
    assert not await app.service.chats.first_delivery("tg:1:update:11")
