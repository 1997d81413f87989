"""``ArenaService`` on a node of a queue: the referee's calls, tournaments, and records from the queue.

- Tournaments: created (admin) with a secret of fresh randomness, stored with
  it, that the node commits to; followed by anyone, cancelled and resumed
  (admin). Their bots must be registered, and the status names the bots no
  live node has connected. The secret is shown once the tournament has ended
  and none of its matches can still be played (a cancel stops its running
  matches first: :mod:`arena.node.worker`).
- Records: a tournament's match recorded on another node is read from the
  queue's results, so any node answers for any of them.
- Duplicate play deals the same cards at two tables (a mirror pair's legs, a
  field quartet's tables on one board set): a table's record, seed, totals and
  public events stay hidden until every table dealing its cards is over
  (:mod:`arena.node.seals`, which the web reads ask too), in every view of it:
  GetMatch, GetMatchRecord, WatchMatch, ListMatches and a bot's recent matches
  (GetBot), where it is marked ``sealed``.
- The queue's errors are UNAVAILABLE, with the one-line reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import math
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import grpc
from belote.arena.v1 import arena_service_pb2 as apb

from arena.edge.quietlog import quiet
from arena.engine import EngineError
from arena.engine.dealing import commitment
from arena.engine.rules import spec_from_text, spec_to_text
from arena.node.history import HistoryError, KeptAnalyses, bot_report, parse_query
from arena.node.ladder import DEFAULT_DEALS, LadderError, Ladders, LadderView, check_pool, ladder_standings
from arena.node.rankings import BadRequest, Rankings, UnknownPool, VersionRating
from arena.node.seals import seal, sealed_among, still_sealed
from arena.node.versions import DUPLICATE_NOTE, is_test, versions_view
from arena.node.versions import ELO1 as TEST_ELO1
from arena.queue import CANCEL_NOTICE, SCHEDULE_NOTICE, Broker, BrokerDataLost, BrokerError
from arena.ratings.leaderboard import Leaderboard
from arena.records import BOT_NAME_RULE, ResultReason, valid_bot_name
from arena.referee.arena_service import RECENT_MATCHES, ArenaServicer, summary_to_proto, versions_to_proto
from arena.referee.calls import EDGE_ERRORS, Context, abort
from arena.referee.live import MatchState, MatchSummary
from arena.referee.node import FailedPrecondition, InvalidArgument, Node, NotFound, ResourceExhausted
from arena.referee.registry import BotEntry
from arena.referee.versions import promoted
from arena.tournament import (
    Progress,
    Standing,
    TournamentError,
    TournamentExists,
    Tournaments,
    TournamentSpec,
    UnknownTournament,
    default_duplicate,
)
from arena.tournament.audit import (
    DEFAULT_MAX_DEALS,
    MAX_DEALS,
    AnalysisCache,
    AuditFailed,
    TournamentAudit,
    analyse_apart,
    audit_tournament,
)
from arena.tournament.detection import DEFAULT_MARGIN_MS, MAX_MARGIN_MS
from arena.tournament.schedule import (
    LADDER_FORMATS,
    MIN_EVERY_S,
    BotSelector,
    Schedule,
    ScheduleError,
    ScheduleExists,
    Schedules,
    Stored,
    UnknownSchedule,
)
from arena.tournament.spec import check_callers_id
from arena.tournament.summary import ResultSummary
from arena.tournament.tables import is_duplicate_match, sealed_reason

_T = TypeVar("_T")

#: why a tournament made with a seed given by a person is not rated
GIVEN_SEED = "its seed was given by the caller, so its deals were known in advance"

#: the bots one AddLadderBot or RemoveLadderBot may name (a tournament's most)
MAX_LADDER_BOTS_A_CALL = 256


#: what an UNAVAILABLE of CreateTournament adds: the create may have been stored or not, and a retry says
RETRY_CREATE = ("; the tournament may or may not be stored: create it again with the same id and spec "
                "once the queue is back (it answers the tournament made, if it was)")

class ClusterArenaServicer(ArenaServicer):
    def __init__(self, node: Node, broker: Broker, tournaments: Tournaments,
                 rankings: Rankings | None = None) -> None:
        super().__init__(node)
        self.broker = broker
        self.tournaments = tournaments
        self.rankings = rankings or Rankings(broker, promoted=self._promoted_version)
        #: the analyses this node keeps, as a bot's history and report read them (None: it analyses
        #: none): each match's accuracy, the accuracy over time, a loss's worst decisions
        self.kept_analyses: KeptAnalyses | None = None
        #: called with a tournament's id once it is cancelled through this node: stops the node's own
        #: running matches of it at once (the worker's ``stop_tournament``; the other nodes stop theirs
        #: on the cancel's notice, or within their check interval if they miss it)
        self.on_cancel: Callable[[str], object] | None = None
        self.schedules = Schedules(broker)
        #: the shortest period a schedule may have (NodeSettings.schedule_min_every_s)
        self.min_every_s = MIN_EVERY_S
        #: called once a schedule is made or cancelled through this node (its schedule loop's wake)
        self.on_schedule: Callable[[], object] | None = None
        #: called once a ladder is changed through this node (its ladder loop's wake)
        self.on_ladder: Callable[[], object] | None = None
        #: why each candidate of a bot waits for its test (the node's VersionTests.reasons)
        self.version_reasons: Callable[[BotEntry], Mapping[str, str]] | None = None
        self.ladders = Ladders(broker)
        #: one audit at a time on this node, and what earlier audits worked out
        self._auditing = asyncio.Lock()
        self._audits = AnalysisCache()

    async def GetBotVersions(
        self, request: apb.GetBotVersionsRequest, context: Context,
    ) -> apb.GetBotVersionsResponse:
        """The bot's versions and its latest version test, with the LLR after each pair."""
        await self.reader(context)
        entry = await self.versions_entry(request.name, context)
        waiting = self.version_reasons(entry) if self.version_reasons is not None else None
        view_of = functools.partial(versions_view, waiting=waiting)
        view = await self._queue(context, view_of, entry, self.tournaments, self.rankings)
        reply = apb.GetBotVersionsResponse(bot=entry.name, promoted=entry.promoted_version,
                                           versions=versions_to_proto(entry, waiting), note=DUPLICATE_NOTE,
                                           ratings=[version_rating_to_proto(r) for r in view.ratings])
        if view.test is not None:
            t = view.test
            reply.test.CopyFrom(apb.VersionTest(
                tournament_id=t.tournament_id, candidate=t.candidate, against=t.against, state=t.state,
                llr=t.llr, lower=t.lower, upper=t.upper, elo0=t.elo0, elo1=t.elo1, max_pairs=t.max_pairs,
                pairs=t.pairs, pentanomial=t.pentanomial, decision=t.decision, llr_series=t.llr_series,
                set_aside=t.set_aside, elo=t.elo, elo_low=t.elo_low, elo_high=t.elo_high))
        return reply

    async def promoted_by_hand(self, before: BotEntry, after: BotEntry) -> None:
        """Stop the tests the promotion made moot (their versions wait for a new test against the
        version promoted now); a test already over is left as it is."""
        moot = [v.test for v in before.versions if v.state == "testing"]
        for tid in moot:
            with contextlib.suppress(TournamentError, BrokerError):
                await asyncio.to_thread(self.tournaments.cancel, tid)
        if moot and self.on_ladder is not None:
            self.on_ladder()  # the ladder thread starts the next test

    async def _queue(self, context: Context, call: Callable[..., _T], *args: Any,
                     unavailable: str = "") -> _T:
        """``call(*args)`` on the queue, in a thread; its errors become statuses (``unavailable``: what
        an UNAVAILABLE but a data loss adds, for the caller)."""
        try:
            return await asyncio.to_thread(call, *args)
        except (UnknownTournament, UnknownSchedule) as e:
            await abort(context, NotFound(str(e)))
        except (TournamentExists, ScheduleExists) as e:
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, str(e))
        except (TournamentError, EngineError, LadderError) as e:
            await abort(context, InvalidArgument(str(e)))
        except UnknownPool as e:
            await abort(context, NotFound(str(e)))
        except BadRequest as e:
            await abort(context, InvalidArgument(str(e)))
        except BrokerError as e:
            note = "" if isinstance(e, BrokerDataLost) else unavailable  # a loss: nothing was stored
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"the tournament queue: {e}{note}")
        raise AssertionError("context.abort returns only by raising")

    # ------------------------------------------------------------ rankings
    async def GetLeaderboard(
        self, request: apb.GetLeaderboardRequest, context: Context,
    ) -> apb.GetLeaderboardResponse:
        await self.reader(context)
        board = await self._queue(context, self.rankings.leaderboard, request.pool, request.method or "bt",
                                  request.offset, request.limit)
        pools = await self._queue(context, self.rankings.pools)
        return leaderboard_to_proto(board, pools, self._shown)

    async def GetBot(self, request: apb.GetBotRequest, context: Context) -> apb.GetBotResponse:
        await self.reader(context)
        reply = await self.bot_reply(request.name, context)
        own = [m.match_id for m in reply.recent_matches]
        # then the newest in the queue, and which of all those are sealed: in one thread, a few reads
        stored, sealed = await self._queue(context, recent_and_sealed, self.broker, self.tournaments,
                                           request.name, own)
        seen = set(own)
        reply.recent_matches.extend(
            summary_to_proto(stored_summary(s)) for s in stored if s.match_id not in seen)
        del reply.recent_matches[RECENT_MATCHES:]
        for msg in reply.recent_matches:
            if msg.match_id in sealed:
                seal(msg)
        ratings = await self._queue(context, self.rankings.bot, request.name)
        reply.ratings.extend(apb.BotRating(pool=r.pool, rating=r.rating, low=r.low, high=r.high, rank=r.rank,
                                           elo=r.elo, games=r.games, method=r.method) for r in ratings)
        return reply

    async def GetBotReport(self, request: apb.GetBotReportRequest,
                           context: Context) -> apb.GetBotReportResponse:
        """The bot's statistics, head-to-head and a page of its history (:mod:`arena.node.history`), read
        in one thread."""
        await self.reader(context)
        await self.bot_reply(request.name, context)  # an unknown bot: NOT_FOUND
        params = {k: v for k, v in (("opponent", request.opponent), ("result", request.result),
                                    ("pool", request.pool), ("tournament", request.tournament)) if v}
        if request.limit:
            params["limit"] = str(request.limit)
        try:
            query = parse_query(params)
        except HistoryError as e:
            await abort(context, InvalidArgument(str(e)))
        kept = self.kept_analyses
        accuracies, worst = (None, None) if kept is None else (kept.accuracies, kept.worst)
        report = await self._queue(context, bot_report, self.broker, self.tournaments, request.name, query,
                                   accuracies, worst)
        return apb.GetBotReportResponse(report_json=json.dumps(report, separators=(",", ":")))

    # ------------------------------------------------- duplicate tables and records
    def _sealed(self, match_id: str) -> bool:
        """A table of duplicate play some table dealing its cards has not finished: they are still
        in play (the seal rule, :func:`arena.tournament.tables.is_sealed`), unless its tournament's
        secret is revealed (:func:`still_sealed`)."""
        return still_sealed(self.broker, self.tournaments, match_id)

    async def _is_sealed(self, context: Context, match_id: str) -> bool:
        sealed: bool = await self._queue(context, self._sealed, match_id)
        return sealed

    async def _check_unsealed(self, context: Context, match_id: str) -> None:
        if await self._is_sealed(context, match_id):
            await abort(context, FailedPrecondition(sealed_reason(match_id)))

    async def GetMatchRecord(
        self, request: apb.GetMatchRecordRequest, context: Context,
    ) -> apb.GetMatchRecordResponse:
        """The node's own record, or the queue's (the node's replays read both)."""
        await self.reader(context)
        await self._check_unsealed(context, request.match_id)
        return await super().GetMatchRecord(request, context)

    async def GetMatch(self, request: apb.GetMatchRequest, context: Context) -> apb.GetMatchResponse:
        reply = await super().GetMatch(request, context)
        if await self._is_sealed(context, request.match_id):
            seal(reply.match)
        return reply

    async def ListMatches(
        self, request: apb.ListMatchesRequest, context: Context,
    ) -> apb.ListMatchesResponse:
        await self.reader(context)
        out = [summary_to_proto(summary) for summary in self.node.summaries()]
        duplicate = [msg.match_id for msg in out if is_duplicate_match(msg.match_id)]
        if duplicate:  # which are sealed, for the whole list at once
            sealed = await self._queue(context, sealed_among, self.broker, self.tournaments, duplicate)
            for msg in out:
                if msg.match_id in sealed:
                    seal(msg)
        return apb.ListMatchesResponse(matches=out)

    async def WatchMatch(  # type: ignore[override]  # writes through its context
        self, request: apb.WatchMatchRequest, context: Context,
    ) -> None:
        await self.reader(context)
        await self._check_unsealed(context, request.match_id)
        await self.send_watch(request.match_id, context)

    # ---------------------------------------------------------- tournaments
    async def CreateTournament(
        self, request: apb.CreateTournamentRequest, context: Context,
    ) -> apb.CreateTournamentResponse:
        await self.admin(context, "creating a tournament")
        try:
            spec = self._spec_of(request.spec)
            check_callers_id(spec.tournament_id)  # a version test's id: the arena's own
            await self._check_bots(spec)
        except (TournamentError, EngineError) as e:
            await abort(context, InvalidArgument(str(e)))
        except EDGE_ERRORS as e:
            await abort(context, e)
        # made again with the same spec (a retry whose first answer was lost), the one made first
        spec = await self._queue(context, functools.partial(self.tournaments.create_once, spec,
                                                            seed_drawn=not request.spec.seed),
                                 unavailable=RETRY_CREATE if request.spec.tournament_id else "")
        queued = await self._queue(context, self.broker.pending_count, spec.tournament_id)
        return apb.CreateTournamentResponse(
            tournament_id=spec.tournament_id, commitment=commitment(spec.seed), jobs_queued=queued,
            unrated_reason=spec.unrated_reason, duplicate_note=spec.duplicate_note,
        )

    def _spec_of(self, msg: apb.TournamentSpec) -> TournamentSpec:
        tid = msg.tournament_id or f"t-{secrets.token_hex(4)}"
        data: dict[str, Any] = {
            "tournament_id": tid, "format": msg.format, "bots": list(msg.bots),
            "ruleset": spec_from_text(msg.ruleset or "classic", "ruleset"),
            "duplicate": duplicate_mode(msg),
            # fresh randomness, stored with the spec: a tournament made again with the same id (after
            # the first was lost or deleted) never deals what the first did, which may be public
            "seed": msg.seed or secrets.token_hex(32),
            "unrated_reason": GIVEN_SEED if msg.seed else "",
        }
        for key in ("candidate", "deals", "target", "rounds"):
            value = getattr(msg, key)
            if value:
                data[key] = value
        if msg.format == "sprt" and msg.HasField("sprt"):
            o = msg.sprt
            data["sprt"] = {"elo0": o.elo0, "elo1": o.elo1, "alpha": o.alpha, "beta": o.beta,
                            "batch_pairs": o.batch_pairs, "max_pairs": o.max_pairs}
        return TournamentSpec.from_dict(data)

    async def _check_bots(self, spec: TournamentSpec) -> None:
        unknown, revoked = [], []
        for name, entry in zip(spec.bots, await self.node.find_bots(spec.bots), strict=True):
            if entry is None:
                unknown.append(name)
            elif entry.revoked:
                revoked.append(name)
        if unknown:
            raise InvalidArgument(f"no bot named {', '.join(unknown)}: register it first")
        if revoked:
            raise InvalidArgument(f"bot {', '.join(revoked)} is revoked")

    async def GetTournament(
        self, request: apb.GetTournamentRequest, context: Context,
    ) -> apb.GetTournamentResponse:
        await self.reader(context)
        return apb.GetTournamentResponse(tournament=await self._status(context, request.tournament_id))

    async def _status(self, context: Context, tournament_id: str) -> apb.TournamentStatus:
        progress = await self._queue(context, progress_with_interval, self.tournaments, tournament_id)
        present: set[str] = set()
        if progress.state.is_open:
            present = await self._queue(context, self.broker.present_bots)
        return status_to_proto(progress, present)

    async def ListTournaments(
        self, request: apb.ListTournamentsRequest, context: Context,
    ) -> apb.ListTournamentsResponse:
        await self.reader(context)
        rows = await self._queue(context, self._summaries, request.version_tests)
        return apb.ListTournamentsResponse(tournaments=rows)

    def _summaries(self, version_tests: bool) -> list[apb.TournamentSummary]:
        """Every tournament, or with ``version_tests`` every version test (listed apart: a bot's tests are
        the arena's, not an admin's), in three reads whatever their number (never reading their results)."""
        ids = [t for t in self.broker.list_tournaments() if is_test(t) == version_tests]
        stored = self.broker.get_tournaments(ids)
        done = self.broker.result_counts(ids)
        return [apb.TournamentSummary(tournament_id=tid, format=stored[tid][0].format, state=stored[tid][1],
                                      matches_done=done.get(tid, 0))
                for tid in ids if tid in stored]

    async def CancelTournament(
        self, request: apb.CancelTournamentRequest, context: Context,
    ) -> apb.CancelTournamentResponse:
        await self.admin(context, "cancelling a tournament")
        await self._queue(context, self.tournaments.cancel, request.tournament_id)
        if self.on_cancel is not None:
            self.on_cancel(request.tournament_id)
        try:  # every node stops its matches of it on this notice (this one already has)
            await asyncio.to_thread(self.broker.publish_notice, CANCEL_NOTICE, request.tournament_id)
        except BrokerError as e:  # the cancel is made: the other nodes find it by their poll
            quiet.warning(("cancel notice",), "the other nodes were not told of the cancel of %s at once "
                          "(they find it within their check interval): %s", request.tournament_id[:80], e)
        return apb.CancelTournamentResponse()

    async def ResumeTournament(
        self, request: apb.ResumeTournamentRequest, context: Context,
    ) -> apb.ResumeTournamentResponse:
        await self.admin(context, "resuming a tournament")
        await self._queue(context, self.tournaments.progress, request.tournament_id)  # unknown: NOT_FOUND
        await self._queue(context, self.tournaments.advance, request.tournament_id)
        return apb.ResumeTournamentResponse(tournament=await self._status(context, request.tournament_id))

    # ---------------------------------------------------------- schedules
    async def CreateSchedule(
        self, request: apb.CreateScheduleRequest, context: Context,
    ) -> apb.CreateScheduleResponse:
        await self.admin(context, "scheduling tournaments")
        try:
            schedule = self._schedule_of(request)
            if not schedule.bots.ladder:  # a ladder's bots are its opted-in ones at each occurrence
                await self._check_bots(schedule.spec_for(schedule.first))
        except (TournamentError, EngineError) as e:
            await abort(context, InvalidArgument(str(e)))
        except EDGE_ERRORS as e:
            await abort(context, e)
        await self._queue(context, self.schedules.create, schedule)
        await self._schedule_changed(schedule.schedule_id)
        made = Stored(schedule, 0)
        why = await self._queue(context, self.schedules.why, made)  # a ladder's: reads its bots
        return apb.CreateScheduleResponse(schedule=schedule_to_proto(made, why=why))

    def _schedule_of(self, msg: apb.CreateScheduleRequest) -> Schedule:
        if msg.ladder:
            try:
                check_pool(msg.ladder)
            except LadderError as e:
                raise ScheduleError(str(e)) from None
            if msg.spec.bots:
                raise ScheduleError("a ladder's schedule names no bots: its pool's opted-in bots play each "
                                    "occurrence")
            if msg.spec.format not in LADDER_FORMATS:
                raise ScheduleError(f"a ladder's bots play a {', '.join(LADDER_FORMATS)} (the others need a "
                                    f"candidate named), not a {msg.spec.format[:32]}")
            stand_ins = apb.TournamentSpec()
            stand_ins.CopyFrom(msg.spec)
            stand_ins.bots.extend(BotSelector(ladder=msg.ladder).bots())
            msg = apb.CreateScheduleRequest(schedule_id=msg.schedule_id, spec=stand_ins, every_s=msg.every_s,
                                            at=msg.at, ladder=msg.ladder, max_bots=msg.max_bots)
        if not self.min_every_s <= msg.every_s:
            raise ScheduleError(f"every_s must be at least {self.min_every_s} seconds on this cluster's "
                                f"nodes, not {msg.every_s}")
        spec = self._spec_of(msg.spec)  # checks the options as CreateTournament does
        options = {k: v for k, v in spec.to_dict().items()
                   if k not in ("tournament_id", "bots", "seed", "unrated_reason")}
        return Schedule.make(msg.schedule_id or f"s-{secrets.token_hex(4)}", msg.every_s, msg.at, spec.bots,
                             options, seed=msg.spec.seed, ladder=msg.ladder, max_bots=msg.max_bots)

    async def _schedule_changed(self, schedule_id: str) -> None:
        """This node's schedule loop reads the schedules again at once, the others on the notice (or
        within their rescan, if it is lost)."""
        if self.on_schedule is not None:
            self.on_schedule()
        try:
            await asyncio.to_thread(self.broker.publish_notice, SCHEDULE_NOTICE, schedule_id)
        except BrokerError as e:
            quiet.warning(("schedule notice",), "the other nodes were not told of schedule %s at once "
                          "(they read the schedules within a minute): %s", schedule_id[:80], e)

    async def ListSchedules(
        self, request: apb.ListSchedulesRequest, context: Context,
    ) -> apb.ListSchedulesResponse:
        await self.reader(context)
        listed = await self._queue(context, self._listed)
        return apb.ListSchedulesResponse(schedules=[schedule_to_proto(s, why=why) for s, why in listed])

    def _listed(self) -> list[tuple[Stored, str]]:
        """Every schedule and what to know of its bots (:meth:`Schedules.why`: a ladder's reads them)."""
        now = time.time()
        return [(s, self.schedules.why(s, now)) for s in self.schedules.stored()]

    async def CancelSchedule(
        self, request: apb.CancelScheduleRequest, context: Context,
    ) -> apb.CancelScheduleResponse:
        await self.admin(context, "cancelling a schedule")
        await self._queue(context, self.schedules.cancel, request.schedule_id)
        await self._schedule_changed(request.schedule_id)
        return apb.CancelScheduleResponse()

    # ------------------------------------------------------------ ladders
    async def StartLadder(
        self, request: apb.StartLadderRequest, context: Context,
    ) -> apb.StartLadderResponse:
        await self.admin(context, "starting a ladder")
        await self._queue(context, self.ladders.start, request.pool, request.deals or DEFAULT_DEALS, "",
                          request.version_test_elo1 or TEST_ELO1)
        self._ladder_changed()
        return apb.StartLadderResponse(ladder=await self._queue(context, self._ladder, request.pool))

    async def StopLadder(
        self, request: apb.StopLadderRequest, context: Context,
    ) -> apb.StopLadderResponse:
        await self.admin(context, "stopping a ladder")
        await self._queue(context, self.ladders.stop, request.pool)
        self._ladder_changed()
        return apb.StopLadderResponse(ladder=await self._queue(context, self._ladder, request.pool))

    async def GetLadder(
        self, request: apb.GetLadderRequest, context: Context,
    ) -> apb.GetLadderResponse:
        await self.reader(context)
        ladder = await self._queue(context, self._ladder, request.pool)
        board, pools = await self._queue(context, self._standings, request.pool, request.limit)
        return apb.GetLadderResponse(ladder=ladder, standings=leaderboard_to_proto(board, pools, self._shown))

    def _promoted_version(self, bot: str) -> str | None:
        """The version a bot plays as ("" for one that says none; None: unknown), from the registry's
        copy: what its leaderboard row rates."""
        entry = self.node.bot_named(bot)
        return None if entry is None else entry.promoted_version

    def _shown(self, bot: str) -> tuple[str, str]:
        """The version a bot plays as and how it was promoted, from the registry's copy (no I/O)."""
        entry = self.node.bot_named(bot)
        v = None if entry is None else promoted(entry.versions)
        return ("", "") if v is None else (v.version, v.how)

    async def ListLadders(
        self, request: apb.ListLaddersRequest, context: Context,
    ) -> apb.ListLaddersResponse:
        await self.reader(context)
        return apb.ListLaddersResponse(ladders=await self._queue(context, self._all_ladders))

    async def AddLadderBot(
        self, request: apb.AddLadderBotRequest, context: Context,
    ) -> apb.AddLadderBotResponse:
        await self.admin(context, "opting bots in to a ladder")
        await self._queue(context, check_pool, request.pool)  # before the bots: the first thing wrong
        bots = await self._ladder_bots(context, request.bots)
        unknown, revoked = [], []
        for name, entry in zip(bots, await self.node.find_bots(bots), strict=True):
            if entry is None:
                unknown.append(name)
            elif entry.revoked:
                revoked.append(name)
        if unknown:  # none added: a typo does not leave the others half done
            await abort(context, NotFound(f"no bot named {', '.join(unknown)}: register it first"))
        if revoked:
            await abort(context, InvalidArgument(f"bot {', '.join(revoked)} is revoked"))
        added = await self._queue(context, self._each, self.ladders.add, request.pool, bots)
        return apb.AddLadderBotResponse(added=added,
                                        ladder=await self._queue(context, self._ladder, request.pool))

    async def RemoveLadderBot(
        self, request: apb.RemoveLadderBotRequest, context: Context,
    ) -> apb.RemoveLadderBotResponse:
        await self.admin(context, "taking bots out of a ladder")
        await self._queue(context, check_pool, request.pool)
        bots = await self._ladder_bots(context, request.bots)  # unknown or revoked: taken out all the same
        removed = await self._queue(context, self._each, self.ladders.remove, request.pool, bots)
        return apb.RemoveLadderBotResponse(removed=removed,
                                           ladder=await self._queue(context, self._ladder, request.pool))

    async def _ladder_bots(self, context: Context, names: Sequence[str]) -> list[str]:
        """The names of a request, each once, each a valid bot name; at least one, at most a
        tournament's bots (each costs a broker write and a notice: a call is bounded)."""
        if not names:
            await abort(context, InvalidArgument("name at least one bot"))
        if len(names) > MAX_LADDER_BOTS_A_CALL:
            await abort(context, InvalidArgument(
                f"at most {MAX_LADDER_BOTS_A_CALL} bots a call, not {len(names)}"))
        bad = next((n for n in names if not valid_bot_name(n)), None)
        if bad is not None:
            await abort(context, InvalidArgument(f"bad bot name {bad[:80]!r}: {BOT_NAME_RULE}"))
        return list(dict.fromkeys(names))

    def _each(self, change: Callable[[str, str], bool], pool: str, bots: list[str]) -> list[str]:
        """``change(pool, bot)`` for each bot (blocking: from a thread); those it changed. This node's
        ladder loop looks again at once if any."""
        changed = [bot for bot in bots if change(pool, bot)]
        if changed:
            self._ladder_changed()
        return changed

    def _ladder_changed(self) -> None:
        """This node's ladder loop looks again at once; the others were told by the ladder's notice,
        which :class:`Ladders` published with the change (else they look within a minute)."""
        if self.on_ladder is not None:
            self.on_ladder()

    def _ladder(self, pool: str) -> apb.Ladder:
        """A pool's ladder as the RPCs give it: six reads at most (blocking: from a thread)."""
        return ladder_to_proto(self.ladders.view(pool, counts=self.rankings.pair_counts))

    def _all_ladders(self) -> list[apb.Ladder]:
        """Every preset pool with a ladder stored or bots opted in (a read per preset: a fixed few)."""
        return [ladder_to_proto(v, picks=False) for v in self.ladders.views()]

    def _standings(self, pool: str, limit: int) -> tuple[Leaderboard, list[str]]:
        """The pool's leaderboard page (empty before its first rated game) and every pool."""
        return ladder_standings(self.rankings, pool, 0, limit), self.rankings.pools()

    async def AuditTournament(
        self, request: apb.AuditTournamentRequest, context: Context,
    ) -> apb.AuditTournamentResponse:
        await self.admin(context, "auditing a tournament")
        max_deals = request.max_deals or DEFAULT_MAX_DEALS
        margin = request.clock_margin_ms if request.HasField("clock_margin_ms") else DEFAULT_MARGIN_MS
        if max_deals > MAX_DEALS or margin > MAX_MARGIN_MS:
            await abort(context, InvalidArgument(
                f"max_deals is 1 to {MAX_DEALS} (0: {DEFAULT_MAX_DEALS}) and clock_margin_ms 0 to "
                f"{MAX_MARGIN_MS}, not {request.max_deals} and {margin}"))
        if self._auditing.locked():
            await abort(context, ResourceExhausted(
                "an audit is running on this node: ask again once it is over"))
        async with self._auditing:
            try:
                done = await self._queue(context, self._audit, request.tournament_id, max_deals, margin)
            except AuditFailed as e:
                quiet.warning(("audit",), "audit of %s: %s", request.tournament_id, e)
                await context.abort(grpc.StatusCode.UNAVAILABLE, f"the audit failed: {e}")
        return audit_to_proto(request.tournament_id, done)

    def _audit(self, tournament_id: str, max_deals: int, margin_ms: int) -> TournamentAudit:
        """The audit, from a worker thread (its reads), its searches in a child process."""
        if self.broker.get_tournament(tournament_id) is None:
            raise UnknownTournament(f"no tournament {tournament_id!r}")
        return audit_tournament(self.broker, tournament_id, max_deals=max_deals, margin_ms=margin_ms,
                                cache=self._audits, analyse=analyse_apart)


