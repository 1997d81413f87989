"""Attacks on secrets, roles, the queue, duplicate play and cancels (issues 8, 16), rerun on a real node.

Usage (from the repository root)::

    python bench/attacks.py [--quick] [--deals D] [--flood N] [--duplicate-deals D] [--cancel-deals D]
                            [--only NAME,...] [--json]

``--quick`` is ``--deals 6 --flood 40 --duplicate-deals 4 --cancel-deals 200``, what
``tests/test_attacks_bench.py`` runs (options given with it win).

A real node of a queue (``running_node`` on an embedded queue in a temporary
folder, the default policy: registration by an admin, public reads) in this
process, two SDK bots connected over real gRPC, and a stranger: a client with
no credential, or with a bot's token. Each attack prints what the stranger
got; the issue's figures, measured before the fix, are beside them.

* ``seeds``: the admin starts a match of ``--deals`` (20) deals. While it
  runs the stranger reads ``GetMatch`` and ``ListMatches`` as fast as it
  can and tries to predict every deal's hands from any seed a running match
  showed (before: 20 of 20 predicted). Once the match is over the seed is public, and the same
  predictor, given it, must get every deal: the predictor works.
* ``roles``: ``--flood`` (1,000) ``RegisterBot`` calls without a credential (20 in flight),
  ``StartMatch``, ``CreateTournament`` and ``CancelTournament`` without one,
  and with a bot's token (before: 1,000 bots registered in 3.7 s, matches
  started by anyone); then ``--flood`` calls on a node whose policy is
  ``open`` (anyone may register, five per address and minute).
* ``queue``: a tournament naming an unregistered bot (before: accepted, its
  jobs cycling through the queue at 31 releases a second); then a tournament
  of two registered bots connected to no node, followed by one of two
  connected bots (before: the second made no progress for 117 s). Prints
  what ``GetTournament`` names as awaited and how long the second took.
* ``duplicate`` (issue 16): four bots that remember every hand they are shown
  play a duplicate round-robin of ``--duplicate-deals`` (8) coinche deals a
  match, once in each mode (a node of its own each). A bot holds both seats of
  its team, so it sees two hands a deal; at each decision it looks for a deal it
  was shown earlier, in another match, whose two hands complete its own team's
  two hands to the 32 cards: those are its opponents' hands. Prints, for
  ``mirror`` (both legs seen by both bots) and ``field`` (the default of
  ``--duplicate``), the decisions at which the opponents' hands were known
  (``known_opponent_hands_decisions``) of all decisions, and in how many deals
  the remembered hands were exactly the record's (before: mirror was the only
  duplicate play, 391 of 574 decisions, exact in 64 of 64 deals; now a mirror
  tournament plays each pair's legs one after the other, so they are known in
  every deal of the second legs, half the deals). A node
  without the mode field plays ``duplicate`` as it understands it for both.

* ``cancel``: a rated warm-up tournament of two bots is played, then a round-robin of 8 matches of
  ``--cancel-deals`` (400) deals each; once all 8 run, the admin cancels it. A stranger reads
  ``GetTournament`` as fast as it can until none of its matches can still be played (none queued
  or claimed), noting each read that showed the secret while one could. Then it predicts every
  deal of the records written from that secret, and compares the bots' games in the pools before
  the cancel and after (before the fix: the secret showed at once, the 8 matches played about 370
  more deals each, 400 of 400 decks predicted, and all 8 were rated, games going from 12 to 16 a
  bot).


Nothing passes or fails here: the figures are printed, one ``name=value`` line
each at the end. The tests that hold these lines are marked ``security``
(tests/referee/test_access.py, tests/node/test_tournament_trust.py,
tests/node/test_cancel.py, tests/test_attacks_bench.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "sdk")]  # run from a checkout

import grpc  # noqa: E402
import grpc.aio  # noqa: E402
from belote.arena.v1 import arena_service_pb2 as apb  # noqa: E402
from belote.arena.v1 import arena_service_pb2_grpc as agrpc  # noqa: E402
from belote_bot import Bot, Observation, RandomBot, run_async  # noqa: E402

from arena.engine import Ruleset  # noqa: E402
from arena.engine.cards import mask_of, parse_cards  # noqa: E402
from arena.engine.dealing import deal_from_rng, deal_rng, derive_seed  # noqa: E402
from arena.engine.record import deal_record  # noqa: E402
from arena.node.run import NodeSettings, RunningNode, running_node  # noqa: E402
from arena.queue import EmbeddedBroker  # noqa: E402
from arena.records import MatchRecord  # noqa: E402
from arena.referee.access import AccessPolicy, Registration  # noqa: E402
from arena.referee.limits import Limits  # noqa: E402
from arena.referee.registry import digest, new_token  # noqa: E402
from arena.tournament.tournament import seed_label  # noqa: E402

ADMIN = new_token("adm")


@contextlib.asynccontextmanager
async def a_node(folder: Path, registration: Registration = Registration.ADMIN,
                 capacity: int = 4) -> AsyncIterator[RunningNode]:
    broker = EmbeddedBroker(folder / "queue.sqlite3")
    settings = NodeSettings(poll_s=0.05, heartbeat_s=0.2, lease_s=10.0, drain_s=1.0, capacity=capacity,
                            access=AccessPolicy(admin_sha256=digest(ADMIN), registration=registration))
    try:
        async with running_node(broker, settings, asyncio.Event()) as running:
            yield running
    finally:
        broker.close()


class Patient:
    """An ArenaService stub whose unary calls, refused for their address's reads a second (a stranger
    reading flat out, as these attacks do), ask again: the attacks need the answers, not the pace.
    The node held the refusal (a second by default): the address has reads again by then."""

    def __init__(self, plain: Any) -> None:
        self.plain = plain
        self.refused = 0

    def __getattr__(self, name: str) -> Any:
        call = getattr(self.plain, name)

        async def patient(request: Any) -> Any:
            while True:
                try:
                    return await call(request)
                except grpc.aio.AioRpcError as e:
                    if e.code() != grpc.StatusCode.RESOURCE_EXHAUSTED or "reads more than" not in (
                            e.details() or ""):
                        raise
                    self.refused += 1

        return patient


@contextlib.asynccontextmanager
async def stub(address: str, token: str = "") -> AsyncIterator[Any]:
    async with grpc.aio.insecure_channel(address) as channel:
        plain = agrpc.ArenaServiceStub(channel)
        if not token:
            yield Patient(plain)
            return

        class WithToken:
            def __getattr__(self, name: str) -> Any:
                call = getattr(plain, name)
                return lambda request: call(request, metadata=(("authorization", f"Bearer {token}"),))

        yield WithToken()


async def status_of(call: Any) -> str:
    try:
        await call
    except grpc.aio.AioRpcError as e:
        return str(e.code().name)
    return "OK"


async def until(check: Any, timeout: float) -> float:
    start = time.perf_counter()
    while not await check():
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"not done within {timeout} s")
        await asyncio.sleep(0.05)
    return time.perf_counter() - start


def predicted(record: MatchRecord, seed: str) -> int:
    """How many of the record's deals the seed ``seed`` predicts, hand for hand."""
    if not seed:
        return 0
    rules = Ruleset.from_spec(record.ruleset)
    hits = 0
    for index, deal in enumerate(record.deals):
        guess = deal_record(deal_from_rng(rules, deal["dealer"], deal_rng(seed, index)), with_ruleset=False)
        hits += guess["hands"] == deal["hands"]
    return hits


