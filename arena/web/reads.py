"""What the web layer reads, and nothing more: :class:`ArenaReads`, and the views it returns.

The API and the pages only ever call these methods; :class:`arena.web.NodeReads`
implements them over a node and its broker, and a test may implement them
over anything. Each method is one read of one page of data (never one read
per row). Errors are :class:`ReadError` subclasses, which the HTTP edge maps
to a 4xx (or 503) JSON error.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import asdict, dataclass
from typing import Any, Generic, Protocol, TypeVar

# the most rows one page may ask for, and the furthest row it may start at: the rankings' own
from arena.node.history import HistoryPage as HistoryPage
from arena.node.history import HistoryQuery as HistoryQuery
from arena.node.rankings import MAX_LIMIT as MAX_LIMIT
from arena.node.rankings import MAX_OFFSET as MAX_OFFSET
from arena.node.versions import VersionsView as VersionsView
from arena.ratings.leaderboard import Leaderboard, Method

_T = TypeVar("_T")


class ReadError(Exception):
    """Base of what a read may refuse; ``status`` is the HTTP status of the refusal."""

    status = 400


class BadRequest(ReadError):
    status = 400


class Unauthorized(ReadError):
    status = 401


class Forbidden(ReadError):
    """Refused whoever asks, as this request came (a sign-in from another site's page)."""

    status = 403


class NotFound(ReadError):
    status = 404


class TooSlow(ReadError):
    """A request's body did not arrive in time."""

    status = 408


class Conflict(ReadError):
    """The thing exists but cannot be shown yet (a duplicate table another table dealing its cards
    has not finished)."""

    status = 409


class TooMany(ReadError):
    """Too many watchers: retry later."""

    status = 429


class Unavailable(ReadError):
    """The queue cannot be read now."""

    status = 503


@dataclass(frozen=True, slots=True)
class Page(Generic[_T]):
    """Rows ``offset`` to ``offset + len(items)`` of ``total``."""

    total: int
    offset: int
    items: tuple[_T, ...]

    def to_json(self) -> dict[str, Any]:
        return {"total": self.total, "offset": self.offset, "items": [row_json(i) for i in self.items]}


@dataclass(frozen=True)
class TournamentPage(Page["TournamentRow"]):
    """A page of tournaments, or of version tests, and how many of the other kind are listed apart."""

    apart: int = 0

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "apart": self.apart}


def row_json(item: Any) -> dict[str, Any]:
    """A page's row as JSON: its fields as they are. Rows hold plain values (text, numbers, tuples
    of them, a ruleset's dict), which JSON only reads: no deep copy as ``asdict`` makes (which cost
    20 times more, and a page of 200 bots several milliseconds of the node's event loop)."""
    return {name: getattr(item, name) for name in item.__dataclass_fields__}