def audit_to_proto(tournament_id: str, done: TournamentAudit) -> apb.AuditTournamentResponse:
    report = done.report
    reply = apb.AuditTournamentResponse(
        tournament_id=tournament_id, alpha=report.alpha, min_deals=report.min_deals,
        clock_margin_ms=report.margin_ms, deals_audited=report.deals, deals_total=done.deals_total,
        decisions=report.decisions, seconds=done.seconds, unreadable=report.unreadable,
    )
    for b in report.bots:
        row = reply.bots.add(bot=b.bot, unseen=b.unseen, unseen_agree=b.unseen_agree, seen=b.seen,
                             seen_agree=b.seen_agree, ambiguous=b.ambiguous, untimed=b.untimed,
                             single=b.single, deals=b.deals, flagged=b.flagged)
        if b.difference is not None:
            row.difference = b.difference
        if b.p_value is not None:
            row.p_value = b.p_value
    return reply


def ladder_to_proto(view: LadderView, picks: bool = True) -> apb.Ladder:
    setting = view.setting
    return apb.Ladder(pool=setting.pool, on=setting.on, deals=setting.deals, bots=view.bots,
                      in_progress=view.in_progress, version_test_elo1=setting.test_elo1,
                      picks=[apb.LadderPick(bot_a=p.a, bot_b=p.b, match_id=p.match_id, at=p.at, why=p.why)
                             for p in (view.picks if picks else ())],
                      bot_states=[apb.LadderBot(
                          bot=s.bot, other_games=s.other_games, paused_until=int(s.paused_until),
                          paused_why=s.paused_why, pauses=s.pauses,
                          opponents=[apb.LadderOpponent(bot=o.bot, games=o.games, wins=o.wins, draws=o.draws,
                                                        losses=o.losses) for o in s.opponents])
                          for s in (view.states if picks else ())])