def connect(running: RunningNode, name: str, stop: asyncio.Event, seed: int,
            seats: int = 8) -> asyncio.Task[None]:
    _, token = running.node.register_bot(name)
    return asyncio.create_task(run_async(RandomBot(seed), running.address, token, seats, stop=stop,
                                         all_nodes=False, verbose=False))


async def attack_seeds(folder: Path, deals: int) -> dict[str, Any]:
    stop = asyncio.Event()
    async with a_node(folder) as running:
        bots = [connect(running, name, stop, i) for i, name in enumerate(("north", "east"))]
        await until(lambda: _connected(running, 2), 10)
        async with stub(running.address, ADMIN) as admin:
            match_id = (await admin.StartMatch(apb.StartMatchRequest(
                team0_bot="north", team1_bot="east", ruleset="coinche", deals=deals))).match_id
        seen: set[str] = set()
        reads = 0
        async with stub(running.address) as stranger:
            while running.node.is_running(match_id):
                got = await stranger.GetMatch(apb.GetMatchRequest(match_id=match_id))
                listed = await stranger.ListMatches(apb.ListMatchesRequest())
                # a seed is public once its match is over: only what a running match shows counts
                seen.update(m.seed for m in (got.match, *listed.matches) if m.state == "running")
                reads += 2
                await asyncio.sleep(0.01)
            record = await running.node.wait(match_id)
            after = (await stranger.GetMatch(apb.GetMatchRequest(match_id=match_id))).match.seed
        stop.set()
        await asyncio.gather(*bots, return_exceptions=True)
    seeds = sorted(s for s in seen if s)
    return {"reads_while_running": reads, "seeds_seen_while_running": len(seeds),
            "deals_predicted_while_running": max((predicted(record, s) for s in seeds), default=0),
            "deals": len(record.deals),
            "deals_predicted_from_the_revealed_seed": predicted(record, after)}


