"""The leaderboard of a pool: its order, its pages, the two methods, and bots without games."""

from __future__ import annotations

import json

import pytest

from arena.ratings.bt import fit
from arena.ratings.counts import PairCount
from arena.ratings.leaderboard import leaderboard

#: a beats everyone most of the time, then b, c, d
COUNTS = {
    ("a", "b"): PairCount(8, 1, 3), ("a", "c"): PairCount(9, 0, 3), ("a", "d"): PairCount(10, 1, 1),
    ("b", "c"): PairCount(7, 2, 3), ("b", "d"): PairCount(8, 0, 4), ("c", "d"): PairCount(7, 1, 4),
}
#: the online Elo disagrees: d on top; e only ever played itself
ELO = {"a": (1510.0, 36), "b": (1490.0, 36), "c": (1480.0, 36), "d": (1530.0, 36), "e": (1500.0, 4)}


def test_bt_ranks_the_bots_by_the_fit_with_intervals_and_los_over_the_next_one() -> None:
    board = leaderboard(COUNTS, {}, pool="classic")
    result = fit(COUNTS)
    assert (board.pool, board.method, board.total, board.offset) == ("classic", "bt", 4, 0)
    assert [e.bot for e in board.entries] == ["a", "b", "c", "d"]
    assert [e.rank for e in board.entries] == [1, 2, 3, 4]
    for entry, below in zip(board.entries, [*board.entries[1:], None], strict=True):
        assert entry.rating == pytest.approx(result.rating(entry.bot))
        assert (entry.low, entry.high) == pytest.approx(result.interval(entry.bot))
        if below is None:
            assert entry.los_next is None
        else:
            assert entry.los_next == pytest.approx(result.los(entry.bot, below.bot))
            assert entry.los_next is not None and entry.los_next > 0.5


def test_each_entry_counts_the_bots_games_from_its_own_side() -> None:
    entries = {e.bot: e for e in leaderboard(COUNTS, {}, pool="classic").entries}
    a, d = entries["a"], entries["d"]
    assert (a.wins, a.draws, a.losses, a.games) == (27, 2, 7, 36)
    assert a.score == pytest.approx(28 / 36)
    assert (d.wins, d.draws, d.losses, d.games) == (1 + 4 + 4, 2, 10 + 8 + 7, 36)


def test_offset_and_limit_slice_the_ranks_and_total_counts_the_whole_pool() -> None:
    full = leaderboard(COUNTS, ELO, pool="classic").entries
    page = leaderboard(COUNTS, ELO, pool="classic", offset=1, limit=2)
    assert page.total == 5 and page.offset == 1
    assert page.entries == full[1:3]
    assert leaderboard(COUNTS, ELO, pool="classic", offset=4, limit=10).entries == full[4:]
    assert leaderboard(COUNTS, ELO, pool="classic", offset=9).entries == ()
    assert leaderboard(COUNTS, ELO, pool="classic", limit=0).entries == ()


def test_a_negative_offset_or_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="offset"):
        leaderboard(COUNTS, ELO, pool="classic", offset=-1)
    with pytest.raises(ValueError, match="limit"):
        leaderboard(COUNTS, ELO, pool="classic", limit=-1)


def test_elo_ranks_the_bots_by_the_online_elo_without_intervals() -> None:
    board = leaderboard(COUNTS, ELO, pool="classic", method="elo")
    assert board.method == "elo"
    assert [(e.rank, e.bot, e.rating) for e in board.entries] == [
        (1, "d", 1530.0), (2, "a", 1510.0), (3, "e", 1500.0), (4, "b", 1490.0), (5, "c", 1480.0)]
    assert all(e.low is None and e.high is None and e.los_next is None for e in board.entries)
    assert board.entries[0].games == 36  # games come from the counts


def test_a_bot_with_no_counted_game_shows_at_1500_with_nothing_played() -> None:
    entries = {e.bot: e for e in leaderboard(COUNTS, ELO, pool="classic").entries}
    e = entries["e"]
    assert (e.rating, e.games, e.wins, e.draws, e.losses, e.score) == (1500.0, 0, 0, 0, 0, 0.0)
    assert e.low is None and e.high is None and e.los_next is None
    above = [x for x in entries.values() if x.rank == e.rank - 1]
    assert above and above[0].los_next is None  # no LOS against a bot the fit did not rate


def test_equal_ratings_share_the_better_rank() -> None:
    board = leaderboard({}, {"x": (1500.0, 0), "y": (1600.0, 3), "z": (1500.0, 0), "w": (1400.0, 1)},
                        pool="p", method="elo")
    assert [(e.rank, e.bot) for e in board.entries] == [(1, "y"), (2, "x"), (2, "z"), (4, "w")]


def test_an_empty_pool_has_an_empty_leaderboard() -> None:
    board = leaderboard({}, {}, pool="p")
    assert (board.total, board.entries) == (0, ())


def test_an_unknown_method_is_refused() -> None:
    with pytest.raises(ValueError, match="method"):
        leaderboard(COUNTS, ELO, pool="p", method="glicko")  # type: ignore[arg-type]


def test_the_leaderboard_is_plain_json() -> None:
    board = leaderboard(COUNTS, ELO, pool="classic", limit=2)
    data = json.loads(json.dumps(board.to_json()))
    assert data["total"] == 5 and [e["rank"] for e in data["entries"]] == [1, 2]
