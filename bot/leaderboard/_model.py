"""Leaderboard domain: players, finished results, per-scope statistics and the rating math.

Rating system: openskill's :class:`~openskill.models.PlackettLuce` (Weng-Lin), default parameters
(μ₀ = 25, σ₀ = 25/3, β = 25/6, τ = 25/300). Both partners are rated as one team against the other pair; a
game has a winner and a loser (ranks ``[0, 1]``), never a draw.

Why Plackett-Luce rather than Thurstone-Mosteller (full pairing): with exactly two teams Plackett-Luce reduces
to the logistic Bradley-Terry likelihood, whose update is bounded, while Thurstone-Mosteller's probit (the
TrueSkill likelihood) moves ratings in proportion to how surprising the result was. One game of Mus is mostly
the cards: upsets are common and should not swing a rating much. Measured with the installed openskill for a
35/2 pair losing to a 15/2 pair: Plackett-Luce moves each μ by 0.56, Thurstone-Mosteller by 3.26. It is also
openskill's default, best-benchmarked model.

Display rating (:func:`display_rating`): ``round(1000 + 20 × (μ − 3σ))``, the openskill *ordinal* (the
conservative estimate μ − 3σ, 0 for a newcomer) scaled by 20 around 1000. A newcomer shows 1000; the first
game moves a 2v2 of newcomers to about 1049 / 970; an established average player (σ ≈ 1–2) settles around
1400. Because σ shrinks with every game the display rating of a newcomer also rises just by playing, which
is the intended reward for a track record. Leaderboards by rating sort on the unrounded ordinal.

Machines (player keys starting with :data:`MACHINE_PREFIX`) are rated like people, so that beating a strong
machine pair counts for more than beating a weak one, but leaderboards rank people only: a machine is never
listed and never pushes a person down a rank (:func:`is_ranked`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from openskill.models import PlackettLuce, PlackettLuceRating

__all__ = [
    "DISPLAY_BASE",
    "DISPLAY_SCALE",
    "GLOBAL_SCOPE",
    "MACHINE_PREFIX",
    "MODEL",
    "GameResult",
    "LeaderboardEntry",
    "PlayerRef",
    "PlayerStats",
    "RankBy",
    "ResultKind",
    "apply_result",
    "check_chat_scopes",
    "check_rank_by",
    "display_rating",
    "is_ranked",
    "rank_entries",
]

GLOBAL_SCOPE = "global"
"""The scope that every result updates, next to its chat's scope. No chat key may equal it."""

DISPLAY_BASE = 1000
"""Display rating of a newcomer (ordinal 0)."""

DISPLAY_SCALE = 20
"""Display points per unit of openskill ordinal."""

MACHINE_PREFIX = "machine:"
"""Player keys of machine seats start with it (``machine:normal:nerea``): rated, never ranked."""

MODEL = PlackettLuce()
"""The rating model (openskill defaults; see the module docstring for the choice)."""

ResultKind: TypeAlias = Literal["game", "vaca", "match"]
"""What a :class:`GameResult` reports: a finished game, or a vaca or match won."""

RankBy: TypeAlias = Literal["rating", "wins"]
"""Leaderboard order: by the conservative rating (ordinal) or by games won."""

_KINDS = ("game", "vaca", "match")
_RANK_BY = ("rating", "wins")


def display_rating(mu: float, sigma: float) -> int:
    """Return the friendly rating shown to players: ``round(1000 + 20 × (μ − 3σ))``."""
    return round(DISPLAY_BASE + DISPLAY_SCALE * (mu - 3.0 * sigma))


def is_ranked(player_key: str) -> bool:
    """Whether a player appears on leaderboards: people do, machines (:data:`MACHINE_PREFIX`) do not."""
    return not player_key.startswith(MACHINE_PREFIX)


def check_chat_scopes(old: str, new: str) -> None:
    """Raise ``ValueError`` unless ``old`` and ``new`` are two chat scopes a scope may move between."""
    for scope in (old, new):
        if not isinstance(scope, str) or not scope:
            raise ValueError(f"a chat scope must be a non-empty str, not {scope!r}")
        if scope == GLOBAL_SCOPE:
            raise ValueError("the global scope does not move")


def check_rank_by(by: str) -> RankBy:
    """Return ``by`` if it is ``"rating"`` or ``"wins"``, raise ``ValueError`` otherwise."""
    if by == "rating":
        return "rating"
    if by == "wins":
        return "wins"
    raise ValueError(f"by must be one of {_RANK_BY}, not {by!r}")


