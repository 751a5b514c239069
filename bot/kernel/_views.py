"""Views: platform-neutral messages the service returns, for adapters to render.

A view is addressed to the table's chat or to one player privately, has translated text, and rows of
buttons carrying action tokens. ``slot`` names the logical message it updates (``lobby``, ``table``,
``hand``…): an adapter edits the last message it sent for that slot, or sends a new one when ``fresh``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

#: Slots whose message is kept and edited in place (one per table and chat); others are always new messages.
KEPT_SLOTS = frozenset({"lobby", "table", "hand"})

#: What pressing a button does: send its token back to the bot (``press``), open an address (``link``), or
#: open the address as an app inside the chat (``web_app``: a Telegram Mini App, private chats only).
ButtonKind = Literal["press", "link", "web_app"]
_LINK_KINDS: frozenset[str] = frozenset({"link", "web_app"})


@dataclass(frozen=True, slots=True)
class Button:
    """A button: its label (translated) and the token it sends back — or, for a link button, the address
    it opens (``url``), in a browser or as an app inside the chat (``kind``)."""

    label: str
    token: str = ""
    url: str = ""
    """The address a link button opens (empty for a button that sends its token)."""
    kind: ButtonKind = "press"

    @classmethod
    def link(cls, label: str, url: str, *, web_app: bool = False) -> Button:
        """A button that opens ``url`` (as an app inside the chat with ``web_app``) instead of pressing."""
        return cls(label, url=url, kind="web_app" if web_app else "link")

    @property
    def opens(self) -> bool:
        """Whether the button opens an address rather than sending a token (nothing of the bot's to press)."""
        return self.kind != "press"


def buttons_to_json(rows: Sequence[Sequence[Button]]) -> tuple[list[list[list[str]]], list[list[Any]]]:
    """Button rows as JSON: the rows of the buttons that send a token (``[label, token]`` each, as every
    version wrote them), and the link buttons apart, each with its place (``[row, column, label, url,
    kind]``): an older version reads the rows and shows the view without the links (it ignores the field)."""
    pressed = [[[b.label, b.token] for b in row if not b.opens] for row in rows]
    links = [
        [r, c, b.label, b.url, b.kind] for r, row in enumerate(rows) for c, b in enumerate(row) if b.opens
    ]
    return pressed, links


def buttons_from_json(pressed: Any, links: Any = ()) -> tuple[tuple[Button, ...], ...]:
    """The rows :func:`buttons_to_json` wrote (``ValueError``/``TypeError`` if they are not)."""
    rows = [[Button(str(label), str(token)) for label, token in row] for row in pressed]
    for r, c, label, url, kind in sorted(links or ()):
        if isinstance(kind, str) and kind not in _LINK_KINDS and kind != "press":
            continue  # a kind of link a newer version added: the view shows here without it
        if kind not in _LINK_KINDS or not isinstance(url, str) or not url:
            raise ValueError(f"not a link button: {kind!r}")
        while len(rows) <= r:
            rows.append([])
        rows[r].insert(c, Button(str(label), url=url, kind=kind))
    return tuple(tuple(row) for row in rows)


@dataclass(frozen=True, slots=True)
class OutMessage:
    """One message to send or edit."""

    slot: str
    text: str
    chat: str | None = None
    """The chat key, for messages to the table's chat."""
    user: str | None = None
    """The user key, for private messages."""
    buttons: tuple[tuple[Button, ...], ...] = ()
    fresh: bool = False
    """Post a new message instead of editing the slot's last one."""
    again: bool = False
    """A fresh view that posts its slot's message again (``/newgame`` during a game: the table moves to the
    bottom of the chat), not one that begins a new message (a new hand, new cards): set when it is stamped
    with its table version. Delivery posts a view that begins only if no view of its epoch posted it yet."""
    table: str = ""
    """The table this message belongs to (adapters key message ids by table and slot)."""
    origin: str | None = None
    """For a private view asked for in a group (``/rules full``): that group's chat key, where an adapter says
    so if the player cannot be written to."""
    markdown: bool = False
    """The text uses light Markdown (``**bold**`` and ``-`` lists): adapters render it in their idiom
    (rich-text entities, escaped) or strip the markers; plain text otherwise."""
    version: int = 0
    """The table version this view shows (0: not a table state). Workers that deliver views of one slot
    concurrently keep the newest on screen by it (:class:`bot.delivery._lanes.Delivery`)."""
    since: int = 0
    """The table version at which the slot's current message began (a new hand's table, new cards): a view
    is never drawn over a message posted for an earlier one, whichever worker's call lands first."""
    document: tuple[str, str] | None = None
    """A file to send with the view: its name and its (text) content; the view's text is its caption.
    Always a new message (a platform cannot edit a file into a text message)."""
    deadline: float = 0.0
    """When the person on turn must have acted (Unix time), 0 when no clock runs: the text says how long a
    turn is (``⏱ 60 s``); a surface that can draw a live countdown counts down to this instead."""
    phase: str = ""
    """The stage of play a table's view shows — ``lobby``, a hand's phase (``mus``, ``discard``, ``grande``…,
    ``over``), ``count`` (the showdown), ``started``, ``cancelled`` — for a surface that marks it (Discord
    colours its embed by it); empty for every other view."""

    @property
    def private(self) -> bool:
        """Whether this message goes to one user privately."""
        return self.user is not None

    @property
    def kept(self) -> bool:
        """Whether this view is of a table slot whose message is kept and edited in place."""
        return bool(self.table) and self.slot in KEPT_SLOTS

    @property
    def slot_key(self) -> str:
        """The slot and where it is shown (``table@tg:-100``, ``hand@tg:7``): one kept message each."""
        return f"{self.slot}@{self.user if self.user is not None else self.chat}"

    def to_json(self) -> str:
        """The view as JSON (kept in the store, so that another worker can show it again)."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields["buttons"], links = buttons_to_json(self.buttons)
        if links:
            fields["links"] = links
        return json.dumps(fields, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, data: str) -> OutMessage:
        """The view :meth:`to_json` wrote (``ValueError`` if it is not one)."""
        try:
            fields = json.loads(data)
            buttons = buttons_from_json(fields.pop("buttons"), fields.pop("links", ()))
            document = fields.pop("document", None)
            if document is not None:
                name, content = document
                document = (str(name), str(content))
            # A field a newer version added is left out: a view written by it still shows here.
            known = {name: value for name, value in fields.items() if name in cls.__slots__}
            return cls(**known, buttons=buttons, document=document)
        except (TypeError, KeyError, ValueError) as exc:  # (a JSONDecodeError is a ValueError)
            raise ValueError(f"not a stored view: {exc}") from exc


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a command: a short answer to whoever pressed or typed, and the messages to render."""

    answer: str | None = None
    """Shown to the presser only (a callback answer / an ephemeral reply)."""
    alert: bool = False
    """Show the answer as an alert the user must dismiss (e.g. a caught seña)."""
    link: Button | None = None
    """A link for the presser alone, shown with the answer (their own signed address of the web table): an
    adapter shows it privately (an ephemeral reply), never in the chat, and never logs it."""
    messages: tuple[OutMessage, ...] = ()
    ok: bool = True
    """Whether the command changed something."""
    table: str | None = None
    failed: bool = False
    """The store (or something unexpected) failed: nothing was written; worth retrying later."""
    paused: bool = False
    """Refused because the table is paused: the bot could not reach its chat. An adapter that knows the chat
    is reachable again (the press came from there, with the rights to post) resumes it
    (:attr:`bot.app.Service.pauses`)."""
