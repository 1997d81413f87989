""":class:`ArenaReads` over a running node and its broker: what the gRPC ``ArenaService`` shows.

The same rules as :class:`arena.node.service.ClusterArenaServicer`: a match's
seed and record only once it is over, a duplicate leg's or table's (its seed,
totals, record and events) only once every table dealing its cards is over
(:func:`arena.tournament.tables.is_sealed`) or the tournament's secret is
revealed, a tournament's secret only once it has ended and none of its matches
can still be played; a node's private
reads need a credential. Broker calls run in a thread; the node's own state
(its copy of the bot registry, its running matches and their event feeds) is read on the loop.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from belote.arena.v1 import game_pb2 as pb

from arena.engine.dealing import commitment
from arena.node.history import Accuracies, HistoryError, KeptAnalyses, bot_statistics, history_page
from arena.node.ladder import LadderError, Ladders, LadderView, ladder_standings
from arena.node.pauses import Pauses, notice_text
from arena.node.rankings import BadRequest as RankingsBadRequest
from arena.node.rankings import Rankings, UnknownPool
from arena.node.seals import sealed_among, still_sealed
from arena.node.versions import VersionsView, is_test, versions_view
from arena.node.worker import Worker
from arena.queue import Broker, BrokerError
from arena.ratings.leaderboard import Leaderboard, Method
from arena.records import ResultReason, side_name
from arena.referee.access import AccessError, Throttled
from arena.referee.analyses import Failed as AnalysisFailed
from arena.referee.analyses import Pending
from arena.referee.analyses import QueueFull as AnalysisQueueFull
from arena.referee.convert import result_to_proto
from arena.referee.live import EventFeed, MatchState, MatchSummary
from arena.referee.node import Node, NodeError
from arena.referee.node import NotFound as NodeNotFound
from arena.referee.registry import BotEntry, PerEntry
from arena.referee.replay_views import (
    SSE_END,
    Body,
    RecordSource,
    event_json,
    events_view,
    match_view,
    record_view,
    result_json,
    sse_frame,
)
from arena.referee.replays import EVENTS, MATCH, RECORD, ReplaySlot
from arena.referee.store import valid_match_id
from arena.referee.versions import promoted
from arena.tournament import Tournaments, UnknownTournament
from arena.tournament.export import standings_csv
from arena.tournament.schedule import GIVEN_SEED, Schedules
from arena.tournament.summary import ResultSummary
from arena.tournament.tables import sealed_reason
from arena.web.reads import (
    BadRequest,
    BotDetail,
    BotRating,
    BotRow,
    BtHistory,
    Conflict,
    EventStream,
    HistoryPage,
    HistoryQuery,
    LadderDetail,
    LadderRow,
    MatchRow,
    MatchView,
    NotFound,
    Page,
    Prepared,
    RatingHistory,
    RecordsExport,
    ScheduleRow,
    ShownBoard,
    TooMany,
    TournamentDetail,
    TournamentMatchRow,
    TournamentPage,
    TournamentRow,
    Unauthorized,
    Unavailable,
)

_T = TypeVar("_T")

#: the recent matches a bot's page lists
RECENT_MATCHES = 20
#: a tournament with more bots than this has no crosstable (its standings remain)
CROSSTABLE_MAX_BOTS = 64
#: how long a tournament's progress, standings and crosstable are kept for the next readers (seconds),
#: and for how many tournaments at most
DETAIL_TTL = 1.0
DETAILS_KEPT = 256
#: how long the bots connected across the cluster (the nodes' heartbeats) are kept for the next
#: leaderboard readers (seconds): a heartbeat says them every few seconds anyway
PRESENCE_TTL = 2.0


class NodeReads:
    """The reads of one node of a queue (its tournaments and results are the broker's)."""

    def __init__(self, node: Node, broker: Broker, tournaments: Tournaments, rankings: Rankings, *,
                 worker: Worker | None = None,
                 version_reasons: Callable[[BotEntry], Mapping[str, str]] | None = None) -> None:
        self.node = node
        self.broker = broker
        #: the tournaments of the queue
        self.store = tournaments
        self.serves_analyses = node.analyses is not None
        #: the analyses this node keeps, as a bot's history reads them (None: it analyses none): each
        #: match's ``accuracy`` and the statistics' accuracy over time
        self.kept_analyses: KeptAnalyses | None = (
            None if node.analyses is None else KeptAnalyses(node.analyses.kept))
        self.rankings = rankings
        #: the node's queue worker, which knows the tournament of each match it plays
        self.worker = worker
        #: why each candidate of a bot waits for its test (the node's VersionTests.reasons)
        self.version_reasons = version_reasons
        self.ladder_views = Ladders(broker)
        self.schedule_store = Schedules(broker)
        self._details: dict[str, tuple[float, _Kept | None]] = {}
        self._details_lock = threading.Lock()
        #: when the bots present across the cluster were read, and they
        self._present: tuple[float, frozenset[str]] | None = None
        #: the row of each bot no stream of which opened here: a page of bots costs little a row
        self._rows = PerEntry(lambda e: BotRow(e.name, e.bot_id, False, "", e.revoked))
        #: the version each bot plays as and how it was promoted: a leaderboard's rows cost a lookup each
        self._shown = PerEntry(_shown_version)

    async def _queue(self, call: Callable[..., _T], *args: Any) -> _T:
        try:
            return await asyncio.to_thread(call, *args)
        except UnknownPool as e:
            raise NotFound(str(e)) from None
        except RankingsBadRequest as e:
            raise BadRequest(str(e)) from None
        except BrokerError as e:
            raise Unavailable(f"the tournament queue: {e}") from None

    # ------------------------------------------------------------ access
    async def authorize(self, token: str, peer: str) -> None:
        try:
            # a token this node does not know is looked for again once the registry has caught up
            # with the other nodes (made there an instant ago), as the gRPC edge does
            who = await self.node.gate.identify(token, peer)
            self.node.gate.require_reader(who)
        except Throttled as e:
            raise TooMany(str(e)) from None
        except AccessError as e:
            raise Unauthorized(str(e)) from None

    def still_opens(self, credential_sha256: str) -> bool:
        # the registry's copy, kept current by the nodes' notices: a rotation or a revocation
        # through any node is known here within arena.node.bots.CUT_BOUND_S
        return self.node.gate.still_opens(credential_sha256)

    # ----------------------------------------------------------- ratings
    async def pools(self) -> list[str]:
        return await self._queue(self.rankings.pools)

    async def leaderboard(self, pool: str, method: Method, offset: int, limit: int,
                          search: str = "") -> ShownBoard:
        board, present = await self._queue(self._board_and_present, pool, method, offset, limit, search)
        return self._shown_board(board, present)

    def _board_and_present(self, pool: str, method: Method, offset: int, limit: int,
                           search: str) -> tuple[Leaderboard, frozenset[str]]:
        """A page of the board, and the bots connected to some live node (in a thread: broker reads)."""
        return self.rankings.leaderboard(pool, method, offset, limit, search), self._present_bots()

    def _present_bots(self) -> frozenset[str]:
        """The bots connected to some live node, as the nodes' heartbeats say (the broker's
        :meth:`~arena.queue.Broker.present_bots`), read at most once every :data:`PRESENCE_TTL` seconds
        and shared by the readers meanwhile; empty when the broker cannot say."""
        with self._details_lock:
            now = time.monotonic()
            if self._present is not None and now - self._present[0] < PRESENCE_TTL:
                return self._present[1]
        try:
            present = frozenset(self.broker.present_bots())
        except BrokerError:
            present = frozenset()
        with self._details_lock:
            self._present = (now, present)
        return present

    def _shown_board(self, board: Leaderboard, present: frozenset[str] | None = None) -> ShownBoard:
        """``board`` with each bot's promoted version, from the node's copy of the registry, and (given
        ``present``, the bots the other nodes have) whether it is connected now: to this node (its own
        links, memory) or to another (``present``). On the loop: never a store read a row."""
        found = [self.node.bot_named(e.bot) for e in board.entries]
        known = iter(self._shown.values([f for f in found if f is not None]))
        shown = tuple(NO_VERSION if f is None else next(known) for f in found)
        if present is None:
            return ShownBoard(board, shown)
        here = set(self.node.connected_bots())
        return ShownBoard(board, shown, tuple(e.bot in here or e.bot in present for e in board.entries))

    async def bt_history(self, pool: str, bot: str) -> BtHistory:
        return BtHistory(pool, bot, tuple(await self._queue(self.rankings.bt_history, pool, bot)))

    # ------------------------------------------------------- a bot's own history
    def _known_bot(self, name: str) -> None:
        """:class:`NotFound` unless ``name`` is registered (the node's copy of the registry, in memory)."""
        try:
            found = self.node.bot_status(name)
        except NodeError as e:
            raise Unavailable(str(e)) from None
        if found is None:
            raise NotFound(f"no bot named {name[:80]!r}")

    async def bot_matches(self, name: str, query: HistoryQuery) -> HistoryPage:
        self._known_bot(name)
        try:
            return await self._queue(history_page, self.broker, self.store, name, query, self._accuracies())
        except HistoryError as e:
            raise BadRequest(str(e)) from None

    async def bot_stats(self, name: str) -> dict[str, Any]:
        self._known_bot(name)
        return await self._queue(bot_statistics, self.broker, self.store, name, self._accuracies())

    def _accuracies(self) -> Accuracies | None:
        return None if self.kept_analyses is None else self.kept_analyses.accuracies

    async def rating_history(self, pool: str, bot: str) -> RatingHistory:
        points = await self._queue(self.rankings.history, pool, bot)
        return RatingHistory(pool, bot, tuple(points), self.broker.history_every, self.broker.elo_k)

    # -------------------------------------------------------------- bots
    # The registry is read from the node's copy in memory (a page costs its rows, never the
    # registry's size); a registry whose store lost it is a 503 saying so.
    async def bots(self, offset: int, limit: int) -> Page[BotRow]:
        try:
            total, entries = self.node.registry_page(offset, limit)
        except NodeError as e:
            raise Unavailable(str(e)) from None
        rows = self._rows.values(entries)
        for i, b in self.node.seen_on_page(entries):
            rows[i] = BotRow(b.name, b.bot_id, b.connected, b.version, b.revoked)
        return Page(total=total, offset=offset, items=tuple(rows))

    async def bot(self, name: str) -> BotDetail:
        try:
            b = self.node.bot_status(name)
        except NodeError as e:
            raise Unavailable(str(e)) from None
        if b is None:
            raise NotFound(f"no bot named {name[:80]!r}")
        ratings = [BotRating(r.pool, r.method, r.rank, r.rating, r.low, r.high, r.games)
                   for r in await self._queue(self.rankings.bot, name)]
        # the node lists its running matches, then its finished ones oldest first: running first here,
        # then the newest
        summaries = [s for s in self.node.summaries() if name in s.players]
        running = [s for s in summaries if s.state is MatchState.RUNNING]
        own = [*running[::-1], *[s for s in summaries if s.state is not MatchState.RUNNING][::-1]]
        own = own[:RECENT_MATCHES]
        # the tournaments of those the worker plays for the queue, read before the queue is: the worker
        # lets a match go only once its result is written, so one that ends meanwhile is in the queue's
        # list read next (read after, it was in neither, and listed without its tournament)
        playing = {} if self.worker is None else {s.match_id: self.worker.tournament_of(s.match_id)
                                                   for s in own}
        # then the newest in the queue (which say their tournament), and which of all those are
        # sealed: in one thread, a few reads
        stored, sealed = await self._queue(_recent_and_sealed, self.broker, self.store, name,
                                           [s.match_id for s in own])
        conduct = (await self._queue(Pauses(self.broker).paused, [name])).get(name)
        tournament = {**playing, **{s.match_id: s.tournament_id for s in stored}}
        seen = {s.match_id for s in own}
        recent = [_row_of_summary(s, tournament.get(s.match_id) or "", s.match_id in sealed) for s in own]
        recent += [_row_of_result(s, s.match_id in sealed) for s in stored if s.match_id not in seen]
        pause = None if conduct is None else {"until": int(conduct.until), "why": notice_text(name, conduct),
                                               "pauses": conduct.pauses}
        return BotDetail(BotRow(b.name, b.bot_id, b.connected, b.version, b.revoked), tuple(ratings),
                         tuple(recent[:RECENT_MATCHES]), pause)

    async def versions(self, name: str) -> VersionsView:
        try:
            known = self.node.bot_status(name) is not None  # a registry its store lost: a 503, as bot()
        except NodeError as e:
            raise Unavailable(str(e)) from None
        entry = self.node.bot_named(name) if known else None
        if entry is None:
            raise NotFound(f"no bot named {name[:80]!r}")
        # its latest test's progress is a few store reads: in a thread
        waiting = None if self.version_reasons is None else self.version_reasons(entry)
        return await self._queue(functools.partial(versions_view, waiting=waiting), entry, self.store,
                                 self.rankings)

    # ------------------------------------------------------- tournaments
    async def tournaments(self, offset: int, limit: int, tests: bool = False) -> TournamentPage:
        return await self._queue(self._tournament_page, offset, limit, tests)

    def _tournament_page(self, offset: int, limit: int, tests: bool) -> TournamentPage:
        every = self.broker.list_tournaments()
        ids = [t for t in reversed(every) if is_test(t) == tests]
        rows = []
        page = ids[offset:offset + limit]
        stored = self.broker.get_tournaments(page)  # one read for the page
        for tid in page:
            found = stored.get(tid)
            if found is not None:
                spec, state = found
                rows.append(TournamentRow(tid, spec.format, str(state), len(spec.bots),
                                          spec.ruleset.to_spec()))
        return TournamentPage(total=len(ids), offset=offset, items=tuple(rows), apart=len(every) - len(ids))

    async def tournament(self, tournament_id: str) -> TournamentDetail:
        kept = await self._queue(self._tournament_kept, tournament_id)
        if kept is None:
            raise NotFound(f"no tournament {tournament_id[:80]!r}")
        return kept.detail

    async def tournament_matches(self, tournament_id: str, offset: int, limit: int,
                                 ) -> Page[TournamentMatchRow]:
        return await self._queue(self._tournament_matches, tournament_id, offset, limit)

    def _tournament_matches(self, tournament_id: str, offset: int, limit: int) -> Page[TournamentMatchRow]:
        kept = self._tournament_kept(tournament_id)
        if kept is None:
            raise NotFound(f"no tournament {tournament_id[:80]!r}")
        page = kept.in_order[offset:offset + limit]
        sealed = sealed_among(self.broker, self.store, [r.match_id for r, _, _ in page])  # one read
        return Page(total=len(kept.in_order), offset=offset, items=tuple(
            _row_in_tournament(r, rnd, board, r.match_id in sealed) for r, rnd, board in page))

    def _tournament_kept(self, tournament_id: str) -> _Kept | None:
        """``_tournament``, computed at most once every :data:`DETAIL_TTL` seconds per tournament:
        it rebuilds the standings from every result summary, so readers asking at once share one."""
        with self._details_lock:
            now = time.monotonic()
            kept = self._details.get(tournament_id)
            if kept is not None and now - kept[0] < DETAIL_TTL:
                return kept[1]
            detail = self._tournament(tournament_id)
            if len(self._details) >= DETAILS_KEPT:
                self._details.clear()
            self._details[tournament_id] = (now, detail)
            return detail

    def _tournament(self, tournament_id: str) -> _Kept | None:
        try:
            progress = self.store.progress(tournament_id)  # from the result summaries, never the records
        except UnknownTournament:
            return None
        spec, state, standings = progress.spec, progress.state, progress.standings
        order = [s.bot for s in standings]
        crosstable: list[list[tuple[float, int] | None]] | None = None
        if len(order) <= CROSSTABLE_MAX_BOTS:
            at = {b: i for i, b in enumerate(order)}
            crosstable = [[None] * len(order) for _ in order]
            for g in progress.bot_games:  # a partners game: each bot against the seat after its own
                for x, y, s in ((g.a, g.b, g.score_a), (g.b, g.a, 1.0 - g.score_a)):
                    if x in at and y in at:
                        cell = crosstable[at[x]][at[y]]
                        crosstable[at[x]][at[y]] = (s, 1) if cell is None else (cell[0] + s, cell[1] + 1)
        ending = progress.ending
        detail = TournamentDetail(
            tournament_id=tournament_id, format=spec.format, state=str(state), ruleset=spec.ruleset.to_spec(),
            bots=tuple(spec.bots), duplicate=bool(spec.duplicate), duplicate_mode=spec.duplicate,
            duplicate_note=spec.duplicate_note, deals=spec.deals,
            matches_done=progress.matches_done, matches_scheduled=progress.matches_scheduled,
            matches_queued=progress.matches_queued, commitment=commitment(spec.seed),
            secret=spec.seed if progress.secret_revealed else "", unrated_reason=spec.unrated_reason,
            standings=tuple({**asdict(s), "diff": s.duplicate_diff if spec.duplicate else s.point_diff}
                            for s in standings),
            crosstable=None if crosstable is None else tuple(tuple(row) for row in crosstable),
            crosstable_bots=tuple(order) if crosstable is not None else (),
            finished_matches=progress.finished, ended_at=ending.ended_at, ended_reason=ending.ended_reason,
            secret_revealed_at=ending.revealed_at, secret_revealed_reason=ending.revealed_reason,
            ending=progress.ending_text, sprt=None if progress.sprt is None else progress.sprt.to_dict(),
            duplicate_scoring=spec.duplicate_scoring,
        )
        return _Kept(detail, tuple(progress.in_schedule_order()))

    async def tournament_standings_csv(self, tournament_id: str) -> str:
        kept = await self._queue(self._tournament_kept, tournament_id)
        if kept is None:
            raise NotFound(f"no tournament {tournament_id[:80]!r}")
        return standings_csv(kept.detail.standings)

    async def tournament_records(self, tournament_id: str, peer: str = "") -> RecordsExport:
        kept = await self._queue(self._tournament_kept, tournament_id)
        if kept is None:
            raise NotFound(f"no tournament {tournament_id[:80]!r}")
        played = [r.match_id for r, _, _ in kept.in_order if r.reason is not ResultReason.ABORTED]
        sealed = await self._queue(sealed_among, self.broker, self.store, played)  # one read or so
        shown = tuple(m for m in played if m not in sealed)
        slot = await self._replay_slot(peer)
        return RecordsExport(tournament_id, shown, sealed=len(sealed),
                             aborted=len(kept.in_order) - len(played), records=self._records(shown),
                             place=slot)

    async def _records(self, match_ids: tuple[str, ...]) -> AsyncGenerator[tuple[str, bytes], None]:
        """Each match's record JSON, kept or built in the build process, one at a time."""
        for match_id in match_ids:
            body = await self._view(match_id, RECORD, record_view)
            if body is None:  # gone from the queue since (a tournament forgotten): nothing to send
                continue
            yield match_id, body.data

    # ------------------------------------------------------ ladders, schedules
    # Each is read in a thread: a ladder's bots and the schedules grow with what is stored.
    async def ladders(self) -> list[LadderRow]:
        return await self._queue(self._ladder_rows)

    def _ladder_rows(self) -> list[LadderRow]:
        return [LadderRow(v.setting.pool, v.setting.on, v.setting.deals, len(v.bots), v.in_progress)
                for v in self.ladder_views.views()]

    async def ladder(self, pool: str, offset: int, limit: int) -> LadderDetail:
        view, board, present = await self._queue(self._ladder, pool, offset, limit)
        s = view.setting
        picks = tuple({"a": p.a, "b": p.b, "match_id": p.match_id, "at": p.at, "why": p.why}
                      for p in view.picks)
        states = tuple({**asdict(b), "opponents": [asdict(o) for o in b.opponents],
                        "paused_until": int(b.paused_until)} for b in view.states)
        return LadderDetail(s.pool, s.on, s.deals, s.duplicate, tuple(view.bots), view.in_progress,
                            self._shown_board(board, present), picks, states)  # the registry copy: the loop

    def _ladder(self, pool: str, offset: int, limit: int) -> tuple[LadderView, Leaderboard, frozenset[str]]:
        try:
            # GetLadder's reads
            # the standings first, then the bots' opponents from the very counts they were fitted from
            board = ladder_standings(self.rankings, pool, offset, limit)
            return self.ladder_views.view(pool, counts=self.rankings.pair_counts), board, self._present_bots()
        except LadderError as e:
            raise NotFound(str(e)) from None

    async def schedules(self, offset: int, limit: int) -> Page[ScheduleRow]:
        return await self._queue(self._schedule_page, offset, limit)

    def _schedule_page(self, offset: int, limit: int) -> Page[ScheduleRow]:
        stored = self.schedule_store.stored()  # one read
        now = time.time()
        rows = []
        for found in stored[offset:offset + limit]:
            s = found.schedule
            rows.append(ScheduleRow(
                schedule_id=s.schedule_id, every_s=s.every_s, at=s.at, created_at=s.created_at,
                next_at=s.next_after(now), last_at=found.last,
                last_tournament_id=s.tournament_id(found.last) if found.last else "",
                bots=tuple(s.bots.names), ladder=s.bots.ladder, options=dict(s.options),
                unrated_reason=GIVEN_SEED if s.seed else "", max_bots=s.max_bots,
                why=self.schedule_store.why(found, now)))  # a ladder's reads its bots
        return Page(total=len(stored), offset=offset, items=tuple(rows))

    # ------------------------------------------------------------ matches
    def _sealed(self, match_id: str) -> bool:
        """A table of duplicate play some table dealing its cards has not finished: they are still
        in play (the seal rule, :func:`arena.tournament.tables.is_sealed`), unless its tournament's
        secret is revealed (:func:`arena.node.seals.still_sealed`)."""
        return still_sealed(self.broker, self.store, match_id)

    async def match(self, match_id: str, peer: str = "") -> MatchView | Prepared:
        sealed = await self._queue(self._sealed, match_id)
        if self.node.is_running(match_id):
            return _view_of_summary(self.node.summary(match_id), sealed=sealed)
        slot = await self._replay_slot(peer)
        prepared = None
        try:
            body = None if sealed else await self._view(match_id, MATCH, match_view)
            if body is not None:
                prepared = Prepared(body.data, slot)  # its sender gives the place back
                return prepared
            # a leg still sealed: its status without its seed; or a match aborted here, unrecorded
            return _view_of_summary(await self._finished_summary(match_id), sealed=sealed)
        finally:
            if prepared is None:
                slot.close()

    async def match_record(self, match_id: str, peer: str = "") -> Prepared:
        if await self._queue(self._sealed, match_id):
            raise Conflict(sealed_reason(match_id))
        if self.node.is_running(match_id):
            raise Conflict(f"match {match_id} is still running: its record holds every hand, so it is "
                           "served once the match is over")
        slot = await self._replay_slot(peer)
        prepared = None
        try:
            body = await self._view(match_id, RECORD, record_view)
            if body is None:
                await self._finished_summary(match_id)  # unknown: its 404
                raise NotFound(f"match {match_id} was aborted: no record of an aborted match is kept")
            prepared = Prepared(body.data, slot)
            return prepared
        finally:
            if prepared is None:
                slot.close()

    async def match_analysis(self, match_id: str, peer: str = "") -> Prepared | int:
        analyses = self.node.analyses
        if analyses is None:
            raise NotFound("this node does not analyse matches")
        if not valid_match_id(match_id):
            raise NotFound(f"no match {match_id[:200]!r} on this node or in the queue")
        if await self._queue(self._sealed, match_id):
            raise Conflict(sealed_reason(match_id))
        if self.node.is_running(match_id):
            raise Conflict(f"match {match_id} is still running: its analysis sees every hand, so it is "
                           "made once the match is over")
        summary = await self._finished_summary(match_id)  # unknown: its 404, before it is queued
        if summary.state is MatchState.ABORTED:
            raise NotFound(f"match {match_id} was aborted: no record of an aborted match is kept")
        try:
            found = await analyses.ask(match_id)
        except AnalysisFailed as e:
            raise NotFound(str(e)) from None
        except AnalysisQueueFull as e:
            raise TooMany(str(e)) from None
        if isinstance(found, Pending):
            return found.position
        slot = await self._replay_slot(peer)
        return Prepared(found.data, slot)  # its sender gives the place back

    async def match_events(self, match_id: str, peer: str = "") -> EventStream | Prepared:
        if await self._queue(self._sealed, match_id):
            raise Conflict(sealed_reason(match_id))
        if self.node.is_running(match_id):
            history, feed = self.node.watch(match_id)
            return self._events(match_id, history, feed)
        slot = await self._replay_slot(peer)
        prepared = None
        try:
            body = await self._view(match_id, EVENTS, events_view)
            if body is not None:
                prepared = Prepared(body.data, slot)
                return prepared
            summary = await self._finished_summary(match_id)  # aborted here, unrecorded: its result
            result = [] if summary.result is None else [sse_frame("result", result_json(
                result_to_proto(summary.result, summary.deals_played)))]
            prepared = Prepared(b"".join([*result, SSE_END]), slot)
            return prepared
        finally:
            if prepared is None:
                slot.close()

    async def _replay_slot(self, peer: str) -> ReplaySlot:
        try:
            return await self.node.replay_slot(peer)
        except NodeError as e:
            raise TooMany(str(e)) from None

    async def _view(self, match_id: str, kind: str,
                    build: Callable[[RecordSource], tuple[Body, str]]) -> Body | None:
        """A finished match's view, kept or built once (:mod:`arena.referee.replays`)."""
        try:
            return await self.node.replay_view(match_id, kind, build)
        except NodeError as e:  # the queue, the build process, or a damaged record
            raise Unavailable(str(e)) from None

    async def _finished_summary(self, match_id: str) -> MatchSummary:
        """The summary of a match that is not running (from its record, read once off the loop)."""
        try:
            return await self.node.finished_summary(match_id)
        except NodeNotFound:
            raise NotFound(f"no match {match_id!r} on this node or in the queue") from None
        except NodeError as e:  # the queue, the build process, or a damaged record
            raise Unavailable(str(e)) from None

    async def _events(self, match_id: str, history: Iterator[pb.PublicEvent],
                      feed: EventFeed) -> AsyncIterator[dict[str, Any]]:
        """A running match's events: those so far (a few at a time between turns of the loop, however
        many), then each as it is played, then its result."""
        for n, past in enumerate(history):
            yield event_json(past)
            if n % EVENTS_PER_TURN == EVENTS_PER_TURN - 1:
                await asyncio.sleep(0)
        while (event := await feed.get()) is not None:
            yield event_json(event)
        try:
            summary = self.node.summary(match_id, stored=False)
        except NodeNotFound:
            return  # aborted, and forgotten since
        if summary.result is not None:
            yield result_json(result_to_proto(summary.result, summary.deals_played))


#: what a leaderboard row of a bot without versions (or no longer registered) says of its version
NO_VERSION = ("", "")


def _shown_version(entry: BotEntry) -> tuple[str, str]:
    """The version ``entry``'s bot plays as, and how it was promoted (first, sprt, hand)."""
    p = promoted(entry.versions)
    return NO_VERSION if p is None else (p.version, p.how)


#: events of a running match sent to a late spectator between two turns of the event loop
EVENTS_PER_TURN = 32


@dataclass(frozen=True, slots=True)
class _Kept:
    """A tournament's page, and its results in schedule order with their round and board."""

    detail: TournamentDetail
    in_order: tuple[tuple[ResultSummary, int, int], ...]


def _recent_and_sealed(broker: Broker, tournaments: Tournaments, bot: str, own: list[str],
                       ) -> tuple[list[ResultSummary], set[str]]:
    """The bot's newest results in the queue (which name their tournament, the node's own matches'
    too), and which of those and of ``own`` are sealed: two reads or so, whatever their number."""
    stored = broker.bot_matches(bot, RECENT_MATCHES)
    return stored, sealed_among(broker, tournaments, [*own, *(s.match_id for s in stored)])


def _view_of_summary(summary: MatchSummary, *, sealed: bool = False) -> MatchView:
    """A match's status without its record: running, aborted, or a table still sealed (then without
    its seed, totals and result either: the seal rule)."""
    return MatchView(
        match_id=summary.match_id, state=str(summary.state), players=summary.players,
        ruleset=summary.ruleset, totals=() if sealed else summary.totals,
        deals_played=0 if sealed else summary.deals_played, seed="" if sealed else summary.seed,
        result=None if summary.result is None or sealed else summary.result.to_dict(), record=None,
        replay=None, sealed=sealed,
    )


def _row_of_summary(s: MatchSummary, tournament_id: str = "", sealed: bool = False) -> MatchRow:
    """A row of the node's own match; a sealed table's without its totals, winner and end."""
    end = None if sealed else s.result
    return MatchRow(
        match_id=s.match_id, tournament_id=tournament_id, state=str(s.state),
        teams=(side_name(s.players[0], s.players[2]), side_name(s.players[1], s.players[3]))
        if len(s.players) == 4 else ("", ""), totals=() if sealed else s.totals,
        winner=None if end is None else end.winner, reason="" if end is None else str(end.reason),
        sealed=sealed)


def _row_of_result(r: ResultSummary, sealed: bool = False) -> MatchRow:
    """A row of a match in the queue; a sealed table's without its totals, winner and end."""
    return MatchRow(match_id=r.match_id, tournament_id=r.tournament_id, state=str(MatchState.FINISHED),
                    teams=(r.team0, r.team1), totals=() if sealed else r.totals,
                    winner=None if sealed else r.winner, reason="" if sealed else str(r.reason),
                    sealed=sealed)


def _row_in_tournament(r: ResultSummary, rnd: int, board: int, sealed: bool) -> TournamentMatchRow:
    """A row of a tournament's finished match; a sealed table's without its totals, winner and end."""
    aborted = r.reason is ResultReason.ABORTED
    return TournamentMatchRow(
        match_id=r.match_id, round=rnd, board=board,
        state=str(MatchState.ABORTED if aborted else MatchState.FINISHED), teams=(r.team0, r.team1),
        seats=r.seat_bots, totals=() if sealed else r.totals, winner=None if sealed else r.winner,
        reason="" if sealed else str(r.reason), sealed=sealed)
