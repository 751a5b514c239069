"""Views: platform-neutral messages the service returns, for adapters to render.

A view is addressed to the table's chat or to one player privately, has translated text, and rows of
buttons carrying action tokens. ``slot`` names the logical message it updates (``lobby``, ``table``,
``hand``…): an adapter edits the last message it sent for that slot, or sends a new one when ``fresh``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Button:
    """A button: its label (translated) and the token it sends back."""

    label: str
    token: str


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
    table: str = ""
    """The table this message belongs to (adapters key message ids by table and slot)."""
    origin: str | None = None
    """For a private view asked for in a group (``/rules full``): that group's chat key, where an adapter says
    so if the player cannot be written to."""
    markdown: bool = False
    """The text uses light Markdown (``**bold**`` and ``-`` lists): adapters render it in their idiom
    (rich-text entities, escaped) or strip the markers; plain text otherwise."""

    @property
    def private(self) -> bool:
        """Whether this message goes to one user privately."""
        return self.user is not None


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a command: a short answer to whoever pressed or typed, and the messages to render."""

    answer: str | None = None
    """Shown to the presser only (a callback answer / an ephemeral reply)."""
    alert: bool = False
    """Show the answer as an alert the user must dismiss (e.g. a caught seña)."""
    messages: tuple[OutMessage, ...] = ()
    ok: bool = True
    """Whether the command changed something."""
    table: str | None = None
    failed: bool = False
    """The store (or something unexpected) failed: nothing was written; worth retrying later."""
