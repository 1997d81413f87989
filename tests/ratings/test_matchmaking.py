"""The ladder's matchmaking: informative picks within the seats, repeat rule and waits, with reasons."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arena.ratings.bt import fit
from arena.ratings.counts import PairCount
from arena.ratings.matchmaking import INFO_FLOOR, NEW_BOT_VARIANCE, Fairness, Pick, Rules, pick
from arena.ratings.simulation import bot_names, play_league, play_pairs

Counts = dict[tuple[str, str], PairCount]


def settled(bots: int, games_per_bot: int, seed: int = 0) -> tuple[np.ndarray, Counts]:
    strengths = np.random.default_rng(seed).normal(1500.0, 200.0, bots)
    return strengths, play_league(strengths, games_per_bot, np.random.default_rng(seed + 1))


def play(strengths: np.ndarray, picks: tuple[Pick, ...], counts: Counts, rng: np.random.Generator) -> None:
    index = {bot: i for i, bot in enumerate(bot_names(len(strengths)))}
    play_pairs(strengths, [index[p.a] for p in picks], [index[p.b] for p in picks], rng, counts)


# ------------------------------------------------------------------ seats
@settings(max_examples=60, deadline=None)
@given(seats=st.lists(st.integers(0, 7), min_size=2, max_size=12), per_match=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_a_pick_never_takes_more_seats_than_a_bot_has_free(seats: list[int], per_match: int,
                                                           seed: int) -> None:
    _, counts = settled(len(seats), 20, seed)
    free = dict(zip(bot_names(len(seats)), seats, strict=True))
    result = pick(counts, free, Fairness(), random.Random(seed), Rules(seats_per_match=per_match))
    taken = Counter(bot for p in result.picks for bot in (p.a, p.b))
    for bot, matches in taken.items():
        assert matches * per_match <= free[bot]
    # and it stops only when no allowed pair is left (fewer than two bots with a match's seats, or the
    # repeat rule), or when every pair left is a known result: then those bots wait
    left = [bot for bot in free if free[bot] - taken[bot] * per_match >= per_match]
    recent = result.fairness.recent
    cap = Rules().max_repeats
    repeat_blocked = any(recent.get(a, ()).count(b) >= cap for a in left for b in left if a != b)
    assert len(left) < 2 or repeat_blocked or (result.waiting and set(result.waiting) <= set(left))
    assert all(p.a != p.b for p in result.picks)


def test_a_bot_without_a_match_s_seats_or_not_offered_is_never_picked() -> None:
    _, counts = settled(6, 30)
    names = bot_names(6)
    free = {names[0]: 1, names[1]: 4, names[2]: 4, names[3]: 2}  # names[0]: one seat, a match takes 2
    result = pick(counts, free, Fairness(), random.Random(0))
    picked = {bot for p in result.picks for bot in (p.a, p.b)}
    assert picked <= {names[1], names[2], names[3]}
    assert len(result.picks) == 2  # names[1] and names[2] have two matches' seats, names[3] one
    assert Counter(bot for p in result.picks for bot in (p.a, p.b))[names[3]] == 1


def test_a_limit_bounds_the_picks_of_one_call() -> None:
    _, counts = settled(10, 30)
    free = dict.fromkeys(bot_names(10), 8)
    assert len(pick(counts, free, Fairness(), random.Random(0), limit=3).picks) == 3
    assert pick(counts, free, Fairness(), random.Random(0), limit=0).picks == ()


# ------------------------------------------------------------------ fairness over a run
@settings(max_examples=40, deadline=None)
@given(bots=st.integers(5, 12), window=st.integers(2, 10), repeats=st.integers(1, 4),
       rounds=st.lists(st.lists(st.integers(0, 6), min_size=12, max_size=12), min_size=5, max_size=25),
       seed=st.integers(0, 2**16))
def test_no_pair_repeats_beyond_the_bound_and_no_bot_takes_more_seats_over_a_run(
        bots: int, window: int, repeats: int, rounds: list[list[int]], seed: int) -> None:
    """Bots come and go with any free seats; the ladder's own record of each bot's opponents (kept
    here, not the module's) never holds more than ``repeats`` of one opponent in a bot's last ``window``
    (narrowed, for a bot with few partners above the floor, to the window the call names)."""
    rules = Rules(window=window, max_repeats=repeats, max_wait=2 * bots)
    strengths = np.random.default_rng(seed).normal(1500.0, 200.0, bots)
    names = bot_names(bots)
    counts: Counts = {}
    fairness, rng, games = Fairness(), random.Random(seed), np.random.default_rng(seed)
    history: dict[str, list[str]] = {bot: [] for bot in names}
    for seats in rounds:
        free = dict(zip(names, seats[:bots], strict=True))
        result = pick(counts, free, fairness, rng, rules, present=names)
        fairness = result.fairness
        taken = Counter(bot for p in result.picks for bot in (p.a, p.b))
        assert all(taken[bot] * rules.seats_per_match <= free[bot] for bot in taken)
        for p in result.picks:
            history[p.a].append(p.b)
            history[p.b].append(p.a)
            for bot in (p.a, p.b):
                assert result.windows[bot] <= window
                assert max(Counter(history[bot][-result.windows[bot]:]).values()) <= repeats
        play(strengths, result.picks, counts, games)


@settings(max_examples=30, deadline=None)
@given(bots=st.integers(4, 14), slack=st.integers(0, 20), seed=st.integers(0, 2**16),
       availability=st.lists(st.lists(st.booleans(), min_size=14, max_size=14), min_size=10, max_size=30))
# a bot left alone after waiting 3 picks of 4 (it once made the test's own check fail, not the bound)
@example(bots=4, slack=0, seed=0, availability=[[False] * 14] * 15 + [
    [i in here for i in range(14)] for here in ({2, 3}, {1, 3}, {0, 1}, {1, 2, 3}, {3})])
def test_no_available_bot_waits_more_than_max_wait_picks(bots: int, slack: int, seed: int,
                                                         availability: list[list[bool]]) -> None:
    """One pick at a time (the ladder's pace when one match slot frees), bots coming and going; the
    waits (picks in a row available without a game), counted here, stay within ``max_wait``, set as low
    as the bound allows (the bots available, plus ``slack``); no repeat rule in the way (a window of 1)."""
    rules = Rules(max_wait=bots + slack, window=1, max_repeats=2)
    strengths = np.random.default_rng(seed).normal(1500.0, 300.0, bots)
    names = bot_names(bots)
    counts: Counts = {}
    fairness, rng, games = Fairness(), random.Random(seed), np.random.default_rng(seed)
    wait = dict.fromkeys(names, 0)
    for present in availability:
        for _ in range(3):
            free = {bot: 2 for bot, here in zip(names, present, strict=False) if here}
            result = pick(counts, free, fairness, rng, rules, limit=1)
            fairness = result.fairness
            if not result.picks:  # fewer than two bots, or every pair a known result and no wait pressing
                if len(free) >= 2:  # a bot alone waits for a partner, however long it has waited
                    assert set(result.waiting) == set(free)
                    assert all(fairness.waited.get(bot, 0) + 1 < rules.max_wait for bot in free)
                wait = {bot: wait[bot] if bot in free else 0 for bot in names}
                continue
            (p,) = result.picks
            for bot in names:
                wait[bot] = wait[bot] + 1 if bot in free and bot not in (p.a, p.b) else 0
                assert wait[bot] <= rules.max_wait
                assert fairness.waited.get(bot, 0) == wait[bot]
            play(strengths, result.picks, counts, games)


def test_every_bot_plays_a_share_of_the_games_even_a_settled_one() -> None:
    """Thirty bots, one pick at a time for 600 picks, ``max_wait`` 40: the information alone would leave
    the best-known bots out; the waits give every bot a game at least every 41 picks, so at least 14 of
    the 600 (2.4%; an even share is 6.7%)."""
    strengths, counts = settled(30, 100)
    names = bot_names(30)
    fairness, rng, games = Fairness(), random.Random(3), np.random.default_rng(3)
    played: Counter[str] = Counter()
    longest = 0
    for _ in range(600):
        result = pick(counts, dict.fromkeys(names, 2), fairness, rng, limit=1)
        fairness = result.fairness
        played.update(bot for p in result.picks for bot in (p.a, p.b))
        longest = max([longest, *fairness.waited.values()])
        play(strengths, result.picks, counts, games)
    assert longest <= Rules().max_wait
    assert min(played[bot] for bot in names) >= 600 // (Rules().max_wait + 1)
    assert any(p.why.rule == "waited" for p in pick(counts, dict.fromkeys(names, 2), Fairness(
        dict.fromkeys(names[:1], 39)), random.Random(0), limit=1).picks)


def test_a_bot_not_available_waits_no_more() -> None:
    _, counts = settled(6, 30)
    names = bot_names(6)
    before = Fairness(dict.fromkeys(names, 5))
    after = pick(counts, dict.fromkeys(names[:4], 2), before, random.Random(0)).fairness
    assert names[4] not in after.waited and names[5] not in after.waited


# ------------------------------------------------------------------ information
def test_a_new_bot_is_picked_at_once_and_the_reason_says_how_little_is_known() -> None:
    _, counts = settled(10, 100)
    newcomer = "bot9999"
    free = {**dict.fromkeys(bot_names(10), 2), newcomer: 2}
    result = pick(counts, free, Fairness(), random.Random(0), limit=1)
    (first,) = result.picks
    assert newcomer in (first.a, first.b)
    assert first.why.rule == "information"
    half = first.why.half_a if first.a == newcomer else first.why.half_b
    assert half == pytest.approx(1.96 * NEW_BOT_VARIANCE**0.5, rel=1e-3)
    assert newcomer in first.reason() and "±" in first.reason()


def test_a_new_bot_reaches_an_interval_of_100_within_a_few_rounds_of_the_ladder() -> None:
    """Joining a settled ladder of 12, picked every round until its interval is ±100 Elo wide at most:
    it plays every round (its interval is the widest), against close opponents. No schedule does it in
    fewer than 44 games: ±100 is 11.6 nats^-2 of information, the prior gives 0.5 and a game at most 1/4."""
    strengths = np.append(np.random.default_rng(0).normal(1500.0, 200.0, 12), 1600.0)
    names = bot_names(13)
    counts = play_league(strengths[:12], 100, np.random.default_rng(1))
    fairness, rng, games = Fairness(), random.Random(0), np.random.default_rng(2)
    rounds = 0
    while rounds < 100:
        rounds += 1
        result = pick(counts, dict.fromkeys(names, 2), fairness, rng)
        fairness = result.fairness
        assert names[12] in {bot for p in result.picks for bot in (p.a, p.b)}
        play(strengths, result.picks, counts, games)
        low, high = fit(counts).interval(names[12])
        if high - low <= 200.0:
            break
    assert rounds <= 50


def test_the_least_known_gap_is_measured_first() -> None:
    """Two pairs of close bots, each pair well measured inside (40 even games), the pairs linked only by a
    few lopsided games (9-1, which say little about how far apart they are): the first pick crosses the
    gap, between a close-rated pair across it."""
    counts: Counts = {}
    for a, b, wins, losses in (("a", "b", 20, 20), ("c", "d", 20, 20), ("a", "c", 9, 1), ("b", "d", 9, 1),
                               ("a", "d", 9, 1), ("b", "c", 9, 1)):
        counts[a, b] = PairCount(wins, 0, losses)
    first = pick(counts, dict.fromkeys("abcd", 2), Fairness(), random.Random(0), limit=1).picks[0]
    assert {first.a, first.b} not in ({"a", "b"}, {"c", "d"})
    assert first.why.information >= INFO_FLOOR and not first.why.known


def test_a_gap_known_to_be_wide_is_not_played_again() -> None:
    """The same pool, the pairs linked by 160 games won 39 in 40: each cross pair's result is known in
    advance (the favourite's expected score is above 0.95, and sure to be), so its game would teach
    less than the floor; the picks stay inside the pairs, and then stop with seats left: the four bots
    wait rather than play a known result."""
    counts: Counts = {}
    for a, b, wins, losses in (("a", "b", 20, 20), ("c", "d", 20, 20), ("a", "c", 39, 1), ("b", "d", 39, 1),
                               ("a", "d", 39, 1), ("b", "c", 39, 1)):
        counts[a, b] = PairCount(wins, 0, losses)
    rules = Rules(max_repeats=1, window=1)
    result = pick(counts, dict.fromkeys("abcd", 8), Fairness(), random.Random(0), rules)
    assert {frozenset((p.a, p.b)) for p in result.picks} == {frozenset("ab"), frozenset("cd")}
    assert all(p.why.rule == "information" and p.why.information >= INFO_FLOOR for p in result.picks)
    assert sorted(result.waiting) == ["a", "b", "c", "d"]  # seats for three more matches each, left free


def test_a_newcomer_meets_a_bot_of_its_rating_first() -> None:
    """Eleven bots from 1200 to 1800, well measured; a newcomer is rated 1500 until it plays: its first
    opponent is one of the middle (the closer the ratings, the more a game tells)."""
    strengths = np.linspace(1200.0, 1800.0, 11)
    counts = play_league(strengths, 200, np.random.default_rng(4))
    first = pick(counts, {**dict.fromkeys(bot_names(11), 2), "new": 2}, Fairness(), random.Random(0),
                 limit=1).picks[0]
    other = first.b if first.a == "new" else first.a
    assert abs(fit(counts).rating(other) - 1500.0) < 100.0
    assert 0.4 < first.why.expected_a < 0.6


def test_the_second_pick_of_a_call_knows_the_first_is_coming() -> None:
    """A newcomer with a bot's seats for three matches: the first pick narrows its interval, so the
    second and third, though they may take it again, are each worth less than the first."""
    _, counts = settled(8, 60)
    result = pick(counts, {**dict.fromkeys(bot_names(8), 2), "bot9999": 6}, Fairness(), random.Random(0))
    gains = [p.why.narrows for p in result.picks if "bot9999" in (p.a, p.b)]
    assert len(gains) == 3 and gains[0] > gains[1] > gains[2] > 0


# ------------------------------------------------------------------ determinism, reasons, bounds
def test_the_picks_are_the_same_for_the_same_seed_and_ties_are_broken_by_it() -> None:
    _, counts = settled(12, 40)
    free = dict.fromkeys(bot_names(12), 4)

    def picks(seed: int, counts: Counts) -> list[tuple[str, str]]:
        return [(p.a, p.b) for p in pick(counts, free, Fairness(), random.Random(seed)).picks]

    assert picks(7, counts) == picks(7, counts)
    # no games at all: every pair is worth the same, and the seed chooses
    assert picks(7, {}) == picks(7, {})
    assert len({tuple(picks(seed, {})) for seed in range(10)}) > 1


def test_every_pick_gives_its_reason() -> None:
    _, counts = settled(8, 40)
    names = bot_names(8)
    result = pick(counts, dict.fromkeys(names, 2), Fairness({names[7]: 39}), random.Random(0))
    for p in result.picks:
        text = p.reason()
        assert p.a in text and p.b in text and "narrows" in text
        assert p.why.narrows > 0 and 0.0 < p.why.expected_a < 1.0
    forced = result.picks[0]
    assert forced.why.rule == "waited" and forced.a == names[7] and forced.why.waited == 39
    assert "waited 39 picks" in forced.reason()
    assert {p.why.rule for p in result.picks[1:]} == {"information"}


def test_rules_below_one_are_refused() -> None:
    for bad in ({"max_wait": 0}, {"window": 0}, {"max_repeats": 0}, {"seats_per_match": 0}):
        with pytest.raises(ValueError, match="at least 1"):
            Rules(**bad)


def test_the_repeat_window_leaves_every_bot_a_partner_to_learn_from() -> None:
    """A bot's window holds fewer than ``max_repeats`` games of each partner it can learn from (in play,
    above the floor), else it would never play again (its window slides when it plays): four new bots,
    three partners each: 3 x 3 - 1 = 8; two: 2; thirty: the rule's 10. In a pool where a bot's only
    partner above the floor is one, its window is 2: it plays that one twice in a row at most, then waits
    for another or for its wait to force a game; the bots in play but busy (``present``) count too."""
    def windows(bots: Iterable[str], present: Iterable[str] = ()) -> set[int]:
        result = pick({}, dict.fromkeys(bots, 2), Fairness(), random.Random(0), limit=1,
                      present=list(present))
        return set(result.windows.values())

    assert windows("abcd") == {8}
    assert windows("ab") == {2}
    assert windows(bot_names(30)) == {10}
    assert windows("ab", present="abcd") == {8}
    counts: Counts = {("a", "b"): PairCount(20, 0, 20), ("a", "c"): PairCount(39, 0, 1),
                      ("b", "c"): PairCount(39, 0, 1)}
    narrowed = pick(counts, dict.fromkeys("abc", 2), Fairness(), random.Random(0), limit=1).windows
    assert narrowed == {"a": 2, "b": 2, "c": 5}  # c has no partner above the floor: both count (3 x 2 - 1)
