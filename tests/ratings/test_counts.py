"""Pair counts: one game at a time, or from the store's rows, always from the first bot's side."""

from __future__ import annotations

from arena.ratings.counts import PairCount, add_game, counts_from_rows, pair_key


def test_a_pair_is_keyed_by_its_bots_in_name_order() -> None:
    assert pair_key("a", "b") == (("a", "b"), True)
    assert pair_key("b", "a") == (("a", "b"), False)


def test_a_win_a_draw_and_a_loss_count_from_the_first_bots_side() -> None:
    counts: dict[tuple[str, str], PairCount] = {}
    add_game(counts, "a", "b", 1.0)
    add_game(counts, "b", "a", 1.0)  # b won: a loss for a
    add_game(counts, "b", "a", 0.5)
    add_game(counts, "b", "a", 0.0)  # b lost: a win for a
    assert counts == {("a", "b"): PairCount(wins=2, draws=1, losses=1)}
    assert counts["a", "b"].games == 4 and counts["a", "b"].score() == 2.5


def test_a_mirror_match_counts_nothing() -> None:
    counts: dict[tuple[str, str], PairCount] = {}
    add_game(counts, "a", "a", 1.0)
    assert counts == {}


def test_rows_in_either_order_add_up_and_mirror_rows_are_dropped() -> None:
    rows = [("a", "b", 3, 1, 2), ("b", "a", 4, 0, 1), ("c", "c", 9, 9, 9), ("c", "a", 0, 2, 1)]
    assert counts_from_rows(rows) == {("a", "b"): PairCount(4, 1, 6), ("a", "c"): PairCount(1, 2, 0)}


def test_rows_and_single_games_agree() -> None:
    games = [("a", "b", 1.0), ("b", "c", 0.5), ("c", "a", 0.0), ("b", "a", 1.0), ("a", "c", 0.5)]
    one_by_one: dict[tuple[str, str], PairCount] = {}
    for a, b, score in games:
        add_game(one_by_one, a, b, score)
    rows = [(a, b, int(s == 1.0), int(s == 0.5), int(s == 0.0)) for a, b, s in games]
    assert counts_from_rows(rows) == one_by_one