def schedule_to_proto(stored: Stored, now: float | None = None, why: str = "") -> apb.Schedule:
    """A schedule as anyone may see it: its seed left out, its next occurrence from ``now``; ``why``:
    what to know of its bots (:meth:`Schedules.why`)."""
    s = stored.schedule
    spec = s.spec_for(stored.last or s.first, fresh="-")
    msg = apb.Schedule(schedule_id=s.schedule_id, spec=spec_to_proto(spec), every_s=s.every_s, at=s.at,
                       next_at=s.next_after(time.time() if now is None else now), last_at=stored.last,
                       last_tournament_id=s.tournament_id(stored.last) if stored.last else "",
                       created_at=s.created_at, ladder=s.bots.ladder, max_bots=s.max_bots, why=why)
    msg.spec.tournament_id = ""
    if s.bots.ladder:
        del msg.spec.bots[:]  # stand-ins: the pool's opted-in bots at each occurrence
    return msg


def duplicate_mode(msg: apb.TournamentSpec) -> str:
    """The duplicate mode a request asks for: its ``duplicate_mode``, else the format's default when
    ``duplicate`` is set (an older client's), else none (sprt: always mirror)."""
    mode = msg.duplicate_mode
    if mode:
        if mode not in ("field", "mirror"):
            raise TournamentError(f"duplicate_mode must be 'field' or 'mirror', not {mode[:32]!r}")
        return mode
    if msg.duplicate:
        return default_duplicate(msg.format)
    return "mirror" if msg.format == "sprt" else ""


