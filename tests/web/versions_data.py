"""Bots with versions on a real node, made as the node makes them but without playing an SPRT's matches
(which takes a minute: tests/node/test_versions_node.py plays them): each version change is the
registry's atomic ``update_versions`` of :mod:`arena.referee.versions`' functions, each SPRT the real
``sprt`` tournament of :func:`arena.node.versions.test_spec` in the node's queue, its jobs claimed and
their results written (deal-less) as a node writes them, the tournament advanced between.

- ``alpha``: version 1 (first, retired since), version 2 promoted by its SPRT (finished: H1);
- ``beta``: version 1 (first, retired), version 2 promoted by hand, version 3 under test against 2
  (its SPRT running, a few pairs played: its seed is not revealed; its first pair's legs played out by
  the engine with every seat passing, so every deal thrown in: the test sets that pair aside);
- ``plain``: connected without a version: no versions;
- ``waiter``: registered, never connected to the node: version 1 promoted, version 2 waiting.

Besides a rated round-robin of the three (before any said a version: their games under their names),
``alpha`` played ladder games in the pool as version 1 (:data:`LADDER_GAMES`), then as version 2
(``alpha@1`` and ``alpha@2`` rated on their own games), and ``beta`` none since its version 2 was
promoted (rated from its games under its name, its interval widened).
"""

from __future__ import annotations

import contextlib
import random
import secrets
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from belote_bot import Bot, HeuristicBot, RandomBot

from arena.engine.rules import PRESETS
from arena.node.bots import BrokerRegistryBackend
from arena.node.versions import OPTIONS, test_id, test_spec
from arena.queue import Broker
from arena.ratings.pools import ladder_id
from arena.referee.registry import BotRegistry
from arena.referee.versions import Version, decide, find, promote, seen, start_test
from arena.tournament import MatchJob, Tournaments, TournamentSpec, TournamentState
from arena.tournament.sprt import finite_or_none
from tests.factories import result_of_job
from tests.tournament.helpers import play_job
from tests.web.site import Site

POOL = "coinche"
#: alpha's ladder games against plain as each version: (version, its wins, its losses)
LADDER_GAMES = (("1", 2, 2), ("2", 5, 1))
#: beta's test has played this many pairs' worth of legs when the pages are read (fewer pairs are whole)
RUNNING_PAIRS = 3
#: a bot with a candidate waiting for its test (registered, not connected to the site's node)
WAITER = "waiter"


def players() -> dict[str, Bot]:
    """The site's bots (none says a version: the versions are written as a node writes them)."""
    return {"alpha": HeuristicBot(seed=1), "beta": HeuristicBot(seed=2), "plain": RandomBot(seed=3)}


def rated() -> TournamentSpec:
    """A rated round-robin of the three in the pool (a seed nobody gave): they are on its leaderboard."""
    return TournamentSpec(tournament_id="versions-rr", format="round-robin", bots=("alpha", "beta", "plain"),
                          ruleset=PRESETS[POOL], deals=1,
                          rounds=1, seed=secrets.token_hex(32))


@dataclass(frozen=True)
class Built:
    """What the versions' tests read back: each SPRT's tournament id and its secret seed."""

    alpha_test: str
    beta_test: str
    seeds: tuple[str, ...]


def better(leg: int) -> int | None:
    """A better candidate's ``leg``-th leg (1 a win, None a draw, 0 a loss): it wins most, draws every
    fourth, loses every seventh."""
    return 0 if leg % 7 == 6 else None if leg % 4 == 3 else 1


def even(leg: int) -> int | None:
    """A candidate no better: a win, a draw, a loss, in turn (its test stays undecided for a while)."""
    return (1, None, 0)[leg % 3]


def _play(broker: Broker, tournaments: Tournaments, spec: TournamentSpec, fate: Callable[[int], int | None],
          enough: Callable[[int], bool], thrown: Callable[[MatchJob], bool] = lambda job: False) -> None:
    """Claim the test's jobs (only those: its two players' seats) and write their results, the candidate
    (``spec.bots[0]``) winning most, until ``enough(legs played)`` or the tournament ends."""
    tid, candidate = spec.tournament_id, spec.bots[0]
    seats = {b: 1000 for b in spec.bots}
    legs = 0
    deadline = time.monotonic() + 60
    while not enough(legs):
        found = broker.get_tournament(tid)
        assert found is not None
        if not found[1].is_open:
            return
        claims = broker.claim("versions-test", 1, 60.0, seats)
        if not claims:
            tournaments.advance(tid)
            assert time.monotonic() < deadline, f"{tid} had nothing to play for 60 s"
            continue
        job = claims[0].job
        if thrown(job):  # played out: every seat passes, every deal is thrown in
            broker.write_result(play_job(job, {b: "pass" for b in spec.bots}, random.Random(legs)))
        else:
            won = fate(legs)
            winner = None if won is None else (0 if (job.team0 == candidate) == (won == 1) else 1)
            totals = (0, 0) if winner is None else (1, 0) if winner == 0 else (0, 1)
            broker.write_result(result_of_job(job, totals, winner))
        broker.ack(claims[0])
        legs += 1
        tournaments.advance(tid)


Change = Callable[[tuple[Version, ...]], tuple[Version, ...] | None]


def _change(registry: BotRegistry, name: str, change: Change) -> tuple[Version, ...]:
    entry = registry.update_versions(name, change, strict=True)
    assert entry is not None, f"{name}'s versions did not change"
    return entry.versions


