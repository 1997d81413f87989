"""Deals on a cluster: the same tournament seed deals the same decks; duplicate legs swap the hands.

Two ``belote-arena serve --redis`` nodes and four SDK bot processes, shared by
the tests of this module (each test runs its own tournaments on them).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena.engine.dealing import derive_seed
from arena.queue.redis_broker import RedisBroker
from arena.tournament import MatchResult
from tests.cluster.conftest import claim_db, release_db
from tests.cluster.procs import (
    NodeProc,
    Procs,
    check_finished_tournament,
    check_recorded_once,
    cli_json,
    redis_url,
    register_bots,
    wait_connected,
    wait_state,
)

BOTS = {"rand-a": "random", "rand-b": "random", "heur-a": "heuristic", "heur-b": "heuristic"}


@dataclass
class Cluster:
    url: str
    client: Any
    broker: RedisBroker
    nodes: list[NodeProc]

    def run(self, tournament_id: str, *options: str) -> list[MatchResult]:
        """Create a round-robin of the four bots, wait for its end, check it; its results."""
        cli_json("tournament", "create", "--address", self.nodes[0].address, "--format", "round-robin",
                 "--bots", ",".join(BOTS), "--ruleset", "coinche", "--id", tournament_id, *options)
        wait_state(self.broker, tournament_id, "finished", timeout=60)
        results = check_finished_tournament(self.broker, tournament_id, redis_client=self.client,
                                            db_arg=("--address", self.nodes[1].address), ratings_alone=False)
        check_recorded_once(self.nodes, results)
        return results


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    client, db = claim_db()
    root: Path = tmp_path_factory.mktemp("deals")
    procs = Procs(root)
    broker = None
    try:
        url = redis_url(db)
        nodes = procs.nodes(2, root, redis=url, lease=5, capacity=4)
        tokens = register_bots(nodes[0].address, list(BOTS))
        for name, kind in BOTS.items():
            procs.start_bot(name, kind, nodes[0].address, tokens[name], concurrency=4)
        wait_connected([n.address for n in nodes], list(BOTS))
        broker = RedisBroker(url)
        yield Cluster(url, client, broker, nodes)
    finally:
        procs.close()
        if broker is not None:
            broker.close()
        release_db(client)


def board(result: MatchResult) -> tuple[int, ...]:
    """Where a match stands in its schedule: (round, board[, leg]), whatever the tournament id."""
    parts = result.match_id.split("-r", 1)[1].split("-")
    return tuple(int(p.removeprefix("leg")) for p in parts)


def decks(result: MatchResult) -> list[list[str]]:
    deals = result.record.deals
    assert all("deck" in d and len(d["deck"]) == 32 for d in deals), result.match_id
    return [d["deck"] for d in deals]


@pytest.mark.slow
def test_the_same_tournament_seed_deals_the_same_decks(cluster: Cluster) -> None:
    # a seed of digits: the CLI keeps it the string it was typed as
    first = cluster.run("same-a", "--deals", "3", "--seed", "20261130")
    second = cluster.run("same-b", "--deals", "3", "--seed", "20261130")
    other = cluster.run("other-c", "--deals", "3", "--seed", "another-seed")
    a, b, c = ({board(r): r for r in rs} for rs in (first, second, other))
    assert len(a) == 12 and a.keys() == b.keys() == c.keys()
    for key, ra in a.items():
        rb = b[key]
        assert (ra.team0, ra.team1) == (rb.team0, rb.team1)
        assert ra.record.seed == rb.record.seed == derive_seed("20261130", f"r{key[0]}-{key[1]}")
        assert decks(ra) == decks(rb), f"board {key}: the decks differ"
        assert [d["hands"] for d in ra.record.deals] == [d["hands"] for d in rb.record.deals]
        assert [d["dealer"] for d in ra.record.deals] == [d["dealer"] for d in rb.record.deals]
        assert decks(ra) != decks(c[key]), f"board {key}: another seed dealt the same decks"
    # the play differs (the bots' own choices), the cards dealt do not: still every record replays
    for r in (*first, *second):
        r.record.replay()


@pytest.mark.slow
def test_duplicate_legs_exchange_the_hands_card_by_card(cluster: Cluster) -> None:
    results = cluster.run("dup", "--duplicate", "mirror", "--deals", "2", "--seed", "dup-seed")
    assert len(results) == 12  # 6 pairings, two legs each
    by_board = {board(r): r for r in results}
    pairs = {key[:2] for key in by_board}
    assert len(pairs) == 6
    met = set()
    for rnd, index in pairs:
        leg0, leg1 = by_board[(rnd, index, 0)], by_board[(rnd, index, 1)]
        a, b = leg0.team0, leg0.team1
        met.add(frozenset((a, b)))
        # the bots swapped teams; everything else about the deals is the same
        assert (leg1.team0, leg1.team1) == (b, a)
        assert leg0.record.players == (a, b, a, b)
        assert leg1.record.players == (b, a, b, a)
        assert leg0.record.seed == leg1.record.seed
        deals0, deals1 = leg0.record.deals, leg1.record.deals
        assert len(deals0) == len(deals1) == 2
        for i, (d0, d1) in enumerate(zip(deals0, deals1, strict=True)):
            assert d0["deck"] == d1["deck"], f"{leg0.match_id} deal {i}: the decks differ"
            assert d0["dealer"] == d1["dealer"]
            for seat in range(4):
                # the same seat gets the same eight cards: held by A in one leg, by B in the other
                assert sorted(d0["hands"][seat]) == sorted(d1["hands"][seat]), (leg0.match_id, i, seat)
                assert len(d0["hands"][seat]) == 8
                bot0, bot1 = leg0.record.players[seat], leg1.record.players[seat]
                assert {bot0, bot1} == {a, b} and bot0 != bot1
            # the dealt hands are the deck's (the replay checks each hand against the deck)
        for leg in (leg0, leg1):
            match, _ = leg.record.replay()
            assert (match.totals[0], match.totals[1]) == leg.totals
    assert len(met) == 6  # every pairing of the four bots