def recent_and_sealed(broker: Broker, tournaments: Tournaments, bot: str, own: Sequence[str],
                      ) -> tuple[list[ResultSummary], set[str]]:
    """A bot's recent matches beyond ``own`` (those the node lists of its own): its newest results in
    the queue, when ``own`` are fewer than :data:`RECENT_MATCHES`; and which of them all are sealed
    (:func:`arena.node.seals.sealed_among`). A few reads whatever their number: call it in a thread."""
    stored = broker.bot_matches(bot, RECENT_MATCHES) if len(own) < RECENT_MATCHES else []
    return stored, sealed_among(broker, tournaments, [*own, *(s.match_id for s in stored)])


def stored_summary(s: ResultSummary) -> MatchSummary:
    """A match of the queue's as the node shows its own; a duplicate leg's or table's seed left out
    (another table dealing its cards may still be in play: GetMatch shows it once all are over)."""
    return MatchSummary(
        match_id=s.match_id,
        state=MatchState.ABORTED if s.reason is ResultReason.ABORTED else MatchState.FINISHED,
        players=s.seat_bots, ruleset=s.ruleset, totals=s.totals,
        deals_played=s.deals_played, seed="" if is_duplicate_match(s.match_id) else s.seed, result=s.end)


def status_to_proto(progress: Progress, present: set[str]) -> apb.TournamentStatus:
    """A tournament's status; its secret only once it has ended and none of its matches can still be
    played (:attr:`Progress.secret_revealed`), with when and why it ended and was revealed."""
    spec = progress.spec
    over = not progress.state.is_open
    ending = progress.ending
    msg = apb.TournamentStatus(
        spec=spec_to_proto(spec), state=progress.state, matches_done=progress.matches_done,
        matches_scheduled=progress.matches_scheduled, matches_queued=progress.matches_queued,
        standings=[standing_to_proto(s, bool(spec.duplicate)) for s in progress.standings],
        commitment=commitment(spec.seed), secret=spec.seed if progress.secret_revealed else "",
        unrated_reason=spec.unrated_reason, duplicate_note=spec.duplicate_note,
        waiting_for=[] if over else [b for b in spec.bots if b not in present],
        finished_matches=progress.finished,
        ended_at=ending.ended_at, ended_reason=ending.ended_reason,
        secret_revealed_at=ending.revealed_at, secret_revealed_reason=ending.revealed_reason,
        ending=progress.ending_text,
    )
    st = progress.sprt
    if st is not None:
        msg.sprt.CopyFrom(apb.SprtStatus(
            llr=st.llr, lower=st.lower, upper=st.upper, decision=st.decision or "", pairs=st.pairs,
            pentanomial=st.pentanomial, set_aside=st.set_aside))
        if st.pairs:
            low, high = st.elo_interval
            msg.sprt.elo = st.elo
            if math.isfinite(low):
                msg.sprt.elo_low = low
            if math.isfinite(high):
                msg.sprt.elo_high = high
    return msg