@dataclass(frozen=True, slots=True)
class PlayerRef:
    """A rated participant: a stable ``key`` (``"tg:12345"``, ``"machine:normal"``) and a display ``name``.

    Machines are rated as their own entries (every seat played by the same machine shares its key), for
    their opponents' sake, but are not ranked (:func:`is_ranked`).
    """

    key: str
    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key:
            raise ValueError(f"player key must be a non-empty str, not {self.key!r}")
        if not isinstance(self.name, str):
            raise TypeError(f"player name must be a str, not {type(self.name).__name__}")


Teams: TypeAlias = tuple[tuple[PlayerRef, PlayerRef], tuple[PlayerRef, PlayerRef]]


@dataclass(frozen=True, slots=True)
class GameResult:
    """A finished game, or a vaca or match won, in the chat ``chat_key``, won by team ``winner`` (0 or 1).

    ``teams[0]`` holds seats 0 and 2, ``teams[1]`` seats 1 and 3. The service reports every finished game
    (``kind="game"``, the only kind that moves ratings) and, additionally, each vaca and match won.

    A key listed on both teams (a machine level playing for both sides) learns nothing from the result:
    its entry is left untouched. A key listed twice on one team counts once (one game played).
    """

    chat_key: str
    teams: Teams
    winner: int
    kind: ResultKind = "game"

    def __post_init__(self) -> None:
        if not isinstance(self.chat_key, str) or not self.chat_key:
            raise ValueError(f"chat_key must be a non-empty str, not {self.chat_key!r}")
        if self.chat_key == GLOBAL_SCOPE:
            raise ValueError(f"chat_key must not be the global scope {GLOBAL_SCOPE!r}")
        if len(self.teams) != 2 or any(len(team) != 2 for team in self.teams):
            raise ValueError("teams must be two pairs of players")
        for team in self.teams:
            for player in team:
                if not isinstance(player, PlayerRef):
                    raise TypeError(f"teams must hold PlayerRef objects, not {type(player).__name__}")
        if isinstance(self.winner, bool) or self.winner not in (0, 1):
            raise ValueError(f"winner must be 0 or 1, not {self.winner!r}")
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, not {self.kind!r}")

    @property
    def scopes(self) -> tuple[str, str]:
        """The scopes the result updates: its chat and :data:`GLOBAL_SCOPE`."""
        return (self.chat_key, GLOBAL_SCOPE)

    @property
    def player_keys(self) -> tuple[str, ...]:
        """The distinct keys of the result's players, in seat order (teams[0] first)."""
        return tuple(dict.fromkeys(player.key for team in self.teams for player in team))

    @property
    def updated_keys(self) -> tuple[str, ...]:
        """The keys the result updates: :attr:`player_keys` except those listed on both teams."""
        neutral = {p.key for p in self.teams[0]} & {p.key for p in self.teams[1]}
        return tuple(key for key in self.player_keys if key not in neutral)


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    """One row of a leaderboard: a player's statistics in one scope and their rank there.

    ``rank`` is a competition rank (1 + the number of players strictly ahead: ties share a rank) in the
    order asked for. ``rating`` is :func:`display_rating` of ``mu`` and ``sigma``. ``games``, ``vacas`` and
    ``matches`` count the ones played, the ``*_won`` fields the ones won; ``last_played`` is the epoch time
    of the player's latest result in the scope.
    """

    rank: int
    key: str
    name: str
    rating: int
    mu: float
    sigma: float
    games: int
    games_won: int
    vacas: int
    vacas_won: int
    matches: int
    matches_won: int
    last_played: float


