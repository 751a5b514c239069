"""Names and labels shared by every view: cards, stones, seats, actions, lances, señas.

Every text is an English msgid marked with ``_`` (no-op at import) and translated per reader.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import Translator, translator
from bot.i18n.markers import N_
from bot.kernel import MACHINE_MARK, MACHINE_NAMES, TableState, clean_name, isolate
from engine.actions import Action, ActionKind
from engine.cards import SUIT_SYMBOLS, Card, printed_rank, suit_of
from engine.evaluation import Lance, ParesKind, evaluate
from engine.hand_types import Phase
from engine.match import MatchConfig, amarracos
from engine.senas import Sena, SenaRecord

_ = N_

_RANK_LABEL = {1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 10: "S", 11: "C", 12: "R"}

LANCE_NAMES: dict[Lance, str] = {
    Lance.GRANDE: _("GRANDE"),
    Lance.CHICA: _("CHICA"),
    Lance.PARES: _("PARES"),
    Lance.JUEGO: _("JUEGO"),
    Lance.PUNTO: _("PUNTO"),
}
PHASE_NAMES: dict[Phase, str] = {
    Phase.MUS: _("MUS"),
    Phase.DISCARD: _("DISCARDS"),
    Phase.COUNT: _("COUNT"),
    Phase.OVER: _("HAND OVER"),
}
SENA_NAMES: dict[Sena, str] = {
    Sena.DOS_REYES: _("two kings"),
    Sena.TRES_REYES: _("three kings"),
    Sena.DOS_ASES: _("two aces"),
    Sena.TRES_ASES: _("three aces"),
    Sena.MEDIAS: _("medias"),
    Sena.DUPLES: _("duples"),
    Sena.TREINTA_Y_UNA: _("31"),
    Sena.CIEGO: _("ciego (nothing)"),
}
PARES_NAMES: dict[ParesKind, str] = {
    ParesKind.NONE: _("no pares"),
    ParesKind.PAR: _("par"),
    ParesKind.MEDIAS: _("medias"),
    ParesKind.DUPLES: _("duples"),
}
#: Each effective rank in the plural, as pares name it (``par of kings``), low to high: A 4 5 6 7 S C R.
RANK_PLURALS: tuple[str, ...] = (
    _("aces"),
    _("fours"),
    _("fives"),
    _("sixes"),
    _("sevens"),
    _("jacks"),
    _("knights"),
    _("kings"),
)
PARES_OF: dict[ParesKind, str] = {
    ParesKind.PAR: _("par of {rank}"),
    ParesKind.MEDIAS: _("medias of {rank}"),
    ParesKind.DUPLES: _("duples of {rank} and {other}"),
}
DUPLES_OF_ONE = _("duples of {rank}")
#: Quick amounts offered on the table; "more…" opens a private picker with every legal amount.
QUICK_AMOUNTS = (2, 5, 10)
LEVEL_NAMES: dict[str, str] = {
    "easy": _("Machines: easy"),
    "normal": _("Machines: normal"),
    "hard": _("Machines: hard"),
}


def card_label(card: Card) -> str:
    """A card as players read it everywhere: rank first (R, C, S, 7…A; 3 and 2 shown), then a suit symbol."""
    return f"{_RANK_LABEL[printed_rank(card)]}{SUIT_SYMBOLS[suit_of(card)]}"


def cards_label(cards: Sequence[Card]) -> str:
    """Several cards, separated by spaces."""
    return " ".join(card_label(c) for c in cards)


# Translators: amarracos and loose stones on a score line, "2 amarracos 3 stones". Basque puts a comma between
# them: one follows its noun there ("hamarreko 1, 4 tanto"), and two numbers side by side would read as one.
AMARRACOS_AND_STONES = _("{amarracos} {stones}")


def stones_label(t: Translator, stones: int) -> str:
    """Stones as amarracos and loose stones: ``2 amarracos 3 stones (13)``."""
    a, p = amarracos(stones)
    whole = t.nformat("{n} amarraco", "{n} amarracos", a)
    loose = t.nformat("{n} stone", "{n} stones", p)
    if not a:
        return f"{loose} ({stones})"
    if not p:
        return f"{whole} ({stones})"
    return f"{t.format(AMARRACOS_AND_STONES, amarracos=whole, stones=loose)} ({stones})"


def seat_name(table: TableState, seat: int) -> str:
    """The display name of a seat (machines get a 🤖 and a Basque name)."""
    s = table.seats[seat]
    if s.machine:
        return f"{MACHINE_MARK} {MACHINE_NAMES[seat]}"
    return isolate(clean_name(s.name))  # (cleaned again: a table stored before names were cleaned)


def action_label(t: Translator, action: Action | ActionKind, amount: int = 0, total: int = 0) -> str:
    """A player's action in words: ``paso``, ``envido 2``, ``5 more → 12``, ``no quiero``, ``órdago``…

    ``total`` is the bet a raise makes (shown after the step, as players announce it).
    """
    kind = action.kind if isinstance(action, Action) else action
    amount = action.amount if isinstance(action, Action) else amount
    if kind is ActionKind.SUBE and total:
        return t.format(N_("{n} more → {total}"), n=amount, total=total)
    if kind is ActionKind.MUS:
        return t.gettext(_("mus"))
    if kind is ActionKind.NO_MUS:
        return t.gettext(_("no hay mus"))
    if kind is ActionKind.PASO:
        return t.gettext(_("paso"))
    if kind is ActionKind.ENVIDO:
        return t.format(N_("envido {n}"), n=amount)
    if kind is ActionKind.SUBE:
        return t.format(N_("{n} more"), n=amount)
    if kind is ActionKind.QUIERO:
        return t.gettext(_("quiero"))
    if kind is ActionKind.NO_QUIERO:
        return t.gettext(_("no quiero"))
    if kind is ActionKind.ORDAGO:
        return t.gettext(_("órdago"))
    return t.gettext(_("discard"))


#: The calls a button makes, as the button shows them: the word said, and where a language's calls are
#: another language's words (French: the Basque calls of Iparralde), a short gloss of what they do. The
#: story of the hand (``Ane: iduki``) keeps the bare word of :func:`action_label`.
CALL_BUTTONS: dict[ActionKind, str] = {
    # Translators: a button. French glosses the Basque call: "Mintza · pas de mus".
    ActionKind.NO_MUS: _("No hay mus"),
    # Translators: a button. French glosses the Basque call: "Iduki · je tiens".
    ActionKind.QUIERO: _("Quiero"),
    # Translators: a button. French glosses the Basque call: "Tira · je refuse".
    ActionKind.NO_QUIERO: _("No quiero"),
    # Translators: a button. French glosses the Basque call: "Hordago · tout".
    ActionKind.ORDAGO: _("Órdago"),
}


def button_label(t: Translator, action: Action, total: int = 0) -> str:
    """A move as its button shows it: the call (glossed where :data:`CALL_BUTTONS` says so), capitalised."""
    call = CALL_BUTTONS.get(action.kind)
    if call is not None:
        return t.gettext(call)
    text = action_label(t, action, total=total)
    return text[:1].upper() + text[1:]


# Translators: a label and what it says, e.g. "Ane: envido 2", "GRANDE: en paso" (French: "{label} : {text}").
LABELLED = _("{label}: {text}")


def labelled(t: Translator, label: str, text: str) -> str:
    """``Ane: envido 2``: a label and its text, with the language's own colon (French: a no-break space)."""
    return t.format(LABELLED, label=label, text=text)


