"""``ArenaService``: bots, matches and spectators, each call checked by the node's access gate.

Reading is open unless the node requires a credential for reads; registering
follows the node's policy; what changes the arena (starting and cancelling
matches, invites) needs the admin credential; a bot's token may rotate itself
or revoke itself. A node alone has no tournament queue: its tournament calls
are UNIMPLEMENTED (:mod:`arena.node` gives the nodes of a queue theirs).

A refusal of access (a wrong or missing credential, a right one for the wrong
thing, an invite guess, an address throttled for guessing) is held
``Limits.refusal_hold`` before its status, as the edge's refusals are: a
guesser retrying at once makes one call a second, not hundreds. A hold is a
timer (:class:`~arena.edge.guard.Tarpit`), at most as many per address as it
may make short calls and half the node's short calls in all, so that guessers
never fill the room of honest callers; past those, the status comes at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import NoReturn

import grpc
from belote.arena.v1 import arena_service_pb2 as apb
from belote.arena.v1 import arena_service_pb2_grpc as agrpc

from arena.edge.guard import Tarpit
from arena.edge.quietlog import quiet
from arena.engine.errors import RulesetError
from arena.engine.rules import spec_from_text, spec_to_text
from arena.records import valid_bot_name
from arena.referee.access import AccessError, Caller, PermissionDenied, Role, Unauthenticated
from arena.referee.calls import EDGE_ERRORS, Context, abort, address_of, token_of
from arena.referee.convert import result_to_proto
from arena.referee.node import (
    BotStatus,
    InvalidArgument,
    Limits,
    MatchSummary,
    Node,
    NotFound,
    ResourceExhausted,
)
from arena.referee.registry import OWNER_RULE, BotEntry, PerEntry, invite_owner
from arena.referee.replays import ReplaySlot, SendTimeout, Stalled
from arena.referee.versions import Version


def summary_to_proto(summary: MatchSummary) -> apb.MatchSummary:
    msg = apb.MatchSummary(
        match_id=summary.match_id, state=summary.state, players=summary.players,
        ruleset=spec_to_text(summary.ruleset), totals=summary.totals, deals_played=summary.deals_played,
        seed=summary.seed,
    )
    if summary.result is not None:
        msg.result.CopyFrom(result_to_proto(summary.result, summary.deals_played))
    return msg


#: the key WatchMatch's messages are counted under (grpc_server_msg_sent_total): it writes them itself
WATCH_MESSAGES = ("server_stream", "belote.arena.v1.ArenaService", "WatchMatch")

#: the matches GetBot lists, newest first
RECENT_MATCHES = 20
#: a finished match's events go out this many at a time, within the node's pace for replays
PACED = 50


def bot_to_proto(b: BotStatus) -> apb.BotInfo:
    return apb.BotInfo(bot_id=b.bot_id, name=b.name, connected=b.connected, version=b.version,
                       concurrency=b.concurrency, seats_in_use=b.seats_in_use, revoked=b.revoked)


#: the most bots one ListBots answer holds (and what a request that gives no limit gets)
MAX_BOTS_PAGE = 1000


class BotInfos:
    """ListBots answers made of each bot's ``BotInfo`` serialized once.

    A bot no stream of which ever opened on this node looks as registered (not connected, no
    version, no seats) until its entry changes, so its part of the answer is kept, serialized,
    and a page is the kept parts joined and parsed in one go: about 40 times cheaper than
    building the messages. A bot seen here is built afresh.
    """

    def __init__(self, node: Node) -> None:
        self.node = node
        self._plain = PerEntry(lambda e: _part(apb.BotInfo(bot_id=e.bot_id, name=e.name, revoked=e.revoked)))

    def response(self, total: int, offset: int, page: list[BotEntry]) -> apb.ListBotsResponse:
        parts = self._plain.values(page)
        for i, status in self.node.seen_on_page(page):
            parts[i] = _part(bot_to_proto(status))
        reply = apb.ListBotsResponse.FromString(b"".join(parts))
        reply.total, reply.offset = total, offset
        return reply


def _part(info: apb.BotInfo) -> bytes:
    """``info`` as one element of ListBotsResponse.bots, serialized."""
    return apb.ListBotsResponse(bots=[info]).SerializeToString()


def access_refusals(limits: Limits) -> Tarpit:
    """Where refusals of access wait before their status: as many per address as it may make short
    calls, and half the node's short calls in all."""
    return Tarpit(limits.refusal_hold, limits.max_calls_per_peer, max(1, limits.max_calls // 2))


class ArenaServicer(agrpc.ArenaServiceServicer):
    def __init__(self, node: Node) -> None:
        self.node = node
        self.gate = node.gate
        self._bot_infos = BotInfos(node)
        self.refusals = access_refusals(node.config.limits)

    # ------------------------------------------------------------ callers
    async def refuse(self, context: Context, err: Exception) -> NoReturn:
        """End the call with ``err``'s status: a refusal of access after its hold."""
        if isinstance(err, AccessError):
            await self.refusals.hold(context)
        await abort(context, err)

    async def caller(self, context: Context) -> Caller:
        try:
            return await self.gate.identify(token_of(context), address_of(context))
        except AccessError as e:
            await self.refuse(context, e)

    async def reader(self, context: Context) -> Caller:
        who = await self.caller(context)
        try:
            self.gate.require_reader(who)
        except AccessError as e:
            await self.refuse(context, e)
        return who

    async def admin(self, context: Context, what: str) -> Caller:
        who = await self.caller(context)
        try:
            self.gate.require_admin(who, what)
        except AccessError as e:
            await self.refuse(context, e)
        return who

    # --------------------------------------------------------------- bots
    async def RegisterBot(
        self, request: apb.RegisterBotRequest, context: Context,
    ) -> apb.RegisterBotResponse:
        who = await self.caller(context)
        try:
            await self.node.check_new_bot(request.name)  # before an invite is spent on a name that cannot be
            owner = request.owner
            if owner and who.role is not Role.ADMIN:  # else a stranger could take turns from another's bots
                raise PermissionDenied("only an admin names a bot's owner (an invite made for an owner "
                                       "carries it: bot invite --owner)")
            if owner and not valid_bot_name(owner):
                raise InvalidArgument(f"bad owner {owner[:80]!r}: {OWNER_RULE}")
            await self.gate.register(who, address_of(context), request.invite)
            owner = owner or invite_owner(request.invite)
            entry, token = await self.node.register(request.name, request.ladder, owner)
        except EDGE_ERRORS as e:
            await self.refuse(context, e)
        return apb.RegisterBotResponse(bot_id=entry.bot_id, token=token)

    async def RotateBotToken(
        self, request: apb.RotateBotTokenRequest, context: Context,
    ) -> apb.RotateBotTokenResponse:
        who = await self.caller(context)
        if who.bot is None:
            why = "only a bot's own token rotates it" if who.role is Role.ADMIN else ""
            await self.refuse(context, PermissionDenied(why) if why
                              else Unauthenticated("rotating a token needs that token"))
        try:
            token = await self.node.rotate_token(who.bot)
        except EDGE_ERRORS as e:
            await abort(context, e)
        return apb.RotateBotTokenResponse(token=token)

    async def RevokeBot(
        self, request: apb.RevokeBotRequest, context: Context,
    ) -> apb.RevokeBotResponse:
        who = await self.caller(context)
        try:
            name = acted_on(who, request.name, ("name the bot to revoke", "revokes that bot only",
                                                "revoking a bot needs its token or the admin credential"))
            await self.node.revoke_bot(name)
        except EDGE_ERRORS as e:
            await self.refuse(context, e)
        return apb.RevokeBotResponse()

    async def CreateInvite(
        self, request: apb.CreateInviteRequest, context: Context,
    ) -> apb.CreateInviteResponse:
        await self.admin(context, "making an invite")
        try:
            code = await self.node.create_invite(request.owner)
        except EDGE_ERRORS as e:
            await abort(context, e)
        return apb.CreateInviteResponse(invite=code)

    async def ListBots(
        self, request: apb.ListBotsRequest, context: Context,
    ) -> apb.ListBotsResponse:
        """A page of the bots, by name: a cost that grows with the page, never with the registry."""
        await self.reader(context)
        limit = request.limit or MAX_BOTS_PAGE
        if limit > MAX_BOTS_PAGE:
            await abort(context, InvalidArgument(
                f"limit must be from 1 to {MAX_BOTS_PAGE} (0: {MAX_BOTS_PAGE}), not {limit}"))
        try:
            total, page = self.node.registry_page(request.offset, limit)
        except EDGE_ERRORS as e:
            await abort(context, e)
        return self._bot_infos.response(total, request.offset, page)

    async def GetBot(self, request: apb.GetBotRequest, context: Context) -> apb.GetBotResponse:
        """What the node knows of the bot and its latest matches here (a node alone rates no one)."""
        await self.reader(context)
        return await self.bot_reply(request.name, context)

    async def bot_reply(self, name: str, context: Context) -> apb.GetBotResponse:
        try:
            status = self.node.bot_status(name)
        except EDGE_ERRORS as e:
            await abort(context, e)
        if status is None:
            await abort(context, NotFound(f"no bot named {name[:80]!r}"))
        recent = [summary_to_proto(s) for s in reversed(self.node.summaries()) if name in s.players]
        return apb.GetBotResponse(bot=bot_to_proto(status), recent_matches=recent[:RECENT_MATCHES])

    async def GetBotVersions(
        self, request: apb.GetBotVersionsRequest, context: Context,
    ) -> apb.GetBotVersionsResponse:
        """The bot's versions (a node alone runs no tests: no test)."""
        await self.reader(context)
        entry = await self.versions_entry(request.name, context)
        return apb.GetBotVersionsResponse(bot=entry.name, promoted=entry.promoted_version,
                                          versions=versions_to_proto(entry))

    async def versions_entry(self, name: str, context: Context) -> BotEntry:
        if not name:
            await abort(context, InvalidArgument("name the bot"))
        found = (await self.node.find_bots([name]))[0] if valid_bot_name(name) else None
        if found is None:
            await abort(context, NotFound(f"no bot named {name[:80]!r}"))
        return found

    async def PromoteBotVersion(
        self, request: apb.PromoteBotVersionRequest, context: Context,
    ) -> apb.PromoteBotVersionResponse:
        who = await self.caller(context)
        try:
            name = acted_on(who, request.name, (
                "name the bot whose version to promote", "promotes a version of that bot only",
                "promoting a version needs the bot's token or the admin credential"))
            before, after = await self.node.promote_version(name, request.version)
        except EDGE_ERRORS as e:
            await self.refuse(context, e)
        await self.promoted_by_hand(before, after)
        quiet.info(("promoted", after.name, request.version), "bot %s: version %s promoted by hand",
                   after.name, request.version, extra={"event": "version_promoted", "bot": after.name})
        return apb.PromoteBotVersionResponse(versions=versions_to_proto(after))

    async def promoted_by_hand(self, before: BotEntry, after: BotEntry) -> None:
        """What else a promotion by hand ends (a node of a cluster stops the tests it made moot)."""

    async def GetLeaderboard(
        self, request: apb.GetLeaderboardRequest, context: Context,
    ) -> apb.GetLeaderboardResponse:
        await context.abort(grpc.StatusCode.UNIMPLEMENTED,
                            "this node runs alone, with no results to rate from: ask a node of a cluster")
        raise AssertionError("context.abort returns only by raising")

    async def GetBotReport(
        self, request: apb.GetBotReportRequest, context: Context,
    ) -> apb.GetBotReportResponse:
        await context.abort(grpc.StatusCode.UNIMPLEMENTED,
                            "this node runs alone, and keeps no bot's history: ask a node of a cluster")
        raise AssertionError("context.abort returns only by raising")

    # ------------------------------------------------------------ matches
    async def StartMatch(
        self, request: apb.StartMatchRequest, context: Context,
    ) -> apb.StartMatchResponse:
        await self.admin(context, "starting a match")
        try:
            ruleset = spec_from_text(request.ruleset or "classic")
        except RulesetError as e:
            await abort(context, InvalidArgument(str(e)))
        await self.node.know_bots([request.team0_bot, request.team1_bot, *request.seat_bots])
        try:
            match_id = self.node.start_match(
                request.team0_bot, request.team1_bot, ruleset, seed=request.seed or None,
                target=request.target or None, deals=request.deals or None,
                seats=list(request.seat_bots) or None,
            )
        except EDGE_ERRORS as e:
            await abort(context, e)
        return apb.StartMatchResponse(match_id=match_id)

    async def CancelMatch(
        self, request: apb.CancelMatchRequest, context: Context,
    ) -> apb.CancelMatchResponse:
        await self.admin(context, "cancelling a match")
        if not self.node.cancel_match(request.match_id):
            await abort(context, NotFound(f"no running match {request.match_id!r} on this node"))
        return apb.CancelMatchResponse()

    async def ListMatches(
        self, request: apb.ListMatchesRequest, context: Context,
    ) -> apb.ListMatchesResponse:
        await self.reader(context)
        return apb.ListMatchesResponse(matches=[summary_to_proto(s) for s in self.node.summaries()])

    async def GetMatch(
        self, request: apb.GetMatchRequest, context: Context,
    ) -> apb.GetMatchResponse:
        await self.reader(context)
        try:
            summary = self.node.summary(request.match_id, stored=False)  # running, or among the latest
        except NotFound:
            async with self._replaying(context) as _:  # an older one's is in its record
                try:
                    summary = await self.node.finished_summary(request.match_id)
                except EDGE_ERRORS as e:
                    await abort(context, e)
        return apb.GetMatchResponse(match=summary_to_proto(summary))

    async def GetMatchRecord(
        self, request: apb.GetMatchRecordRequest, context: Context,
    ) -> apb.GetMatchRecordResponse:
        await self.reader(context)
        async with self._replaying(context) as slot:
            try:
                record_json = await self.node.finished_record(request.match_id)
            except EDGE_ERRORS as e:
                await abort(context, e)
            await slot.send(len(record_json))  # within the node's pace for replays, as the web's
        return apb.GetMatchRecordResponse(record_json=record_json)

    @contextlib.asynccontextmanager
    async def _replaying(self, context: Context) -> AsyncIterator[ReplaySlot]:
        """A place among the replays running at once for the caller's address, for the block;
        RESOURCE_EXHAUSTED if there is none."""
        try:
            slot = await self.node.replay_slot(address_of(context))
        except EDGE_ERRORS as e:
            await abort(context, e)
        with slot:
            yield slot

    async def WatchMatch(  # type: ignore[override]  # writes through its context
        self, request: apb.WatchMatchRequest, context: Context,
    ) -> None:
        """A running match's events as they are played; a finished match's all at once, from its
        replay (:meth:`Node.replay`), read by a bounded number of callers at once."""
        await self.reader(context)
        await self.send_watch(request.match_id, context)

    async def send_watch(self, match_id: str, context: Context) -> None:
        """Write the match's messages to its watcher, each within the node's send timeout: a watcher
        that takes nothing for so long is cut (RESOURCE_EXHAUSTED), and its replay's place is free
        again at once.

        Written through the context, not yielded: a generator's messages are
        sent by grpc, whose sends cannot be given up. Its status, though, is
        queued behind the message the watcher does not take, so grpc holds the
        call until the watcher reads again or leaves (no server API resets one
        stream); until then the call counts among its address's spectators,
        whose bound is the address's own, and nothing of the replay is kept.
        """
        replies = (self._live(match_id, context) if self.node.is_running(match_id)
                   else self._replay(match_id, context))
        sent = self.node.metrics.rpc.sent
        async with contextlib.aclosing(replies):  # its place goes back, whichever way the call ends
            with SendTimeout(self.node.config.limits.send_timeout) as timeout:
                try:
                    async for reply in replies:
                        await timeout.send(context.write(reply))
                        sent[WATCH_MESSAGES] = sent.get(WATCH_MESSAGES, 0) + 1
                except Stalled as e:
                    stalled = e
                else:
                    return
        quiet.info("stalled watcher", "cut a watcher from %s: %s", context.peer(), stalled)
        await abort(context, ResourceExhausted(f"cut: {stalled}"))

    async def _live(self, match_id: str, context: Context) -> AsyncGenerator[apb.WatchMatchResponse, None]:
        """A running match's events so far, then each as it is played, then its result."""
        try:
            history, q = self.node.watch(match_id)
        except EDGE_ERRORS as e:
            await abort(context, e)
        for ev in history:
            yield apb.WatchMatchResponse(event=ev)
        try:
            while True:
                event = await q.get()
                if event is None:
                    break
                yield apb.WatchMatchResponse(event=event)
        finally:
            self.node.unwatch(match_id, q)
        try:
            summary = self.node.summary(match_id)
        except NotFound:
            return  # aborted, and forgotten since
        if summary.result is not None:
            yield apb.WatchMatchResponse(result=result_to_proto(summary.result, summary.deals_played))

    async def _replay(self, match_id: str, context: Context) -> AsyncGenerator[apb.WatchMatchResponse, None]:
        """A finished match's prepared events: each message only parsed from its bytes, the stream
        waiting for the watcher between them."""
        async with self._replaying(context) as slot:
            try:
                replay = await self.node.replay(match_id)
            except EDGE_ERRORS as e:
                await abort(context, e)
            for n, data in enumerate(replay.events):
                if n % PACED == 0:  # the node's replays share a pace: their share of the loop
                    await slot.send_messages(PACED)
                reply = apb.WatchMatchResponse()
                reply.event.ParseFromString(data)
                yield reply
            if replay.result:
                reply = apb.WatchMatchResponse()
                reply.result.ParseFromString(replay.result)
                yield reply

    # -------------------------------------------------------- tournaments
    async def _no_queue(self, context: Context) -> NoReturn:
        await context.abort(grpc.StatusCode.UNIMPLEMENTED,
                            "this node runs alone, with no tournament queue: ask a node of a cluster")
        raise AssertionError("context.abort returns only by raising")

    async def CreateTournament(
        self, request: apb.CreateTournamentRequest, context: Context,
    ) -> apb.CreateTournamentResponse:
        await self._no_queue(context)

    async def GetTournament(
        self, request: apb.GetTournamentRequest, context: Context,
    ) -> apb.GetTournamentResponse:
        await self._no_queue(context)

    async def ListTournaments(
        self, request: apb.ListTournamentsRequest, context: Context,
    ) -> apb.ListTournamentsResponse:
        await self._no_queue(context)

    async def CancelTournament(
        self, request: apb.CancelTournamentRequest, context: Context,
    ) -> apb.CancelTournamentResponse:
        await self._no_queue(context)

    async def ResumeTournament(
        self, request: apb.ResumeTournamentRequest, context: Context,
    ) -> apb.ResumeTournamentResponse:
        await self._no_queue(context)

    async def AuditTournament(
        self, request: apb.AuditTournamentRequest, context: Context,
    ) -> apb.AuditTournamentResponse:
        await self._no_queue(context)

    async def CreateSchedule(
        self, request: apb.CreateScheduleRequest, context: Context,
    ) -> apb.CreateScheduleResponse:
        await self._no_queue(context)

    async def ListSchedules(
        self, request: apb.ListSchedulesRequest, context: Context,
    ) -> apb.ListSchedulesResponse:
        await self._no_queue(context)

    async def CancelSchedule(
        self, request: apb.CancelScheduleRequest, context: Context,
    ) -> apb.CancelScheduleResponse:
        await self._no_queue(context)

    async def StartLadder(
        self, request: apb.StartLadderRequest, context: Context,
    ) -> apb.StartLadderResponse:
        await self._no_queue(context)

    async def StopLadder(
        self, request: apb.StopLadderRequest, context: Context,
    ) -> apb.StopLadderResponse:
        await self._no_queue(context)

    async def GetLadder(
        self, request: apb.GetLadderRequest, context: Context,
    ) -> apb.GetLadderResponse:
        await self._no_queue(context)

    async def ListLadders(
        self, request: apb.ListLaddersRequest, context: Context,
    ) -> apb.ListLaddersResponse:
        await self._no_queue(context)

    async def AddLadderBot(
        self, request: apb.AddLadderBotRequest, context: Context,
    ) -> apb.AddLadderBotResponse:
        await self._no_queue(context)

    async def RemoveLadderBot(
        self, request: apb.RemoveLadderBotRequest, context: Context,
    ) -> apb.RemoveLadderBotResponse:
        await self._no_queue(context)


def version_to_proto(v: Version, waiting: str = "") -> apb.BotVersion:
    out = apb.BotVersion(version=v.version, state=v.state, how=v.how, first_seen=v.first_seen,
                         last_seen=v.last_seen, games=v.games, test_id=v.test, against=v.against,
                         decision=v.decision, llr=v.llr, pairs=v.pairs, set_aside=v.set_aside,
                         waiting=waiting)
    if v.elo is not None:
        out.elo = v.elo
        if v.elo_low is not None:
            out.elo_low = v.elo_low
        if v.elo_high is not None:
            out.elo_high = v.elo_high
    return out


def versions_to_proto(entry: BotEntry, waiting: Mapping[str, str] | None = None) -> list[apb.BotVersion]:
    """A bot's versions, newest first, each candidate with why it waits (``waiting``: version -> why)."""
    why = waiting or {}
    return [version_to_proto(v, why.get(v.version, ""))
            for v in sorted(entry.versions, key=lambda v: (v.first_seen, v.version), reverse=True)]


def acted_on(who: Caller, name: str, says: tuple[str, str, str]) -> str:
    """The bot a call on one bot acts on: the one an admin names, or the caller's own (a bot's token
    acts on that bot only). ``says``: what to say when an admin names none, what a bot's token does to
    its bot only, and what the call needs."""
    if who.role is Role.ADMIN:
        if not name:
            raise InvalidArgument(says[0])
        return name
    if who.bot is not None:
        if name and name != who.bot.name:
            raise PermissionDenied(f"a bot's token {says[1]}")
        return who.bot.name
    raise Unauthenticated(says[2])