def _start(registry: BotRegistry, tournaments: Tournaments, versions: tuple[Version, ...], name: str,
           candidate: str, base: str) -> TournamentSpec:
    """Start the SPRT of ``name@candidate`` against ``name@base`` as a node does (``versions``: the bot's
    now; the registry's own copy waits for the notice of its write, as every node's does)."""
    cand = find(versions, candidate)
    assert cand is not None
    tid = test_id(name, cand)
    spec = test_spec(name, candidate, base, tid, POOL, 1)
    assert tournaments.store.put_tournament(spec)  # as the node stores a test (its id is no caller's)
    tournaments.advance(tid)
    now = int(time.time())
    _change(registry, name, lambda vs: start_test(vs, candidate, tid, base, now))
    return spec


def build(site: Site) -> Built:
    """Write the versions of ``alpha`` and ``beta`` (see the module's docstring) through the site's queue,
    as a second node would (the site's node sees each change by the registry's notices)."""
    assert site.running is not None
    broker = site.running.worker.broker
    return site.blocking(_build, broker)  # type: ignore[no-any-return]


def _build(broker: Broker) -> Built:
    registry = BotRegistry(BrokerRegistryBackend(broker))
    tournaments = Tournaments(broker)
    start = int(time.time()) - 3600
    now: dict[str, tuple[Version, ...]] = {}
    for name in ("alpha", "beta"):
        _change(registry, name, lambda vs: seen(vs, "1", start))
        now[name] = _change(registry, name, lambda vs: seen(vs, "2", start + 600))
    # alpha: 2 tested against 1, to its end
    alpha = _start(registry, tournaments, now["alpha"], "alpha", "2", "1")
    _play(broker, tournaments, alpha, better, lambda legs: legs >= 2 * OPTIONS.max_pairs)
    progress = tournaments.progress(alpha.tournament_id)
    assert progress.state is TournamentState.FINISHED and progress.sprt is not None
    sprt = progress.sprt
    assert sprt.decision == "H1", sprt
    ended = int(time.time())
    low, high = (finite_or_none(e) for e in sprt.elo_interval)
    _change(registry, "alpha", lambda vs: decide(vs, "2", alpha.tournament_id, "H1", sprt.llr, sprt.pairs,
                                                 sprt.elo, ended, elo_low=low, elo_high=high,
                                                 set_aside=sprt.set_aside))
    # beta: 2 promoted by hand, then 3 under test against it
    _change(registry, "beta", lambda vs: promote(vs, "2", "hand", start + 900))
    versions = _change(registry, "beta", lambda vs: seen(vs, "3", start + 1200))
    beta = _start(registry, tournaments, versions, "beta", "3", "2")
    _play(broker, tournaments, beta, even, lambda legs: legs >= 2 * RUNNING_PAIRS,
          thrown=lambda job: job.match_id.startswith(f"{beta.tournament_id}-r1-0-"))
    assert tournaments.progress(beta.tournament_id).state.is_open
    for version, wins, losses in LADDER_GAMES:
        for winner in [0] * wins + [1] * losses:
            _ladder_game(broker, {"alpha": version}, winner)
    # waiter: registered elsewhere, never connected here; its version 2 waits for its test
    registry.register(WAITER)
    _change(registry, WAITER, lambda vs: seen(vs, "1", start))
    _change(registry, WAITER, lambda vs: seen(vs, "2", start + 60))
    return Built(alpha.tournament_id, beta.tournament_id, (alpha.seed, beta.seed))


def _ladder_game(broker: Broker, versions: dict[str, str], winner: int) -> None:
    """A ladder match of alpha against plain in the pool, written as a node writes it, each seat's bot at
    its version in ``versions``."""
    tid = ladder_id(POOL)
    job = MatchJob(match_id=f"{tid}:{secrets.token_hex(8)}", tournament_id=tid, team0="alpha", team1="plain",
                   ruleset=POOL, seed=secrets.token_hex(32), deals=1, tags={"format": "ladder"})
    result = result_of_job(job, (1, 0) if winner == 0 else (0, 1), winner)
    bots = tuple(replace(b, version=versions.get(b.name, "")) for b in result.record.bots)
    assert broker.write_result(replace(result, record=replace(result.record, bots=bots)))


def wait_known(site: Site, name: str, version: str, state: str, timeout: float = 20.0) -> None:
    """Wait until the site's node has seen ``name``'s ``version`` in ``state`` (by the registry's notices)."""
    assert site.running is not None
    node = site.running.node
    deadline = time.monotonic() + timeout
    while True:
        entry = node.bot_named(name)
        v = None if entry is None else find(entry.versions, version)
        if v is not None and v.state == state:
            return
        assert time.monotonic() < deadline, f"{name} {version} was not {state} on the node after {timeout} s"
        time.sleep(0.05)


__all__ = ["LADDER_GAMES", "POOL", "RUNNING_PAIRS", "WAITER", "Built", "build", "players", "rated",
           "wait_known"]


@contextlib.contextmanager
def built_site(broker: Callable[[], Broker] | None = None) -> Iterator[tuple[Site, Built]]:
    """A node (on ``broker``'s store, else its own embedded one) with ``alpha`` (2 promoted by its
    SPRT), ``beta`` (2 by hand, 3 under test) and ``plain``, once its registry's copy has them."""
    with tempfile.TemporaryDirectory() as tmp:
        site = Site(Path(tmp), players=players(), tournaments=[rated()], broker=broker)
        try:
            data = build(site)
            wait_known(site, "alpha", "2", "promoted")
            wait_known(site, "beta", "3", "testing")
            wait_known(site, WAITER, "2", "candidate")
            yield site, data
        finally:
            site.close()