#: The score with each pair named: ``Score: Ane and 🤖 Iker 6 – 9 🤖 Maite and 🤖 Nerea``.
SCORE = N_("Score: {team_a} {a} – {b} {team_b}")


def named_score(
    t: Translator, table: TableState, msgid: str, scores: Sequence[int], target: int, **more: object
) -> str:
    """A score line (``msgid`` with ``team_a a – b team_b``, and ``more`` placeholders) naming each pair,
    capped at the ``target`` (what the count paid past it is no score)."""
    return t.format(
        msgid,
        **more,
        team_a=team_names(table, 0),
        a=min(scores[0], target),
        b=min(scores[1], target),
        team_b=team_names(table, 1),
    )


def team_names(table: TableState, team: int) -> str:
    """``Ane y Brais``: the two names of a team."""
    t = translator(table.lang)
    return t.format(N_("{a} and {b}"), a=seat_name(table, team), b=seat_name(table, team + 2))


def pares_words(t: Translator, cards: Sequence[Card]) -> str:
    """``par of kings``, ``medias of aces``, ``duples of kings and sevens``, ``no pares``: which pares."""
    ev = evaluate(cards)
    if ev.pares_kind is ParesKind.NONE:
        return t.gettext(PARES_NAMES[ev.pares_kind])
    high, low = ev.pares_ranks
    rank = t.gettext(RANK_PLURALS[high])
    if ev.pares_kind is ParesKind.DUPLES and high == low:
        return t.format(DUPLES_OF_ONE, rank=rank)
    return t.format(PARES_OF[ev.pares_kind], rank=rank, other=t.gettext(RANK_PLURALS[low]))


def hand_summary(t: Translator, cards: Sequence[Card]) -> str:
    """``duples of kings and sevens · juego 31`` / ``no pares · punto 27``: what four cards hold, in the
    reader's words."""
    ev = evaluate(cards)
    parts = [pares_words(t, cards)]
    if ev.has_juego:
        parts.append(t.format(N_("juego {n}"), n=ev.total))
    else:
        parts.append(t.format(N_("punto {n}"), n=ev.total))
    return " · ".join(parts)


# Translators: the button of a seña a rival may catch; {name} made it (one verb: the glossary's "catch",
# Spanish "cazar"). Nobody knows which seña it is until it is caught.
CATCH_BUTTON = _("⚡ Catch {name}'s seña")
# Translators: as above, for a rival's second seña in the same hand.
CATCH_SECOND = _("⚡ Catch {name}'s second seña")


def catch_label(t: Translator, name: str, second: bool) -> str:
    """The button that catches a seña: whose, and which of theirs when they made two (one button each)."""
    return t.format(CATCH_SECOND if second else CATCH_BUTTON, name=name)


def second_sena(made: Sequence[SenaRecord], index: int) -> bool:
    """Whether seña ``index`` of those ``made`` is not its maker's first of the hand (its ⚡ says so)."""
    return any(s.seat == made[index].seat for s in made[:index])


def header_line(t: Translator, table: TableState, config: MatchConfig) -> str:
    """The table's first line — hand, game and vaca of how many, target — as every surface heads it."""
    if table.options.mode == "game":
        return t.format(
            N_("🂠 Mus · Hand {n} · single game to {target}"), n=table.hand_no, target=config.target
        )
    pos = table.position
    return t.format(
        N_("🂠 Mus · Hand {n} · Game {game} of {games} ({a}–{b}) · Vaca {vaca} of {vacas} · to {target}"),
        n=table.hand_no,
        game=pos.game,
        games=2 * config.games_per_vaca - 1,
        a=pos.games[0],
        b=pos.games[1],
        vaca=pos.vaca,
        vacas=2 * config.vacas_per_match - 1,
        target=config.target,
    )
