"""A real browser at the web table: ``musbot play --web`` as a process (the solo game on the embedded store),
and headless Chromium driven by selenium (Debian's ``chromium`` and ``chromium-driver``), at phone size.

Used by the browser tests and by ``docs/make_web_screens.py`` (the screenshots in ``docs/web.md``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SECRET = "browser-tests-secret-0123456789abcdef"
PHONE = (420, 860)


def browser_missing() -> str | None:
    """Why no browser test can run here (``None``: Chromium and its driver are installed)."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.exists(path) or shutil.which(os.path.basename(path))):
            return f"{path} is not installed (apt-get install chromium chromium-driver)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SoloWeb:
    """``musbot play --web`` running: its link, and how to stop or kill it."""

    process: subprocess.Popen[str]
    link: str
    port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def table(self) -> str:
        return self.link.split("/t/")[1].split("#")[0]

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def start_solo(
    data_dir: Path,
    *,
    lang: str = "en",
    port: int | None = None,
    pause: float = 0.25,
    name: str = "Ane",
    lobby: bool = False,
) -> SoloWeb:
    """Start ``musbot play --web`` on ``data_dir`` and read the link it prints: its game started at once
    (an option on the command line), or (``lobby``) its lobby left for the page."""
    port = port or free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATA_DIR", "LOG_LEVEL")}
    env.update(
        PYTHONIOENCODING="utf-8", WEB_SECRET=SECRET, WEB_PORT=str(port), WEB_MOVE_PAUSE=str(pause), DISPLAY=""
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "adapters.cli",
            "play",
            "--web",
            "--data-dir",
            str(data_dir),
            "--lang",
            lang,
            "--name",
            name,
            *([] if lobby else ["--level", "normal"]),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    assert process.stdout is not None
    link = process.stdout.readline().strip()
    if not link.startswith("http://127.0.0.1:"):
        process.kill()
        raise AssertionError(f"musbot play --web printed {link!r}; stderr: {process.stderr.read()}")  # type: ignore[union-attr]
    return SoloWeb(process, link, port)


def spectator_link(solo: SoloWeb, user_key: str = "web:watcher", name: str = "Zuri", lang: str = "en") -> str:
    """A signed link for someone who is not seated at the solo table (reading in ``lang``)."""
    from bot.kernel import UserRef, sign_link

    credential = sign_link(SECRET.encode(), UserRef(user_key, name, lang), solo.table, time.time() + 3600)
    return f"{solo.base}/t/{solo.table}#k={credential}"


def auto_match(data_dir: Path, *, seed: int = 3) -> str:
    """A machine-only match with señas (``musbot play --auto``, a single game) kept in ``data_dir``'s
    history: its table id."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATA_DIR", "LOG_LEVEL")}
    argv = ["play", "--auto", "--seed", str(seed), "--senas", "--single", "--quiet", "--lang", "en"]
    done = subprocess.run(
        [sys.executable, "-m", "adapters.cli", *argv, "--data-dir", str(data_dir)],
        cwd=ROOT,
        env={**env, "PYTHONIOENCODING": "utf-8"},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=True,
    )
    found = re.search(r"table (\w+) \(", done.stdout)
    assert found, done.stdout + done.stderr
    return found.group(1)


def replay_link(solo: SoloWeb, table: str, *, lang: str = "en", ttl: float = 3600) -> str:
    """The address ``/history`` gives a chat to replay ``table``'s kept match, on ``solo``'s server."""
    from bot.kernel import UserRef, WebLinks

    links = WebLinks(solo.base, SECRET.encode(), ttl / 3600)
    return links.replay(UserRef("tg:-100", "Group", lang), table, time.time())


def replay_state(driver: Any) -> dict[str, Any]:
    """Where the replay stands: its hand, move and whether it plays, and what the table shows."""
    return driver.execute_script(
        """
        const box = document.getElementById('replay');
        const q = (s) => Array.from(document.querySelectorAll(s));
        return {
          shown: !box.hidden, hand: box.dataset.hand,
          at: Number(box.dataset.at), total: Number(box.dataset.total),
          playing: box.dataset.playing, position: document.getElementById('replay-at').textContent,
          rows: q('#hands .row').map((r) => r.querySelectorAll('svg.card').length),
          over: !document.getElementById('count').hidden,
          count: q('#count-lines li').map((e) => e.textContent), known: q('#known li').length,
          story: q('#story-lines li').length, title: document.getElementById('title').textContent,
          next: document.getElementById('replay-next').title, text: document.body.innerText,
          banner: (b => b.hidden ? '' : b.textContent)(document.getElementById('banner')),
        };
        """
    )


def chrome(size: tuple[int, int] = PHONE, lang: str = "en") -> Any:
    """Headless Chromium at ``size`` (selenium's driver), its language ``lang``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={size[0]},{size[1]}",
        f"--lang={lang}",
    ):
        options.add_argument(argument)
    options.add_experimental_option(
        "prefs", {"intl.accept_languages": lang}
    )  # (headless: navigator.language)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def wait_for(check: Callable[[], Any], timeout: float = 20.0, what: str = "") -> Any:
    """Poll ``check`` until it returns something true; its value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = check()
        except Exception:  # an element redrawn between finding and reading it
            value = None
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what or check}")


def page_state(driver: Any) -> dict[str, Any]:
    """What the page shows, read from its DOM: the frame's position, the cards in the hand, the buttons."""
    return driver.execute_script(
        """
        const q = (s) => Array.from(document.querySelectorAll(s));
        return {
          live: document.body.dataset.live, k: document.body.dataset.k, hand: document.body.dataset.hand,
          spectator: document.body.dataset.spectator,
          cards: q('#hand .slot').map((e) => e.dataset.card),
          pickable: q('#hand .slot.pickable').map((e) => e.dataset.card),
          picked: q('#hand .slot.picked').map((e) => e.dataset.card),
          calls: q('#actions button.call').map((e) => e.dataset.code),
          bet: !!document.querySelector('#bet'), confirm: !!document.querySelector('#confirm-discard'),
          over: !document.getElementById('count').hidden,
          art: q('svg.card').filter((e) => !e.closest('#shown')).map((e) => e.getAttribute('aria-label')),
          banner: (b => b.hidden ? '' : b.textContent)(document.getElementById('banner')),
        };
        """
    )


def click(driver: Any, selector: str) -> None:
    driver.execute_script("document.querySelector(arguments[0]).click()", selector)
