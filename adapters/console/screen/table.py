"""The full-screen terminal table (Textual): the four seats, the player's cards, the hand's story as it
grows, a move feed and the count, driven through the same service, views and tokens as every surface.

Machines play inside the service at once; this screen shows their moves one by one, :attr:`TableScreen.pace`
seconds apart (the last answer before the count too), each from the player's view after that move
(:mod:`adapters.console.screen.feed`). Buttons wait until the feed has caught up (a key never answers a move
not yet shown). A rival's seña gets its own catch button, its window counted from when it was shown here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, Static

from adapters.console import amounts
from adapters.console.screen import controls, panels, texts, wrap
from adapters.console.screen.feed import Step, step_lines, view_before, views_after
from adapters.console.table import plain
from bot.app import Service
from bot.i18n import common, translator
from bot.kernel import (
    Button,
    ChatRef,
    DeadlineKind,
    Outcome,
    TableState,
    TableStatus,
    UserRef,
)
from bot.store import StoreUnavailable
from engine.actions import Action
from engine.hand_types import Phase
from engine.match import Match
from engine.state import restore_match
from engine.views import SeatView

#: Seconds between two moves of the feed (``--pace``).
DEFAULT_PACE = 0.7
#: Lines of the feed kept on screen (the hand's story and the count say the rest).
FEED_KEPT = 300


class TableScreen(App[int]):
    """The table at one terminal: you (one seat) against the machines, as the service runs it."""

    TITLE = "musbot"
    AUTO_FOCUS = None  # keys press buttons; the amount box takes them only after "a"
    ENABLE_COMMAND_PALETTE = False

    CSS = """
    #header { dock: top; height: auto; background: $boost; padding: 0 1; }
    #body { height: 1fr; }
    #left { width: 3fr; height: 1fr; }
    #storybox { height: 1fr; }
    #seats, #cards, #story, #count { height: auto; padding: 0 1; }
    #cards { color: $success; }
    #count { color: $warning; }
    #controls { dock: bottom; height: auto; }
    #notice { height: auto; padding: 0 1; }
    #buttons { height: auto; padding: 0 1; }
    #catches { height: auto; padding: 0 1; background: $warning 30%; }
    #feedbox { width: 2fr; height: 1fr; border-left: solid $primary; }
    #feed { height: auto; padding: 0 1; }
    #amount { width: 40; margin: 0 1; }
    #keys { height: auto; background: $boost; padding: 0 1; }
    """

    BINDINGS: ClassVar[list[Binding | tuple[str, str] | tuple[str, str, str]]] = [
        Binding("q", "leave", "quit", show=False),
        Binding("ctrl+c", "leave", "quit", show=False, priority=True),
        Binding("a", "amount", "amount", show=False),
        Binding("enter", "next_hand", "next", show=False),
        Binding("r", "rules", "rules", show=False),
        Binding("escape", "close_rules", "back", show=False),
        *(Binding(str(n), f"press({n})", str(n), show=False) for n in range(1, 10)),
        *(Binding(k, f"catch('{k}')", k, show=False) for k in controls.CATCH_KEYS),
    ]

    def __init__(
        self,
        service: Service,
        user: UserRef,
        chat: ChatRef,
        table_id: str,
        *,
        lang: str,
        pace: float = DEFAULT_PACE,
        clock: Callable[[], float] = time.time,
        opening: str = "",
    ) -> None:
        """Play ``table_id`` as ``user``; moves are shown ``pace`` seconds apart; ``clock`` is the service's
        (a seña's catch window counts from when it was shown, on that clock); ``opening`` is said first."""
        super().__init__()
        self.service, self.user, self.chat, self.table_id = service, user, chat, table_id
        self.t = translator(lang)
        self.pace, self.clock, self.opening = pace, clock, opening
        self.table: TableState | None = None
        self.match: Match | None = None
        self.hand_no = 0
        """The hand the feed is showing."""
        self.shown = 0
        """Entries of that hand's journal the feed has shown."""
        self.counted = False
        self.caught_up = False
        self.feed_lines: list[str] = []
        """Every line the feed showed, in order (nothing is ever shown twice)."""
        self.buttons: list[Button] = []
        self.catchable: list[controls.Catchable] = []
        self.legal_amounts: dict[int, Action] = {}
        self.rules_open = False
        self.count_text = ""
        self.rules_text = ""
        self._syncing = asyncio.Lock()
        self._again = False

    # --- layout ----------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Header (position and score), seats, cards, story, count on the left, the move feed on the right,
        then the answer, the buttons, the amount box and the keys."""
        yield wrap.Wrapped(id="header", markup=False)
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield wrap.Wrapped(id="seats", markup=False)
                yield wrap.Wrapped(id="cards", markup=False)
                with VerticalScroll(id="storybox"):
                    yield wrap.Wrapped(id="story", markup=False)
                    yield wrap.Wrapped(id="count", markup=False)
            with VerticalScroll(id="feedbox"):
                yield wrap.Wrapped(id="feed", markup=False)
        with Vertical(id="controls"):
            yield wrap.Wrapped(id="notice", markup=False)
            yield wrap.Wrapped(id="catches")
            yield wrap.Wrapped(id="buttons")
            yield Input(id="amount", type="integer", compact=True)
            yield wrap.Wrapped(self.t.gettext(texts.KEYS), id="keys", markup=False)

    async def on_mount(self) -> None:
        """Show what the opening said, then the table as it stands (a resumed hand is not replayed)."""
        self.query_one("#amount", Input).display = False
        self.say(self.opening)
        self.run_worker(self.sync(resume=True), group="sync")
        self.set_interval(1.0, self._fire_due)

    # --- keeping up with the service -------------------------------------------------------------------

    async def sync(self, *, resume: bool = False) -> None:
        """Load the table and show whatever happened since the last look, one move at a time."""
        if self._syncing.locked():
            self._again = True  # the running sync looks again when it is done
            return
        async with self._syncing:
            self._again = True
            while self._again:
                self._again = False
                try:
                    await self._catch_up(resume)
                except StoreUnavailable:  # (an embedded server is restarted by its watchdog)
                    self.say(self.t.gettext(common.STORE_UNAVAILABLE))
                resume = False

    async def _catch_up(self, resume: bool) -> None:
        table = await self.service.load_table(self.table_id)
        if table is None:
            return
        self.table = table
        self.match = restore_match(table.match) if table.match is not None else None
        hand = None if self.match is None else self.match.hand
        seat = table.seat_of(self.user.key)
        if table.status is TableStatus.LOBBY or hand is None or seat is None:
            await self._show_lobby()
            return
        if table.hand_no != self.hand_no:
            if self.hand_no or not resume:
                self._feed([self.t.format(texts.NEW_HAND, n=table.hand_no)])
            self.hand_no, self.shown, self.counted = table.hand_no, 0, False
            if resume:
                self.shown = len(hand.journal)
        steps = views_after(hand, seat, self.shown + 1)
        if steps:
            self._hide_buttons()
        before = view_before(hand, seat, self.shown)
        for n, view in enumerate(steps):
            step = step_lines(self.t, table, before, view)
            before = view
            self.shown += 1
            self._draw(view)
            if step.lines:
                self._feed(step.lines)
                self._offer_catches(step, hand.over)
                if n < len(steps) - 1 or hand.over:
                    await asyncio.sleep(self.pace)
        self._draw(before)
        if hand.over and not self.counted:
            self.counted = True
            self._show_count(before)
        await self._show_buttons()

    async def _fire_due(self) -> None:
        """Deadlines that came due (a catch window's end): fired as every surface's are."""
        fired = await self.service.deadlines.fire_due()
        if any(o.ok for o in fired):
            self.run_worker(self.sync(), group="sync")

    # --- drawing ---------------------------------------------------------------------------------------

    def say(self, text: str | None) -> None:
        """A short line for the player (a press's answer)."""
        notice = self.query_one("#notice", Static)
        notice.update(Text(f"» {text}" if text else ""))
        notice.display = bool(text)

    def _feed(self, lines: list[str] | tuple[str, ...]) -> None:
        """Add lines to the move feed (a text that wraps again at words whenever the screen is resized)."""
        self.feed_lines.extend(lines)
        self.query_one("#feed", Static).update(Text("\n".join(self.feed_lines[-FEED_KEPT:])))
        box = self.query_one("#feedbox", VerticalScroll)
        self.call_after_refresh(box.scroll_end, animate=False)

    def _draw(self, view: SeatView) -> None:
        """The header, seats, cards and story as the player's view shows them after the feed's last move."""
        table, match, t = self.table, self.match, self.t
        assert table is not None and match is not None
        self.query_one("#header", Static).update(Text(panels.header(t, table, match, view, self.clock())))
        self.query_one("#seats", Static).update(Text("\n".join(panels.seat_lines(t, table, view))))
        self.query_one("#cards", Static).update(Text("\n".join(panels.card_lines(t, table, view))))
        self.query_one("#story", Static).update(Text("\n".join(panels.story_lines(t, table, view))))
        if view.phase is not Phase.OVER:
            self.count_text = ""
        self._show_left()

    def _show_left(self) -> None:
        """The seats, cards and story while the hand is played; the count in their place once it is shown,
        and the rules while they are open."""
        shown = self.rules_text if self.rules_open else self.count_text
        count = self.query_one("#count", Static)
        count.update(Text(shown))
        count.display = bool(shown)
        self.query_one("#story", Static).display = not shown
        for part in ("#seats", "#cards"):  # (the count shows every hand)
            self.query_one(part, Static).display = not shown
        box = self.query_one("#storybox", VerticalScroll)
        self.call_after_refresh(box.scroll_home if shown else box.scroll_end, animate=False)

    def _show_count(self, view: SeatView) -> None:
        """The count with its reasons, the hands shown, the score named by pair and what the hand won."""
        table, match = self.table, self.match
        assert table is not None and match is not None
        lines = panels.count_panel(self.t, table, match, view, self.clock())
        self.count_text = "\n".join(lines)
        self._show_left()
        self._feed([lines[0]])

    async def _show_lobby(self) -> None:
        shown = await self.service.show_table(self.table_id, self.user)
        lobby = next((m for m in shown.messages if m.slot == "lobby"), None)
        if lobby is not None:
            title, body = panels.lobby(self.t, plain(lobby))
            self.query_one("#header", Static).update(Text(title))
            self.query_one("#story", Static).update(Text(body))
        self.buttons = controls.pressable([lobby] if lobby else [], ("lobby",))
        await self._mount_buttons()
        self.caught_up = True

    # --- buttons ---------------------------------------------------------------------------------------

    def _hide_buttons(self) -> None:
        self.caught_up = False
        self.query_one("#buttons", Static).display = False
        self.query_one("#amount", Input).display = False

    async def _show_buttons(self) -> None:
        """The buttons of the table and of the player's hand as the service draws them now."""
        shown = await self.service.show_table(self.table_id, self.user, fresh=False)
        self.buttons = controls.pressable(shown.messages)
        await self._mount_buttons()
        self._offer_amount()
        self.caught_up = True

    async def _mount_buttons(self) -> None:
        row = self.query_one("#buttons", Static)
        row.update(controls.key_line(self.buttons[:9]))
        row.display = bool(self.buttons)

    def _offer_amount(self) -> None:
        """The amount box, while the player may envido or raise by an amount of their choosing."""
        box = self.query_one("#amount", Input)
        seat = None if self.table is None else self.table.seat_of(self.user.key)
        self.legal_amounts = amounts.bet_amounts(self.match, seat)
        box.display = bool(self.legal_amounts)
        if self.legal_amounts:
            low, high = min(self.legal_amounts), max(self.legal_amounts)
            box.placeholder = self.t.format(texts.AMOUNT_PLACEHOLDER, low=low, high=high)
            box.value = ""

    def _offer_catches(self, step: Step, over: bool) -> None:
        """A catch button per rival seña this step showed (not once the hand is over: catches end with it),
        each until its window, counted from now, closes."""
        if over or self.table is None:
            return
        made = controls.new_catches(self.t, self.table, step, self.catchable, self.clock())
        for catch in made:
            self.set_timer(step.view.catch_window, lambda key=catch.key: self._drop_catch(key))
        self.catchable.extend(made)
        self._show_catches()

    def _show_catches(self) -> None:
        row = self.query_one("#catches", Static)
        row.update(controls.catch_lines(self.catchable))
        row.display = bool(self.catchable)

    def _drop_catch(self, key: str) -> None:
        self.catchable = [c for c in self.catchable if c.key != key]
        self._show_catches()

    # --- the player's keys -----------------------------------------------------------------------------

    async def action_press(self, n: int) -> None:
        """Press the ``n``-th button (once the feed has caught up)."""
        playing = self.table is not None and self.table.status is TableStatus.PLAYING
        if (playing and not self.caught_up) or not 1 <= n <= min(len(self.buttons), 9):
            return
        await self._answer(await self.service.press(self.user, self.buttons[n - 1].token))

    async def action_catch(self, key: str) -> None:
        """Catch the seña whose button has this key: its window counts from when it was shown here."""
        chosen = next((c for c in self.catchable if c.key == key), None)
        if chosen is None:
            return
        self._drop_catch(key)
        await self._answer(await self.service.press(self.user, chosen.token, shown_at=chosen.shown_at))

    async def action_next_hand(self) -> None:
        """After the count: deal the next hand (the deal waits for the player here)."""
        table = self.table
        deadline = None if table is None or not self.counted or not self.caught_up else table.deadline
        if deadline is not None and deadline.kind is DeadlineKind.DEAL:
            await self._answer(await self.service.deadlines.fire(deadline.key))

    def action_amount(self) -> None:
        """Put the cursor in the amount box."""
        box = self.query_one("#amount", Input)
        if box.display:
            box.focus()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        """A typed amount: bet it if it is one the player may bet now, else say which are."""
        table, match = self.table, self.match
        if table is None or match is None or match.hand is None or not self.legal_amounts:
            return
        action = self.legal_amounts.get(int(event.value)) if event.value.strip().isdigit() else None
        if action is None:
            low, high = min(self.legal_amounts), max(self.legal_amounts)
            self.say(self.t.format(texts.AMOUNT_INVALID, low=low, high=high))
            return
        token = amounts.bet_token(table, match, action)
        event.input.value = ""
        self.set_focus(None)
        await self._answer(await self.service.press(self.user, token))

    async def _answer(self, outcome: Outcome) -> None:
        """Say a press's answer, then show what it changed (in a worker: keys keep working meanwhile)."""
        self.say(outcome.answer)
        table = await self.service.load_table(self.table_id)
        if table is not None and table.status is TableStatus.CANCELLED:
            self.exit(0)
            return
        self.run_worker(self.sync(), group="sync")

    async def action_rules(self) -> None:
        """The rules, in place of the story (r or Esc brings the table back)."""
        if self.rules_open:
            self.action_close_rules()
            return
        outcome = await self.service.chats.rules(self.chat, self.user, full=False)
        self.rules_text = "\n\n".join([texts.suits_line(self.t), *(plain(m) for m in outcome.messages)])
        self.rules_open = True
        self.query_one("#keys", Static).update(Text(self.t.gettext(texts.RULES_KEYS)))
        self._show_left()

    def action_close_rules(self) -> None:
        """Back to the table from the rules (or out of the amount box)."""
        self.set_focus(None)
        if not self.rules_open:
            return
        self.rules_open = False
        self.query_one("#keys", Static).update(Text(self.t.gettext(texts.KEYS)))
        self._show_left()

    def action_leave(self) -> None:
        """Leave the table; the game stays saved."""
        self.exit(0)