async def _connected(running: RunningNode, n: int) -> bool:
    return sum(b.connected for b in running.node.bots()) >= n


#: RegisterBot calls the roles attack keeps in flight: a flooder does not wait for each answer, and
#: one at a time, each refusal held a second by the node's tarpit, 40 calls took 40 s (1,000 took
#: 17 minutes). Fewer than the calls one address may have in progress (32), so that the bound on
#: those never answers before the gate does: every refusal is still the gate's, held by the tarpit
FLOOD_AT_ONCE = 20
assert Limits().max_calls_per_peer > FLOOD_AT_ONCE


async def register_flood(stranger: Any, prefix: str, flood: int) -> Counter[str]:
    """The statuses of ``flood`` RegisterBot calls (names ``<prefix><i>``), :data:`FLOOD_AT_ONCE` at once."""
    room = asyncio.Semaphore(FLOOD_AT_ONCE)

    async def one(i: int) -> str:
        async with room:
            return await status_of(stranger.RegisterBot(apb.RegisterBotRequest(name=f"{prefix}{i}")))

    return Counter(await asyncio.gather(*(one(i) for i in range(flood))))


async def attack_roles(folder: Path, flood: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with a_node(folder / "admin") as running:
        _, bot_token = running.node.register_bot("someone")
        async with stub(running.address) as stranger, stub(running.address, bot_token) as as_bot:
            start = time.perf_counter()
            statuses = await register_flood(stranger, "x", flood)
            out["register_flood_s"] = round(time.perf_counter() - start, 2)
            out["register_flood_statuses"] = dict(statuses)
            out["bots_registered_by_the_flood"] = len(running.node.bots()) - 1
            spec = apb.TournamentSpec(format="round-robin", bots=["someone", "other"], deals=1)
            calls: dict[str, Any] = {}  # all at once: each refusal is held a second
            for who, client in (("anonymous", stranger), ("bot_token", as_bot)):
                calls[f"start_match_{who}"] = status_of(client.StartMatch(apb.StartMatchRequest(
                    team0_bot="someone", team1_bot="someone", ruleset="coinche")))
                calls[f"create_tournament_{who}"] = status_of(
                    client.CreateTournament(apb.CreateTournamentRequest(spec=spec)))
                calls[f"cancel_tournament_{who}"] = status_of(
                    client.CancelTournament(apb.CancelTournamentRequest(tournament_id="t")))
            out.update(zip(calls, await asyncio.gather(*calls.values()), strict=True))
    async with a_node(folder / "open", Registration.OPEN) as running, stub(running.address) as stranger:
        start = time.perf_counter()
        statuses = await register_flood(stranger, "y", flood)
        out["open_register_flood_s"] = round(time.perf_counter() - start, 2)
        out["open_register_flood_statuses"] = dict(statuses)
    return out


async def attack_queue(folder: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    stop = asyncio.Event()
    async with a_node(folder) as running:
        for name in ("absent1", "absent2"):
            running.node.register_bot(name)  # registered, connected to no node
        bots = [connect(running, name, stop, i) for i, name in enumerate(("here1", "here2"))]
        await until(lambda: _connected(running, 2), 10)
        async with stub(running.address, ADMIN) as admin:
            try:
                await admin.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(
                    tournament_id="ghosts", format="round-robin", bots=["here1", "ghost"], deals=1)))
                out["unknown_bot_tournament"] = "OK (accepted)"
            except grpc.aio.AioRpcError as e:
                out["unknown_bot_tournament"] = f"{e.code().name}: {e.details()}"
            await admin.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(
                tournament_id="away", format="round-robin", bots=["absent1", "absent2"], deals=1, rounds=20)))
            await admin.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(
                tournament_id="here", format="round-robin", bots=["here1", "here2"], deals=1, rounds=3)))

            async def done() -> bool:
                got = await admin.GetTournament(apb.GetTournamentRequest(tournament_id="here"))
                return bool(got.tournament.state == "finished")

            out["second_tournament_finished_in_s"] = round(await until(done, 120), 2)
            away = (await admin.GetTournament(apb.GetTournamentRequest(tournament_id="away"))).tournament
            out["first_tournament_waiting_for"] = sorted(away.waiting_for)
            out["first_tournament_matches_queued"] = away.matches_queued
        stop.set()
        await asyncio.gather(*bots, return_exceptions=True)
    return out