@dataclass(frozen=True, slots=True)
class ShownBoard:
    """A page of a pool's leaderboard as the site shows it: each bot at the version it plays as (its
    promoted one, :mod:`arena.referee.versions`), said beside its name in each row's JSON as
    ``version`` and ``promoted_how`` (first, sprt or hand; "" for a bot that never said a version);
    the row rates that version, and ``version_games`` says how many of its games it played. Each row
    also says whether its bot is ``connected`` now (to some node of the cluster; None where not
    known) and whether its rating is ``provisional`` (:func:`arena.ratings.leaderboard.is_provisional`)."""

    board: Leaderboard
    #: per entry, in order: (its promoted version, how it was promoted)
    shown: tuple[tuple[str, str], ...]
    #: per entry, in order: whether its bot is connected now (empty: not known)
    connected: tuple[bool, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = self.board.to_json()
        for row, (version, how) in zip(out["entries"], self.shown, strict=True):
            # the version the row rates (the leaderboard's: the promoted one), else the registry's
            row["version"], row["promoted_how"] = row.get("version") or version, how
        on = self.connected or (None,) * len(out["entries"])
        for row, connected in zip(out["entries"], on, strict=True):
            row["connected"] = connected
        return out


@dataclass(frozen=True, slots=True)
class BotRow:
    name: str
    bot_id: str
    #: connected to this node now
    connected: bool
    #: what the bot said in its Hello (any text: show it as text)
    version: str
    revoked: bool


@dataclass(frozen=True, slots=True)
class BotRating:
    pool: str
    method: Method
    rank: int
    rating: float
    low: float | None
    high: float | None
    games: int


@dataclass(frozen=True, slots=True)
class MatchRow:
    match_id: str
    tournament_id: str
    #: running, finished or aborted
    state: str
    #: the bot names of team 0 and team 1
    teams: tuple[str, str]
    #: (team 0, team 1); empty while the match is sealed
    totals: tuple[int, ...]
    #: 0, 1, or None (a draw, not over, or sealed)
    winner: int | None
    #: how it ended ("" while it runs, or is sealed)
    reason: str
    #: a table of duplicate play whose cards another table still in play deals too: its totals,
    #: winner and end are left out until every table dealing them is over
    sealed: bool = False


@dataclass(frozen=True, slots=True)
class TournamentMatchRow:
    """A finished match of a tournament, where its schedule put it: round (an sprt's batch) and
    board (the pairing's place in its round), the bots, and its end (left out while it is sealed)."""

    match_id: str
    round: int
    board: int
    #: finished or aborted
    state: str
    #: team 0 and team 1: a bot's name, or a side of two bots ``"north+south"``
    teams: tuple[str, str]
    #: the bot at each seat 0..3 (team 0 at seats 0 and 2)
    seats: tuple[str, str, str, str]
    #: (team 0, team 1); empty while the match is sealed
    totals: tuple[int, ...]
    #: 0, 1, or None (a draw, or sealed)
    winner: int | None
    #: how it ended ("" while it is sealed)
    reason: str
    #: a table of duplicate play whose cards another table still in play deals too
    sealed: bool = False


@dataclass(frozen=True, slots=True)
class RatingHistory:
    """A bot's online Elo in a pool after every ``every`` of its games there, then its latest:
    ``(games played in the pool, Elo)``, oldest first. It is not the Bradley-Terry rating of the
    leaderboard, which is fitted over every game at once and has no history."""

    pool: str
    bot: str
    points: tuple[tuple[int, float], ...]
    #: a point is kept after every this many games (and the latest)
    every: int
    #: the online Elo's K: a result moves a rating by at most K
    k: float

    def to_json(self) -> dict[str, Any]:
        return {"pool": self.pool, "bot": self.bot, "method": "elo", "every": self.every, "k": self.k,
                "history": [list(p) for p in self.points]}


@dataclass(frozen=True, slots=True)
class BtHistory:
    """A bot's Bradley-Terry rating in a pool as the pool was fitted now and then, oldest first:
    ``(the pool's games, the bot's games, rating, low, high)`` (the 95% interval)."""

    pool: str
    bot: str
    points: tuple[tuple[int, int, float, float, float], ...]

    def to_json(self) -> dict[str, Any]:
        return {"pool": self.pool, "bot": self.bot, "method": "bt",
                "history": [[g, n, round(r, 1), round(lo, 1), round(hi, 1)]
                            for g, n, r, lo, hi in self.points]}


@dataclass(frozen=True, slots=True)
class BotDetail:
    bot: BotRow
    ratings: tuple[BotRating, ...]
    recent_matches: tuple[MatchRow, ...]
    #: paused from the ladder (its recent ladder matches ended in its forfeit): {until (unix seconds),
    #: why, pauses (in a row)}; None when it is not
    ladder_pause: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class TournamentRow:
    tournament_id: str
    format: str
    state: str
    bots: int
    ruleset: Any


@dataclass(frozen=True, slots=True)
class TournamentDetail:
    """A tournament's progress, standings and crosstable; its secret only once it has ended and none
    of its matches can still be played, with when and why it ended and was revealed."""

    tournament_id: str
    format: str
    state: str
    ruleset: Any
    bots: tuple[str, ...]
    duplicate: bool
    #: "" (none), "field" or "mirror"
    duplicate_mode: str
    #: what the mode lets a bot see ("mirror duplicate: both legs seen by both bots ..."); "" if nothing
    duplicate_note: str
    deals: int | None
    matches_done: int
    matches_scheduled: int
    matches_queued: int
    commitment: str
    #: "" until the tournament has ended and none of its matches can still be played
    secret: str
    unrated_reason: str
    standings: tuple[dict[str, Any], ...]
    #: crosstable[i][j]: bot i's points against bot j and their games (bots in standings order), None
    #: if they never met; None when the tournament has too many bots for one
    crosstable: tuple[tuple[tuple[float, int] | None, ...], ...] | None
    crosstable_bots: tuple[str, ...]
    #: the ids of its finished matches, sorted as text (``tournament_matches`` lists them in schedule
    #: order, a page at a time, with their bots and ends)
    finished_matches: tuple[str, ...]
    #: when (unix seconds) and why it ended, and its secret was revealed (0 and "": not yet), and
    #: the same in a line, or why the secret is still withheld ("" while it is open)
    ended_at: float = 0.0
    ended_reason: str = ""
    secret_revealed_at: float = 0.0
    secret_revealed_reason: str = ""
    ending: str = ""
    #: the sprt format's test (:meth:`arena.tournament.sprt.SprtState.to_dict`: its LLR and bounds, the
    #: pairs counted and set aside, the Elo estimate and its 95% interval); None for other formats
    sprt: dict[str, Any] | None = None
    #: how a game of its duplicate mode is scored (:data:`arena.tournament.spec.DUPLICATE_SCORING`); ""
    duplicate_scoring: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class MatchView:
    """A match as anyone may see it: its status, and its record and replay only once it is over."""

    match_id: str
    state: str
    players: tuple[str, ...]
    ruleset: Any
    #: (team 0, team 1); empty while the match is sealed (another table deals its cards)
    totals: tuple[int, ...]
    deals_played: int
    #: "" while the match runs (its deals follow from it), and while it is sealed
    seed: str
    result: dict[str, Any] | None
    #: the full record (docs/records.md): None until the match is over
    record: dict[str, Any] | None
    #: each deal's outcome as ``belote-arena replay --json`` prints it (tricks, score): None until over
    replay: tuple[dict[str, Any], ...] | None
    #: a deal a forfeit stopped: ``{"deal": its index, "tricks": those completed}``; None for none
    unfinished: dict[str, Any] | None = None
    #: a table of duplicate play shown to nobody yet (another table dealing its cards is in play)
    sealed: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class LadderRow:
    """A pool's ladder in the list: its setting and how many bots it has."""

    pool: str
    on: bool
    #: the deals of each of its matches
    deals: int
    bots: int
    #: its matches queued or played now, across the cluster
    in_progress: int


@dataclass(frozen=True, slots=True)
class LadderDetail:
    """A pool's ladder: its setting, its bots, its matches in progress, and the pool's standings (a
    page of its Bradley-Terry leaderboard, with intervals; empty before its first rated game)."""

    pool: str
    on: bool
    deals: int
    #: "" (plain matches): the only mode so far
    duplicate: str
    #: the bots opted in, by name
    bots: tuple[str, ...]
    in_progress: int
    standings: ShownBoard
    #: the matchmaking's latest pairings, newest first: each {a, b, match_id, at, why}
    picks: tuple[dict[str, Any], ...] = ()
    #: each bot opted in: {bot, opponents: [{bot, games, wins, draws, losses}] (most games first, 10 at
    #: most), other_games, paused_until (unix seconds, 0: not paused), paused_why, pauses}
    bot_states: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = row_json(self)
        out["bots"] = list(self.bots)
        out["picks"] = list(self.picks)
        out["bot_states"] = list(self.bot_states)
        out["standings"] = self.standings.to_json()
        return out


@dataclass(frozen=True, slots=True)
class ScheduleRow:
    """A schedule as anyone may see it: when it makes a tournament and what tournament; never its
    seed (a seed given by the caller makes its occurrences unrated, which ``unrated_reason`` says)."""

    schedule_id: str
    every_s: int
    #: ``HH:MM`` (UTC) as asked; "": every ``every_s`` from its creation
    at: str
    #: unix seconds
    created_at: int
    next_at: int
    #: the last occurrence made (0: none yet) and its tournament
    last_at: int
    last_tournament_id: str
    bots: tuple[str, ...]
    #: a pool whose ladder's opted-in bots play each occurrence ("": ``bots``)
    ladder: str
    #: the tournament options (format, ruleset, deals...), without id, bots or seed
    options: dict[str, Any]
    unrated_reason: str
    #: a ladder's: the most bots an occurrence plays (0: a tournament's most)
    max_bots: int = 0
    #: what to know of its bots ("": nothing): why its occurrence due waits, or that it draws them
    why: str = ""


@dataclass(frozen=True, slots=True)
class RecordsExport:
    """A tournament's records to send one at a time (``records.jsonl``, ``records.zip``): those of its
    finished matches in schedule order, less the tables still sealed (left out until every table
    dealing their cards is over) and the aborted ones (no record is kept). ``records`` yields each
    match id and its record's JSON, read when asked for; ``place`` is the reader's among the replays
    running at once, which the sender gives back."""

    tournament_id: str
    match_ids: tuple[str, ...]
    #: finished tables left out because they are still sealed, and aborted matches (no record)
    sealed: int
    aborted: int
    records: AsyncGenerator[tuple[str, bytes], None]
    place: Place | None = None

    async def close(self) -> None:
        """Stop reading the records (a reader that left) and give the reader's place back."""
        try:
            await self.records.aclose()
        finally:
            if self.place is not None:
                self.place.close()


#: the public events of a match, each as JSON (``kind`` names the event), then one
#: ``{"kind": "result", ...}`` when the match has a result
EventStream = AsyncIterator[dict[str, Any]]


class Place(Protocol):
    """A reader's place among the replays running at once on the node."""

    async def send(self, nbytes: int) -> None:
        """Wait until ``nbytes`` more may go (the node's replays share a pace)."""
        ...

    def close(self) -> None:
        """Give the place back (the answer has gone, or its reader left)."""
        ...


class Prepared:
    """A view serialized once and kept (a finished match's, which no longer changes), to send as it
    is, a chunk at a time, at the pace of ``place`` (the reader's among the replays running at
    once), which :meth:`close` gives back."""

    __slots__ = ("body", "place")

    def __init__(self, body: bytes, place: Place | None = None) -> None:
        self.body = body
        self.place = place

    async def chunks(self, size: int) -> AsyncIterator[memoryview]:
        view = memoryview(self.body)
        for at in range(0, len(view), size):
            chunk = view[at:at + size]
            if self.place is not None:
                await self.place.send(len(chunk))
            yield chunk

    def close(self) -> None:
        place, self.place = self.place, None
        if place is not None:
            place.close()


class ArenaReads(Protocol):
    """Everything the web layer reads. All methods may raise :class:`ReadError`."""

    #: whether this node analyses matches (not with ``serve --no-analyses``): its pages ask for an
    #: analysis only if it does, and :meth:`match_analysis` says it does not
    serves_analyses: bool

    async def authorize(self, token: str, peer: str) -> None:
        """Raise :class:`Unauthorized` unless ``token`` (may be "") may read on this node (one made on
        another node an instant ago too: looked for again once this node has caught up)."""
        ...

    def still_opens(self, credential_sha256: str) -> bool:
        """Whether the credential of this SHA-256 still opens anything on this node (the admin's, or
        a bot's token not rotated nor revoked since): a browser's session it opened ends when it no
        longer does. From memory, never a store: asked at each use of a session."""
        ...

    async def pools(self) -> list[str]:
        """The rating pools, the default one first."""
        ...

    async def leaderboard(self, pool: str, method: Method, offset: int, limit: int,
                          search: str = "") -> ShownBoard:
        """A page of ``pool``'s board (with ``search``: of its bots whose name holds it, any case), each
        row saying whether its bot is connected now."""
        ...

    async def rating_history(self, pool: str, bot: str) -> RatingHistory:
        """``bot``'s online Elo in ``pool`` as it went (:class:`RatingHistory`)."""
        ...

    async def bt_history(self, pool: str, bot: str) -> BtHistory:
        """``bot``'s Bradley-Terry rating in ``pool`` as it was fitted now and then (:class:`BtHistory`)."""
        ...

    async def bot_matches(self, name: str, query: HistoryQuery) -> HistoryPage:
        """A page of ``name``'s history (:class:`NotFound` for an unknown bot, :class:`BadRequest` for a
        cursor no longer kept): docs/web.md#a-bots-history-and-statistics."""
        ...

    async def bot_stats(self, name: str) -> dict[str, Any]:
        """``name``'s statistics and head-to-head (:class:`NotFound` for an unknown bot)."""
        ...

    async def bots(self, offset: int, limit: int) -> Page[BotRow]: ...

    async def bot(self, name: str) -> BotDetail: ...

    async def versions(self, name: str) -> VersionsView:
        """``name``'s versions, newest first, and its latest SPRT (:class:`NotFound` for an unknown bot;
        no versions for a bot that never said one)."""
        ...

    async def tournaments(self, offset: int, limit: int, tests: bool = False) -> TournamentPage:
        """The latest tournaments first; with ``tests``, the version tests instead (listed apart)."""
        ...

    async def tournament(self, tournament_id: str) -> TournamentDetail: ...

    async def tournament_matches(self, tournament_id: str, offset: int, limit: int,
                                 ) -> Page[TournamentMatchRow]:
        """The tournament's finished matches in schedule order (round, then board, then leg or
        table), a sealed table's without its end."""
        ...

    async def tournament_standings_csv(self, tournament_id: str) -> str:
        """The tournament's standings as CSV (:func:`arena.tournament.export.standings_csv`)."""
        ...

    async def tournament_records(self, tournament_id: str, peer: str = "") -> RecordsExport:
        """The tournament's records to send (:class:`RecordsExport`), read one at a time (``peer`` reads
        them among the replays running at once: :class:`TooMany` past its share)."""
        ...

    async def ladders(self) -> list[LadderRow]:
        """Every preset pool with a ladder stored or bots opted in."""
        ...

    async def ladder(self, pool: str, offset: int, limit: int) -> LadderDetail:
        """A pool's ladder (:class:`NotFound` for a pool no ladder can run on), its standings from
        ``offset``."""
        ...

    async def schedules(self, offset: int, limit: int) -> Page[ScheduleRow]:
        """The schedules by id, each with its next occurrence."""
        ...

    async def match(self, match_id: str, peer: str = "") -> MatchView | Prepared:
        """The match's view; a finished one's JSON prepared (``peer`` reads it among the replays
        running at once: :class:`TooMany` past its share)."""
        ...

    async def match_record(self, match_id: str, peer: str = "") -> Prepared:
        """A finished match's record (docs/records.md), its JSON prepared (``peer`` as for
        :meth:`match`): :class:`Conflict` while it runs or is sealed, :class:`NotFound` for an
        unknown match or an aborted one (no record is kept)."""
        ...

    async def match_analysis(self, match_id: str, peer: str = "") -> Prepared | int:
        """A finished match's analysis (docs/analysis.md), its JSON prepared (``peer`` as for
        :meth:`match`), or its place in the queue while it is made (0: being made): the first read
        asks for it. :class:`Conflict` while the match runs or is sealed, :class:`NotFound` for an
        unknown or aborted match, :class:`TooMany` when too many wait already."""
        ...

    async def match_events(self, match_id: str, peer: str = "") -> EventStream | Prepared:
        """The public events of the match from its first, live until it ends, then its result; a
        finished match's all prepared, server-sent events and their end (``peer`` as for
        :meth:`match`).

        Raises at once (not while iterating) for an unknown or hidden match.
        """
        ...