def progress_with_interval(tournaments: Tournaments, tournament_id: str) -> Progress:
    """The tournament's progress, its SPRT's Elo interval worked out (a few milliseconds of
    bisection: in the caller's thread, not on the event loop)."""
    progress = tournaments.progress(tournament_id)
    if progress.sprt is not None:
        _ = progress.sprt.score_interval
    return progress


def spec_to_proto(spec: TournamentSpec) -> apb.TournamentSpec:
    """The spec as anyone may see it: its seed (the secret) left out."""
    msg = apb.TournamentSpec(
        tournament_id=spec.tournament_id, format=spec.format, bots=spec.bots,
        candidate=spec.candidate or "", ruleset=spec_to_text(spec.ruleset.to_spec()), deals=spec.deals or 0,
        target=spec.target or 0, duplicate=bool(spec.duplicate), rounds=spec.rounds or 0,
        duplicate_mode=spec.duplicate,
    )
    if spec.sprt is not None:
        o = spec.sprt
        msg.sprt.CopyFrom(apb.SprtOptions(elo0=o.elo0, elo1=o.elo1, alpha=o.alpha, beta=o.beta,
                                          batch_pairs=o.batch_pairs, max_pairs=o.max_pairs))
    return msg


def standing_to_proto(s: Standing, duplicate: bool) -> apb.Standing:
    msg = apb.Standing(
        rank=s.rank, bot=s.bot, played=s.played, wins=s.wins, draws=s.draws, losses=s.losses, byes=s.byes,
        score=s.score, points_for=s.points_for, points_against=s.points_against,
        duplicate_diff=s.duplicate_diff, diff=s.duplicate_diff if duplicate else s.point_diff,
    )
    if s.buchholz is not None:
        msg.buchholz = s.buchholz
    return msg


def version_rating_to_proto(r: VersionRating) -> apb.VersionRating:
    return apb.VersionRating(pool=r.pool, version=r.version, rating=r.rating, low=r.low, high=r.high,
                             games=r.games, inherited=r.inherited)


def leaderboard_to_proto(board: Leaderboard, pools: list[str],
                         shown: Callable[[str], tuple[str, str]] | None = None) -> apb.GetLeaderboardResponse:
    """The reply; ``shown(bot)`` gives each bot's promoted version and how it was promoted."""
    reply = apb.GetLeaderboardResponse(pool=board.pool, method=board.method, total=board.total,
                                       offset=board.offset, pools=pools)
    for e in board.entries:
        version, how = ("", "") if shown is None else shown(e.bot)
        entry = reply.entries.add(rank=e.rank, bot=e.bot, rating=e.rating, games=e.games, wins=e.wins,
                                  draws=e.draws, losses=e.losses, score=e.score, version=e.version or version,
                                  promoted_how=how, version_games=e.version_games)
        if e.low is not None and e.high is not None:
            entry.low, entry.high = e.low, e.high
        if e.los_next is not None:
            entry.los_next = e.los_next
    return reply