_INT_FIELDS = ("games", "games_won", "vacas", "vacas_won", "matches", "matches_won")


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """What a scope stores about one player; :meth:`to_fields` / :meth:`from_fields` map it to a hash."""

    name: str
    mu: float = MODEL.mu
    sigma: float = MODEL.sigma
    games: int = 0
    games_won: int = 0
    vacas: int = 0
    vacas_won: int = 0
    matches: int = 0
    matches_won: int = 0
    last_played: float = 0.0

    @property
    def ordinal(self) -> float:
        """The conservative skill estimate μ − 3σ (the sort key of the rating leaderboard)."""
        return self.mu - 3.0 * self.sigma

    def score(self, by: RankBy) -> float:
        """The sort key of this player on the leaderboard ordered ``by`` rating (ordinal) or wins."""
        return self.ordinal if by == "rating" else float(self.games_won)

    def to_fields(self) -> dict[str, str]:
        """Serialize to string fields (floats with ``repr``, which round-trips exactly)."""
        fields = {"name": self.name, "mu": repr(self.mu), "sigma": repr(self.sigma)}
        fields.update({name: str(getattr(self, name)) for name in _INT_FIELDS})
        fields["last"] = repr(self.last_played)
        return fields

    @classmethod
    def from_fields(cls, fields: Mapping[str, str]) -> PlayerStats:
        """Parse the fields written by :meth:`to_fields` (missing counters count as 0)."""
        counters = {name: int(fields.get(name, "0")) for name in _INT_FIELDS}
        return cls(
            name=fields.get("name", ""),
            mu=float(fields.get("mu", repr(MODEL.mu))),
            sigma=float(fields.get("sigma", repr(MODEL.sigma))),
            last_played=float(fields.get("last", "0")),
            **counters,
        )

    def to_entry(self, key: str, rank: int) -> LeaderboardEntry:
        """Return the leaderboard row of this player, with the given key and rank."""
        return LeaderboardEntry(
            rank=rank,
            key=key,
            name=self.name,
            rating=display_rating(self.mu, self.sigma),
            mu=self.mu,
            sigma=self.sigma,
            games=self.games,
            games_won=self.games_won,
            vacas=self.vacas,
            vacas_won=self.vacas_won,
            matches=self.matches,
            matches_won=self.matches_won,
            last_played=self.last_played,
        )


def apply_result(
    result: GameResult, current: Mapping[str, PlayerStats | None], now: float
) -> dict[str, PlayerStats]:
    """Return the new statistics, in one scope, of every player the result updates.

    ``current`` maps each of ``result.player_keys`` to its stored statistics in the scope (``None`` or
    missing: a newcomer). The result maps each of ``result.updated_keys``: a game moves the ratings (pair
    against pair, with the stored ratings of every seat, neutral ones included) and the game counters; a vaca
    or match only its counters. The name is the one in the result unless the stored entry has a later
    ``last_played``.
    """
    if not math.isfinite(now):
        raise ValueError(f"now must be a finite number, not {now!r}")
    names = {player.key: player.name for team in result.teams for player in team}
    old = {
        key: current.get(key) or PlayerStats(name=names[key], last_played=now) for key in result.player_keys
    }
    updated = set(result.updated_keys)
    new: dict[str, PlayerStats] = {}
    for side, team in enumerate(result.teams):
        won = side == result.winner
        for player in team:
            if player.key in new or player.key not in updated:
                continue  # counted already (listed twice), or neutral (listed on both teams)
            stats = old[player.key]
            if result.kind == "game":
                stats = replace(stats, games=stats.games + 1, games_won=stats.games_won + won)
            elif result.kind == "vaca":
                stats = replace(stats, vacas=stats.vacas + 1, vacas_won=stats.vacas_won + won)
            else:
                stats = replace(stats, matches=stats.matches + 1, matches_won=stats.matches_won + won)
            if now >= stats.last_played:
                stats = replace(stats, name=names[player.key], last_played=now)
            new[player.key] = stats
    if result.kind == "game" and new:
        for key, (mu, sigma) in _rate(result, old).items():
            new[key] = replace(new[key], mu=mu, sigma=sigma)
    return new


def _rate(result: GameResult, old: Mapping[str, PlayerStats]) -> dict[str, tuple[float, float]]:
    """Rate the two pairs against each other; return the new (μ, σ) of every key the result updates."""
    teams: list[list[PlackettLuceRating]] = [
        [MODEL.rating(mu=old[player.key].mu, sigma=old[player.key].sigma) for player in team]
        for team in result.teams
    ]
    ranks: list[float] = [0.0, 1.0] if result.winner == 0 else [1.0, 0.0]
    rated = MODEL.rate(teams, ranks=ranks)
    updated = set(result.updated_keys)
    out: dict[str, tuple[float, float]] = {}
    for team, ratings in zip(result.teams, rated, strict=True):
        for player, rating in zip(team, ratings, strict=True):
            if player.key in updated:
                out.setdefault(player.key, (float(rating.mu), float(rating.sigma)))
    return out


def rank_entries(scored: list[tuple[str, float, PlayerStats]]) -> list[LeaderboardEntry]:
    """Turn ``(key, score, stats)`` rows, already sorted best first, into entries with competition ranks."""
    entries: list[LeaderboardEntry] = []
    previous: float | None = None
    rank = 0
    for position, (key, score, stats) in enumerate(scored, start=1):
        if previous is None or score != previous:
            rank, previous = position, score
        entries.append(stats.to_entry(key, rank))
    return entries
