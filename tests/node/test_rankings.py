"""The node's rankings over a real store: one fit per pool shared by the readers for ``ttl`` seconds,
pages of it, the default pool, and bad requests named."""

from __future__ import annotations

import pytest

from arena.node.rankings import MAX_LIMIT, MAX_OFFSET, BadRequest, Rankings, UnknownPool
from arena.queue.broker import Broker
from arena.ratings import tournament_pool
from tests.queue.conftest import broker, store  # noqa: F401  # the fixtures: both backends
from tests.queue.test_pool_ratings import classic, coinche, game


def played(store_: Broker) -> None:
    store_.put_tournament(classic("c1"))
    store_.put_tournament(coinche("k1"))
    for n, (a, b) in enumerate([("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma")] * 3):
        store_.write_result(game("c1", n, a, b, winner=0))
    store_.write_result(game("k1", 0, "alpha", "beta", winner=1, ruleset="coinche"))


def test_a_board_is_fitted_once_per_ttl_and_shared_by_its_readers(broker: Broker) -> None:  # noqa: F811
    played(broker)
    now = [0.0]
    rankings = Rankings(broker, ttl=2.0, clock=lambda: now[0])
    first = rankings.leaderboard("classic")
    assert [e.bot for e in first.entries] == ["alpha", "beta", "gamma"] and first.total == 3
    broker.write_result(game("c1", 99, "gamma", "alpha", winner=0))
    now[0] = 1.9
    assert rankings.leaderboard("classic").entries == first.entries  # kept: the new result waits
    now[0] = 2.1
    again = rankings.leaderboard("classic")
    assert next(e.games for e in again.entries if e.bot == "gamma") == 7  # fitted anew


def test_a_page_is_a_slice_of_the_whole_board(broker: Broker) -> None:  # noqa: F811
    played(broker)
    rankings = Rankings(broker)
    whole = rankings.leaderboard("classic", "bt", 0, MAX_LIMIT)
    page = rankings.leaderboard("classic", "bt", 1, 1)
    assert page.total == 3 and page.offset == 1 and page.entries == whole.entries[1:2]
    assert rankings.leaderboard("classic", "bt", 5, 10).entries == ()


def test_the_default_pool_is_the_preset_with_the_most_games(broker: Broker) -> None:  # noqa: F811
    played(broker)
    rankings = Rankings(broker)
    assert rankings.pools() == ["classic", "coinche", tournament_pool("c1"), tournament_pool("k1")]
    assert rankings.leaderboard().pool == "classic"
    assert Rankings(broker).bot("alpha")[0].pool == "classic"


def test_bad_requests_say_what_is_wrong(broker: Broker) -> None:  # noqa: F811
    played(broker)
    rankings = Rankings(broker)
    with pytest.raises(UnknownPool, match=r"no rating pool 'belote'.*classic, coinche, and there are 2"):
        rankings.leaderboard("belote")
    with pytest.raises(UnknownPool) as info:  # a long name is cut in the reply
        rankings.leaderboard("x" * 10_000)
    assert len(str(info.value)) < 300
    for kwargs, words in (({"method": "glicko"}, "method must be one of bt, elo"),
                          ({"limit": MAX_LIMIT + 1}, "limit must be from 1 to 200"),
                          ({"offset": -1}, "offset must be a whole number from 0 to 1000000000, not -1"),
                          ({"offset": MAX_OFFSET + 1}, "from 0 to 1000000000, not 1000000001")):
        with pytest.raises(BadRequest, match=words):
            rankings.leaderboard("classic", **kwargs)


def test_an_empty_store_has_an_empty_board(broker: Broker) -> None:  # noqa: F811
    board = Rankings(broker).leaderboard()
    assert (board.pool, board.total, board.entries) == ("", 0, ())


def test_the_version_tests_pools_are_not_listed_but_still_read(broker: Broker) -> None:  # noqa: F811
    """Issue 24: ``rankings`` listed every version test's pool under "other pools" (one per test: 40 in
    185 s from one bot), though a test is not rated; its own standings are still there by name."""
    played(broker)
    tid = "vt:alpha:2:1000"
    broker.put_tournament(classic(tid, unrated_reason="a test between two versions of one bot"))
    broker.write_result(game(tid, 0, "alpha@2", "alpha@1"))
    rankings = Rankings(broker)
    assert rankings.pools() == ["classic", "coinche", tournament_pool("c1"), tournament_pool("k1")]
    assert [e.bot for e in rankings.leaderboard(tournament_pool(tid)).entries] == ["alpha@2", "alpha@1"]
    assert all(r.pool != tournament_pool(tid) for r in rankings.bot("alpha@2"))