ALL_CARDS = (1 << 32) - 1


class RememberingBot(Bot):
    """Plays a random legal action, and remembers every hand it is shown (the duplicate attack).

    A deal is known by its match and index; the bot keeps the hand each of its seats was dealt (in
    coinche, its hand at its first decision of the deal). At a decision where it knows both of its
    team's hands, it looks for a deal of another match where it was shown two hands that, with
    these, make the 32 cards: they are the opponents' hands, exactly (``claims`` keeps them, to be
    checked against the records)."""

    act_inline = True

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.shown: dict[tuple[str, int], dict[int, int]] = {}
        self.decisions = 0
        self.known = 0
        #: (match, deal, seat) -> the opponents' cards the bot knew
        self.claims: dict[tuple[str, int, int], int] = {}

    def act(self, obs: Observation) -> Any:
        self.decisions += 1
        key = (obs.match_id, obs.deal_index)
        team = self.shown.setdefault(key, {})
        team.setdefault(obs.seat, obs.hand_mask)
        if obs.partner in team:
            mine = team[obs.seat] | team[obs.partner]
            for (match_id, _), seen in self.shown.items():
                if match_id != obs.match_id and len(seen) == 2:
                    theirs = sum(seen.values())
                    if theirs & mine == 0 and theirs | mine == ALL_CARDS:
                        self.known += 1
                        self.claims[(obs.match_id, obs.deal_index, obs.seat)] = theirs
                        break
        return self.rng.choice(obs.legal_actions)


