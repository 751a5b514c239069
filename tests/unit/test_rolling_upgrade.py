"""Stored tables read across one version up and down (issue 27): during a rolling upgrade, or after a
rollback, workers of two versions play the same tables.

An older worker reads what a newer one wrote (fields it does not know, in the table and nested in a seat,
the options, the hand position and the engine's match; a newer schema) and plays on, keeping the newer
fields for the newer worker; a newer worker reads what an older one wrote (fields missing: their defaults);
a table of an older schema goes through the upgrade steps. Before, the models forbade unknown fields: the
older worker answered "internal error" to every press at that table.
"""

from __future__ import annotations

import json
import logging
import random
from dataclasses import replace
from typing import Any

import pytest
from service_helpers import ANE, BRAIS, CAMILLE, DANI, GROUP, Harness, english, human_step, users_by_key

from bot.kernel import Button, OutMessage, TableState
from bot.kernel import _model as model
from engine.state import SCHEMA_VERSION as MATCH_SCHEMA_VERSION

USERS = users_by_key(ANE, BRAIS, CAMILLE, DANI)
NEWER = model.SCHEMA_VERSION + 1


@pytest.fixture(autouse=True)
def nothing_told_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees the once-per-process note afresh."""
    monkeypatch.setattr(model, "_told", set(), raising=False)


async def playing(seed: int = 3) -> tuple[Harness, str]:
    h = Harness(seed=seed)
    await english(h)
    table_id = await h.started(GROUP, ANE, (BRAIS, 1), (CAMILLE, 2), (DANI, 3))
    await h.wait_for_human(table_id)
    return h, table_id


async def rewrite(h: Harness, table_id: str, change: Any) -> None:
    """What another worker writes: the stored JSON changed by ``change`` (a function of the dict), as the
    next version. This worker's cached copy is now stale: its next command finds the store's."""
    stored = await h.tables.load(table_id)
    assert stored is not None
    data = json.loads(stored.data)
    change(data)
    table = TableState.model_validate_json(stored.data)
    await h.tables.compare_and_set(
        table_id, stored.version, json.dumps(data), chat_key=None, user_keys=table.humans(), finished=False
    )


async def play_on(h: Harness, table_id: str, moves: int = 6) -> None:
    """A few moves by whoever is on turn, each accepted (a refusal or an error fails the step)."""
    rng = random.Random(5)
    version = (await h.load(table_id)).version
    for _ in range(moves):
        assert await human_step(h, table_id, GROUP, USERS, rng)
    assert (await h.load(table_id)).version > version  # really written, not answered from a copy


def written_by_a_newer_version(data: dict[str, Any]) -> None:
    data["schema_version"] = NEWER
    data["spectators"] = ["tg:77"]
    data["seats"][1]["badge"] = {"kind": "champion", "since": 2025}
    data["options"]["stakes"] = "high"
    data["position"]["round"] = 3
    data["match"]["schema_version"] = MATCH_SCHEMA_VERSION + 1
    data["match"]["tempo"] = "fast"
    data["match"]["hand"]["dealt_by"] = "machine"


async def test_an_older_worker_plays_on_a_table_a_newer_one_wrote_and_keeps_its_fields(
    caplog: pytest.LogCaptureFixture,
) -> None:
    h, table_id = await playing()
    await rewrite(h, table_id, written_by_a_newer_version)
    with caplog.at_level(logging.INFO, logger="bot.kernel._model"):
        await play_on(h, table_id)

    stored = await h.tables.load(table_id)
    assert stored is not None
    data = json.loads(stored.data)
    # Kept, and written back for the newer worker: the table's, a seat's, the options', the position's.
    assert data["spectators"] == ["tg:77"]
    assert data["seats"][1]["badge"] == {"kind": "champion", "since": 2025}
    assert data["options"]["stakes"] == "high" and data["position"]["round"] == 3
    # Stamped with the schema that wrote it last (a newer worker's upgrade step then knows an older one did).
    assert data["schema_version"] == model.SCHEMA_VERSION
    # The match is rebuilt from the live match at every move: a newer engine's fields are not kept there.
    assert "tempo" not in data["match"] and "dealt_by" not in data["match"]["hand"]
    told = [r for r in caplog.records if "read as far as understood" in r.getMessage()]
    assert [r.levelno for r in told] == [logging.INFO, logging.INFO]  # once for the table, once for the match
    assert sorted(r.getMessage().split(" (")[0] for r in told) == [
        f"a match written with schema {MATCH_SCHEMA_VERSION + 1}",
        f"a table written with schema {NEWER}",
    ]


async def test_a_newer_worker_reads_a_table_an_older_one_wrote_without_the_fields_added_since() -> None:
    h, table_id = await playing(seed=4)

    def written_before_these_fields(data: dict[str, Any]) -> None:
        for name in ("since", "reported_hand", "position", "chat_title"):
            del data[name]
        for seat in data["seats"]:
            for name in ("picker", "discard_ready", "autopilot"):
                del seat[name]
        del data["options"]["difficulty"]
        del data["match"]["big_bets"]

    await rewrite(h, table_id, written_before_these_fields)
    await play_on(h, table_id)
    table = (await h.load(table_id)).table
    assert table.options.difficulty == "normal" and all(s.picker is None for s in table.seats)


async def test_an_older_schema_is_upgraded_on_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if this code's schema were 2, with a step from 1 that fills a field schema 1 did not have."""
    steps: list[int] = []

    def one_to_two(data: dict[str, Any]) -> dict[str, Any]:
        steps.append(data["schema_version"])
        data.setdefault("chat_title", "(upgraded)")  # a newer worker may have written it already: kept
        return data

    h, table_id = await playing(seed=5)
    monkeypatch.setattr(model, "SCHEMA_VERSION", 2)
    monkeypatch.setattr(model, "UPGRADES", {1: one_to_two})

    def schema_1_without_the_title(data: dict[str, Any]) -> None:
        data["schema_version"] = 1
        del data["chat_title"]

    await rewrite(h, table_id, schema_1_without_the_title)
    steps.clear()  # (rewrite read the table too)
    table = await h.service.tables.load_table(table_id)
    assert table is not None and table.chat_title == "(upgraded)" and table.schema_version == 2
    assert steps == [1]
    await play_on(h, table_id, moves=2)
    stored = await h.tables.load(table_id)
    assert stored is not None and json.loads(stored.data)["schema_version"] == 2
    steps.clear()
    await h.load(table_id)  # a table of this schema goes through no step
    assert steps == []


