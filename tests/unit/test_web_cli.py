"""``musbot web`` at the command line: a link printed for a table and a user, or to replay a kept match, or
what to set, in one line."""

from __future__ import annotations

import time

import pytest

from adapters import cli
from bot.kernel import LinkRefused, check_link, replay_place

SECRET = "cli-web-secret-0123456789abcdef"


def test_musbot_web_link_prints_a_link_that_holds(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WEB_SECRET", SECRET)
    monkeypatch.setenv("WEB_PUBLIC_URL", "https://mus.example.org/")
    assert cli.main(["web", "--link", "abcd1234", "--user", "tg:7", "--name", "Ane", "--lang", "eu"]) == 0
    link = capsys.readouterr().out.strip()
    assert link.startswith("https://mus.example.org/t/abcd1234#k=")
    visitor = check_link(SECRET.encode(), link.split("#k=")[1], "abcd1234", time.time())
    assert (visitor.user.key, visitor.user.name, visitor.user.lang) == ("tg:7", "Ane", "eu")


def test_musbot_web_replay_prints_a_link_to_a_kept_match_that_opens_no_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WEB_SECRET", SECRET)
    monkeypatch.setenv("WEB_PUBLIC_URL", "https://mus.example.org/")
    assert cli.main(["web", "--replay", "abcd1234", "--lang", "fr"]) == 0
    link = capsys.readouterr().out.strip()
    assert link.startswith("https://mus.example.org/r/abcd1234#k=")
    credential = link.split("#k=")[1]
    visitor = check_link(SECRET.encode(), credential, replay_place("abcd1234"), time.time())
    assert visitor.user.lang == "fr"
    with pytest.raises(LinkRefused):
        check_link(SECRET.encode(), credential, "abcd1234", time.time())


def test_musbot_web_without_a_secret_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("WEB_SECRET", raising=False)
    monkeypatch.chdir("/")  # (no .env here)
    assert cli.main(["web", "--link", "abcd1234", "--user", "tg:7"]) == 2
    assert capsys.readouterr().err.startswith("WEB_SECRET: not set")
    assert cli.main(["web", "--replay", "abcd1234"]) == 2
    assert capsys.readouterr().err.startswith("WEB_SECRET: not set")
    monkeypatch.setenv("WEB_SECRET", "short")
    assert cli.main(["web"]) == 2
    err = capsys.readouterr().err
    assert "WEB_SECRET" in err and "short" not in err  # refused in one line, the value never echoed