async def attack_duplicate(folder: Path, deals: int) -> dict[str, Any]:
    """The remembering bots in a mirror and a field duplicate round-robin of four (see the doc)."""
    out: dict[str, Any] = {}
    names = ("ann", "bob", "cat", "dan")
    modes = "duplicate_mode" in apb.TournamentSpec.DESCRIPTOR.fields_by_name
    for mode in ("mirror", "field"):
        (folder / mode).mkdir()
        stop = asyncio.Event()
        bots = {name: RememberingBot(i) for i, name in enumerate(names)}
        async with a_node(folder / mode) as running:
            tasks = []
            for name, bot in bots.items():
                _, token = running.node.register_bot(name)
                tasks.append(asyncio.create_task(run_async(bot, running.address, token, 8, stop=stop,
                                                           all_nodes=False, verbose=False)))
            await until(lambda: _connected(running, len(names)), 10)
            spec = apb.TournamentSpec(tournament_id=f"dup-{mode}", format="round-robin", bots=list(names),
                                      ruleset="coinche", deals=deals, duplicate=True)
            if modes:
                spec.duplicate_mode = mode
            async with stub(running.address, ADMIN) as admin:
                made = await admin.CreateTournament(apb.CreateTournamentRequest(spec=spec))

                async def done(tid: str = made.tournament_id) -> bool:
                    got = await admin.GetTournament(apb.GetTournamentRequest(tournament_id=tid))
                    return bool(got.tournament.state == "finished")

                await until(done, 600)
            results = {r.match_id: r.record for r in running.worker.broker.results(made.tournament_id)}
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
        exact = wrong = 0
        deals_known = set()
        for bot in bots.values():
            for (match_id, deal, seat), theirs in bot.claims.items():
                hands = results[match_id].deals[deal]["hands"]
                real = mask_of([*parse_cards(hands[(seat + 1) % 4]), *parse_cards(hands[(seat + 3) % 4])])
                exact += real == theirs
                wrong += real != theirs
                deals_known.add((match_id, deal))
        out[mode] = {
            "asked_for": mode if modes else "duplicate (the node has no modes)",
            "matches": len(results), "deals": sum(len(r.deals) for r in results.values()),
            "decisions": sum(b.decisions for b in bots.values()),
            "known_opponent_hands_decisions": sum(b.known for b in bots.values()),
            "deals_with_known_opponent_hands": len(deals_known),
            "claims_exact": exact, "claims_wrong": wrong,
            "duplicate_note": getattr(made, "duplicate_note", ""),
        }
    return out


ATTACKS = ("seeds", "roles", "queue", "duplicate", "cancel")




async def games_per_bot(stranger: Any, pool: str) -> dict[str, int]:
    """The bots' games in ``pool``, as anyone reads them ({} while the pool has none)."""
    try:
        board = await stranger.GetLeaderboard(apb.GetLeaderboardRequest(pool=pool, limit=200))
    except grpc.aio.AioRpcError:
        return {}
    return {e.bot: e.games for e in board.entries}