@pytest.mark.parametrize("schema", ["two", None, [2]])
def test_a_schema_version_that_is_not_a_number_is_still_refused(schema: object) -> None:
    data = json.loads(TableState(id="t1", chat="tg:-1", creator="tg:1").model_dump_json())
    data["schema_version"] = schema
    with pytest.raises(ValueError):
        TableState.model_validate_json(json.dumps(data))


def test_a_stored_view_from_a_newer_version_is_read_and_one_from_an_older_keeps_the_defaults() -> None:
    view = OutMessage(slot="table", text="Ane's turn (⏱ 45 s)", chat="dc:1", table="abcdefgh", deadline=1.5e9)
    newer = json.loads(view.to_json()) | {"glow": "gold"}  # a field a newer version added
    assert OutMessage.from_json(json.dumps(newer)) == view
    older = json.loads(view.to_json())
    del older["deadline"]  # written before the live clock
    assert OutMessage.from_json(json.dumps(older)) == replace(view, deadline=0.0)
    with pytest.raises(ValueError):
        OutMessage.from_json(json.dumps({"text": "no slot"}))


#: A table message with a link among its buttons, as a Telegram group's table draws it with a Mini App.
LINKED = OutMessage(
    slot="table",
    text="Ane's turn",
    chat="tg:-100",
    table="abcdefgh",
    buttons=(
        (Button("Paso", "abcdefgh.1-0.paso"),),
        (
            Button("🂠 My cards", "abcdefgh.1.cards"),
            Button.link("🃏 Open the table", "https://t.me/musbot/mus?startapp=abcdefgh"),
        ),
        (Button.link("🃏", "https://mus.example.org/t/abcdefgh", web_app=True),),
    ),
)


def older_reading(data: str) -> tuple[tuple[tuple[str, str], ...], ...]:
    """The buttons as the version before link buttons read a stored view: ``[label, token]`` pairs only
    (anything else raised, and the view was lost)."""
    return tuple(
        tuple((str(label), str(token)) for label, token in row) for row in json.loads(data)["buttons"]
    )


def test_a_view_with_links_round_trips_and_an_older_version_reads_it_without_them() -> None:
    stored = LINKED.to_json()
    assert OutMessage.from_json(stored) == LINKED
    # The previous version reads the rows it knows, and shows the view without the links (it drops the field).
    assert older_reading(stored) == (
        (("Paso", "abcdefgh.1-0.paso"),),
        (("🂠 My cards", "abcdefgh.1.cards"),),
        (),
    )
    # What an older version wrote (no links) is read as it was.
    plain = replace(LINKED, buttons=LINKED.buttons[:1])
    assert "links" not in json.loads(plain.to_json())
    assert OutMessage.from_json(plain.to_json()) == plain


def test_a_link_of_a_kind_a_newer_version_added_is_left_out() -> None:
    data = json.loads(LINKED.to_json())
    data["links"].append([1, 0, "🔑", "https://a.example/login", "login_url"])
    assert OutMessage.from_json(json.dumps(data)) == LINKED


@pytest.mark.parametrize(
    "links",
    [
        [[0, 0, "x", "https://a.example", "press"]],
        [[0, 0, "x", "", "link"]],
        [[0, 0, "x", 5, "web_app"]],
        [[0]],
    ],
)
def test_a_stored_link_that_is_not_one_is_refused(links: object) -> None:
    data = json.loads(LINKED.to_json()) | {"links": links}
    with pytest.raises(ValueError):
        OutMessage.from_json(json.dumps(data))