async def attack_cancel(folder: Path, deals: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    stop = asyncio.Event()
    async with a_node(folder, capacity=8) as running:
        broker = running.worker.broker
        bots = [connect(running, name, stop, i, seats=16) for i, name in enumerate(("north", "east"))]
        await until(lambda: _connected(running, 2), 10)
        async with stub(running.address, ADMIN) as admin, stub(running.address) as stranger:
            async def over(tid: str) -> bool:
                got = await stranger.GetTournament(apb.GetTournamentRequest(tournament_id=tid))
                return bool(got.tournament.state == "finished")

            await admin.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(
                tournament_id="warm-up", format="round-robin", bots=["north", "east"], ruleset="coinche",
                deals=1, rounds=3)))
            await until(lambda: over("warm-up"), 60)
            await admin.CreateTournament(apb.CreateTournamentRequest(spec=apb.TournamentSpec(
                tournament_id="cancelled", format="round-robin", bots=["north", "east"], ruleset="coinche",
                deals=deals, rounds=4)))

            async def all_running() -> bool:
                return sum(m.startswith("cancelled-") for m in running.worker.running) == 8

            await until(all_running, 30)
            await asyncio.sleep(1.0)  # some deals into each
            out["matches_running_at_cancel"] = sum(m.startswith("cancelled-") for m in running.worker.running)
            seen: dict[str, Any] = {"reads": 0, "shown": 0, "secret": "", "shown_at": None,
                                    "out_of_play_at": None, "finished": []}

            async def read_until_over() -> None:
                """GetTournament as fast as the stranger can, until none of its matches can be played
                and the secret is out (or ten minutes)."""
                start = time.perf_counter()
                while time.perf_counter() - start < 600:
                    reply = await stranger.GetTournament(apb.GetTournamentRequest(tournament_id="cancelled"))
                    got = reply.tournament
                    in_play = await asyncio.to_thread(broker.pending_count, "cancelled")
                    if got.secret and seen["shown_at"] is None:
                        seen["shown_at"] = time.perf_counter()
                    if in_play:  # a match of it could still be played when the read came back
                        seen["reads"] += 1
                        if got.secret:
                            seen["shown"] += 1
                            seen["secret"] = got.secret
                    else:
                        seen["out_of_play_at"] = seen["out_of_play_at"] or time.perf_counter()
                        if got.secret:
                            seen["finished"] = list(got.finished_matches)
                            return
                    await asyncio.sleep(0.01)

            reader = asyncio.create_task(read_until_over())
            await asyncio.sleep(0.5)
            before = await games_per_bot(stranger, "coinche")
            await admin.CancelTournament(apb.CancelTournamentRequest(tournament_id="cancelled"))
            cancelled = time.perf_counter()
            await reader
            for key, at in (("in_play_for_s_after_the_cancel", seen["out_of_play_at"]),
                            ("secret_shown_s_after_the_cancel", seen["shown_at"])):
                out[key] = None if at is None else round(at - cancelled, 2)
            out["reads_while_in_play"] = seen["reads"]
            out["reads_showing_the_secret_while_in_play"] = seen["shown"]
            secret, finished = seen["secret"], seen["finished"]
            records = [MatchRecord.from_dict(json.loads((await stranger.GetMatchRecord(
                apb.GetMatchRecordRequest(match_id=m))).record_json)) for m in finished]
            out["results_written_after_the_cancel"] = len(records)
            out["deals_played_in_them"] = sum(len(r.deals) for r in records)
            out["deals_predicted_from_a_secret_shown_while_in_play"] = sum(
                predicted(r, derive_seed(secret, seed_label("cancelled", r.match_id))) if secret else 0
                for r in records)
            after = await games_per_bot(stranger, "coinche")
            out["games_per_bot_before_the_cancel"] = before
            out["games_per_bot_after_the_cancel"] = after
        stop.set()
        await asyncio.gather(*bots, return_exceptions=True)
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    only = [a.strip() for a in args.only.split(",") if a.strip()] if args.only else list(ATTACKS)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="belote-attacks-") as tmp:
        folder = Path(tmp)
        for attack in only:
            (folder / attack).mkdir()
        if "seeds" in only:
            out["seeds"] = await attack_seeds(folder / "seeds", args.deals)
        if "roles" in only:
            (folder / "roles" / "admin").mkdir()
            (folder / "roles" / "open").mkdir()
            out["roles"] = await attack_roles(folder / "roles", args.flood)
        if "queue" in only:
            out["queue"] = await attack_queue(folder / "queue")
        if "duplicate" in only:
            out["duplicate"] = await attack_duplicate(folder / "duplicate", args.duplicate_deals)
        if "cancel" in only:
            out["cancel"] = await attack_cancel(folder / "cancel", args.cancel_deals)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="--deals 6 --flood 40 --duplicate-deals 4 --cancel-deals 200 (what CI runs)")
    parser.add_argument("--deals", type=int, default=None, help="deals of the seeds attack's match (20)")
    parser.add_argument("--flood", type=int, default=None,
                        help="RegisterBot calls of the roles attack (1000)")
    parser.add_argument("--duplicate-deals", type=int, default=None, help="deals a duplicate match (8)")
    parser.add_argument("--cancel-deals", type=int, default=None,
                        help="deals a match of the cancelled tournament (400)")
    parser.add_argument("--only", default="",
                        help=f"some of {', '.join(ATTACKS)}, comma separated (default: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for name, full, small in (("deals", 20, 6), ("flood", 1000, 40), ("duplicate_deals", 8, 4),
                              ("cancel_deals", 400, 200)):
        if getattr(args, name) is None:
            setattr(args, name, small if args.quick else full)
    unknown = set(filter(None, (a.strip() for a in args.only.split(",")))) - set(ATTACKS)
    if unknown:
        parser.error(f"unknown attack {', '.join(sorted(unknown))}; known: {', '.join(ATTACKS)}")
    result = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(result))
        return 0
    for attack, figures in result.items():
        for key, value in figures.items():
            if isinstance(value, dict):  # duplicate: one set of figures a mode
                for k, v in value.items():
                    print(f"{attack}.{key}.{k}={v}")
            else:
                print(f"{attack}.{key}={value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
