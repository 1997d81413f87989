"""Result summaries: kept with each result, once, in its tournament's log and its bots' recent matches.

Both backends run every test. A tournament advances from the summaries alone:
a store that refuses ``results()`` still plays Swiss, knockout and partners
tournaments (duplicate ones too, with real records) to the same standings as
the results give, reading each summary once. A mixed match's summary names the
bot at each seat and goes to each of its bots' recent matches, once a bot, in
the same step that queues it to be rated.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Sequence
from typing import Any

import pytest

from arena.queue import broker as broker_module
from arena.queue.broker import BOT_MATCHES_KEPT, Broker
from arena.queue.embedded import SCHEMA_VERSION, EmbeddedBroker
from arena.tournament import (
    MatchJob,
    MatchResult,
    Tournament,
    Tournaments,
    TournamentSpec,
    TournamentState,
)
from arena.tournament.summary import ResultSummary
from tests.factories import result_of_job, tournament_spec
from tests.queue.conftest import Store
from tests.queue.redis_counts import redis_commands
from tests.tournament.helpers import play_job

WON = (1001, 640)


def game(tid: str, n: int, team0: str = "alpha", team1: str = "beta", winner: int | None = 0) -> MatchResult:
    job = MatchJob(f"{tid}-r1-{n}", tid, team0, team1, "classic", f"s{n}")
    totals = WON if winner == 0 else WON[::-1] if winner == 1 else (820, 820)
    return result_of_job(job, totals, winner)


class NoRecords:
    """A store that fails if a tournament reads whole results, and counts the summaries it reads."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.summaries_read = 0
        self.starts: list[int] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.broker, name)

    def results(self, tournament_id: str) -> list[MatchResult]:
        raise AssertionError(f"results({tournament_id!r}) read while advancing or reading progress")

    def summaries(self, tournament_id: str, start: int = 0) -> list[ResultSummary]:
        got = self.broker.summaries(tournament_id, start)
        self.starts.append(start)
        self.summaries_read += len(got)
        return got


# ------------------------------------------------------------ kept once, with the result
def test_a_result_written_twice_is_summarized_once(broker: Broker) -> None:
    broker.put_tournament(tournament_spec("t1"))
    r = game("t1", 0)
    assert broker.write_result(r) is True
    assert broker.write_result(r) is False
    (s,) = broker.summaries("t1")
    assert s == ResultSummary.of_result(r, deals=False)
    assert (s.team0, s.team1, s.totals, s.winner, s.score0()) == ("alpha", "beta", WON, 0, 1.0)
    assert [m.match_id for m in broker.bot_matches("alpha", 20)] == [r.match_id]
    assert [m.match_id for m in broker.bot_matches("beta", 20)] == [r.match_id]


def test_summaries_come_in_the_order_written_from_a_cursor(broker: Broker) -> None:
    written = [game("t1", n) for n in (5, 1, 3)]
    for r in written:
        broker.write_result(r)
    assert [s.match_id for s in broker.summaries("t1")] == [r.match_id for r in written]
    assert [s.match_id for s in broker.summaries("t1", 2)] == [written[2].match_id]
    assert broker.summaries("t1", 3) == [] and broker.summaries("t1", 99) == []
    assert broker.summaries("nobody") == []


def test_bad_reads_are_refused_or_empty_and_change_nothing(broker: Broker) -> None:
    broker.write_result(game("t1", 0))
    with pytest.raises(ValueError, match="start must be 0 or more"):
        broker.summaries("t1", -1)
    assert broker.bot_matches("alpha", 0) == [] and broker.bot_matches("alpha", -5) == []
    assert broker.bot_matches("nobody", 20) == []
    assert len(broker.summaries("t1")) == 1 and len(broker.bot_matches("alpha", 20)) == 1


def test_a_mirror_match_is_listed_once_for_its_bot(broker: Broker) -> None:
    broker.write_result(game("t1", 0, "alpha", "alpha"))
    assert len(broker.bot_matches("alpha", 20)) == 1


def test_a_bots_recent_matches_are_its_newest_first_and_bounded(
    broker: Broker, monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept = 5
    for module in ("arena.queue.embedded", "arena.queue.redis_broker"):
        monkeypatch.setattr(f"{module}.BOT_MATCHES_KEPT", kept, raising=False)
    written = [game(f"t{n % 3}", n, "alpha", f"opp{n}") for n in range(kept + 4)]
    for r in written:
        broker.write_result(r)
    newest = [r.match_id for r in reversed(written)]
    assert [m.match_id for m in broker.bot_matches("alpha", 100)] == newest[:kept]
    assert [m.match_id for m in broker.bot_matches("alpha", 2)] == newest[:2]
    assert [m.match_id for m in broker.bot_matches("opp0", 100)] == [written[0].match_id]
    assert BOT_MATCHES_KEPT >= 100  # what a page lists (20) is always there



def test_the_summary_is_written_in_the_results_own_atomic_step(store: Store) -> None:
    """Embedded: a failure while keeping the summary leaves no result either (one transaction).
    Redis: writing a result is one script call, and that script writes the summary."""
    broker = store.open()
    broker.put_tournament(tournament_spec("t1"))
    broker.write_result(game("t1", 0))  # the spec is read once: later writes are the step alone
    if store.kind == "embedded":
        with sqlite3.connect(store.path) as db:
            db.execute("CREATE TRIGGER no_index BEFORE INSERT ON bot_matches"
                       " BEGIN SELECT RAISE(ABORT, 'the disk is full'); END")
        with pytest.raises(broker_module.BrokerError, match="the disk is full"):
            broker.write_result(game("t1", 1))
        assert broker.get_result("t1-r1-1") is None and len(broker.summaries("t1")) == 1
        assert broker.result_counts(["t1"]) == {"t1": 1}
        return
    from arena.queue.redis_broker import RedisBroker
    from arena.queue.redis_scripts import LUA_WRITE_RESULT

    assert isinstance(broker, RedisBroker)
    with redis_commands(broker) as commands:
        broker.write_result(game("t1", 1))
    assert commands == ["EVALSHA"]
    assert "RPUSH', KEYS[5]" in LUA_WRITE_RESULT and "LPUSH', KEYS[i]" in LUA_WRITE_RESULT  # i = 6..9
    assert [s.match_id for s in broker.summaries("t1")] == ["t1-r1-0", "t1-r1-1"]


PARTNERS = ("ann", "bob", "cat", "dan", "eve")


def mixed_game(tid: str, n: int, seats: tuple[str, str, str, str], winner: int | None = 0) -> MatchResult:
    job = MatchJob.seated(f"{tid}-r1-{n}", tid, seats, ruleset="classic", seed=f"s{n}")
    totals = WON if winner == 0 else WON[::-1] if winner == 1 else (820, 820)
    return result_of_job(job, totals, winner)


def test_a_mixed_result_is_summarized_with_its_seats_for_each_of_its_bots_once(broker: Broker) -> None:
    broker.put_tournament(TournamentSpec("m", "partners", PARTNERS, seed="fixed"))
    first = mixed_game("m", 0, ("ann", "bob", "cat", "dan"))
    assert broker.write_result(first) is True
    assert broker.write_result(first) is False
    (s,) = broker.summaries("m")
    assert s == ResultSummary.of_result(first, deals=False)
    assert (s.team0, s.team1, s.is_mixed) == ("ann+cat", "bob+dan", True)
    assert s.seats == ("ann", "bob", "cat", "dan")
    for bot in ("ann", "bob", "cat", "dan"):
        assert [m.match_id for m in broker.bot_matches(bot, 20)] == ["m-r1-0"], bot
    assert broker.bot_matches("ann+cat", 20) == [] and broker.bot_matches("eve", 20) == []
    # a bot at two seats of a side: its list has the match once
    second = mixed_game("m", 1, ("ann", "bob", "ann", "eve"), winner=1)
    assert broker.write_result(second) is True
    assert broker.summaries("m", 1)[0].seat_bots == ("ann", "bob", "ann", "eve")
    assert [m.match_id for m in broker.bot_matches("ann", 20)] == ["m-r1-1", "m-r1-0"]
    assert [m.match_id for m in broker.bot_matches("bob", 20)] == ["m-r1-1", "m-r1-0"]
    assert [m.match_id for m in broker.bot_matches("eve", 20)] == ["m-r1-1"]
    assert [m.match_id for m in broker.bot_matches("cat", 20)] == ["m-r1-0"]
    # the same step queued both games to be rated, in each of the tournament's pools
    pools = broker_module.rating_plan(first, broker._spec("m")).pools
    assert pools and all(broker.mixed_pending(pool) == 2 for pool in pools)


def test_a_mixed_result_s_summaries_and_rating_queue_are_one_script_call(store: Store) -> None:
    broker = store.open()
    broker.put_tournament(TournamentSpec("m", "partners", PARTNERS, seed="fixed"))  # rated: two pools
    broker.write_result(mixed_game("m", 0, ("ann", "bob", "cat", "dan")))  # the spec read once
    if store.kind == "embedded":
        with sqlite3.connect(store.path) as db:
            db.execute("CREATE TRIGGER no_queue BEFORE INSERT ON mixed_queue"
                       " BEGIN SELECT RAISE(ABORT, 'the disk is full'); END")
        with pytest.raises(broker_module.BrokerError, match="the disk is full"):
            broker.write_result(mixed_game("m", 1, ("eve", "ann", "bob", "cat")))
        assert broker.get_result("m-r1-1") is None and len(broker.summaries("m")) == 1
        assert broker.bot_matches("eve", 20) == []
        return
    from arena.queue.redis_broker import RedisBroker

    assert isinstance(broker, RedisBroker)
    with redis_commands(broker) as commands:
        broker.write_result(mixed_game("m", 1, ("eve", "ann", "bob", "cat")))
    assert commands == ["EVALSHA"]
    assert [s.match_id for s in broker.summaries("m")] == ["m-r1-0", "m-r1-1"]
    assert [m.match_id for m in broker.bot_matches("eve", 20)] == ["m-r1-1"]
    written = mixed_game("m", 1, ("eve", "ann", "bob", "cat"))
    pools = broker_module.rating_plan(written, broker._spec("m")).pools
    assert len(pools) == 2 and all(broker.mixed_pending(pool) == 2 for pool in pools)


def test_a_one_bot_side_game_keeps_its_pools_keys_after_the_recent_matches(broker: Broker) -> None:
    """The script's pool keys come after the four recent-matches keys: a game of one bot a side
    still counts in each of its pools, and queues nothing to rate."""
    broker.put_tournament(tournament_spec("t1", unrated_reason=""))
    broker.write_result(game("t1", 0))
    pools = broker_module.rating_plan(game("t1", 0), broker._spec("t1")).pools
    assert len(pools) == 2
    for pool in pools:
        assert set(broker.pool_ratings(pool)) == {"alpha", "beta"}
        assert broker.mixed_pending(pool) == 0


# ------------------------------------------------------------ tournaments advance from them
def drive(store: Any, spec: TournamentSpec, decide: Any, limit: int = 200) -> Tournaments:
    """Play a stored tournament to its end as the nodes do: claim, play, write, ack, advance."""
    tours = Tournaments(store)
    tours.create(spec)
    broker: Broker = store.broker if isinstance(store, NoRecords) else store
    for _ in range(limit):
        claims = broker.claim("n1", 50, 30.0)
        if not claims:
            found = broker.get_tournament(spec.tournament_id)
            assert found is not None
            if found[1] is TournamentState.FINISHED:
                return tours
            tours.advance(spec.tournament_id)
            continue
        for c in claims:
            broker.write_result(decide(c.job))
            broker.ack(c)
            tours.advance(spec.tournament_id)
    raise AssertionError("the tournament did not finish")


def seeded_winner(seed: int) -> Any:
    rng = random.Random(seed)

    def decide(job: MatchJob) -> MatchResult:
        w = rng.choice([0, 1, None])
        totals = WON if w == 0 else WON[::-1] if w == 1 else (800, 800)
        return result_of_job(job, totals, w)
    return decide


def standings_of(results: Sequence[MatchResult], spec: TournamentSpec) -> Any:
    return Tournament(spec).standings(results)


@pytest.mark.parametrize("fmt", ["swiss", "knockout"])
def test_swiss_and_knockout_advance_from_summaries_to_the_standings_of_the_results(
    broker: Broker, fmt: str,
) -> None:
    bots = tuple(f"b{i}" for i in range(7))
    spec = TournamentSpec(tournament_id=f"{fmt}-1", format=fmt, bots=bots,  # type: ignore[arg-type]
                          rounds=3 if fmt == "swiss" else None, seed="fixed")
    store = NoRecords(broker)
    tours = drive(store, spec, seeded_winner(3))
    progress = tours.progress(spec.tournament_id)
    results = broker.results(spec.tournament_id)
    assert progress.state is TournamentState.FINISHED
    assert progress.standings == standings_of(results, spec)  # what re-reading every result gave
    assert progress.matches_done == len(results) == progress.matches_scheduled
    assert progress.finished == tuple(sorted(r.match_id for r in results))
    # each summary was read once, each read starting where the last one ended
    assert store.summaries_read == len(results)
    assert store.starts == sorted(store.starts)


def test_a_duplicate_swiss_with_real_records_advances_from_summaries(broker: Broker) -> None:
    spec = TournamentSpec(tournament_id="dup", format="swiss", bots=("A", "B", "C", "D"), rounds=2,
                          deals=2, duplicate="mirror", seed="fixed")
    rng = random.Random(4)
    kinds = {"A": "heuristic", "B": "random", "C": "heuristic", "D": "random"}
    store = NoRecords(broker)
    tours = drive(store, spec, lambda job: play_job(job, kinds, rng))
    results = broker.results("dup")
    expected = Tournament(spec)
    assert tours.progress("dup").standings == expected.standings(results)
    summaries = broker.summaries("dup")
    assert all(s.deal_diff is not None for s in summaries)  # worked out once, at write time
    assert [g.difference for g in tours.tournament(spec).games(summaries)] == [
        g.difference for g in expected.games(results)]


def test_sprt_advances_from_summaries(broker: Broker) -> None:
    spec = TournamentSpec.from_dict({"tournament_id": "s", "format": "sprt", "bots": ["new", "old"],
                                     "deals": 4, "sprt": {"elo0": 0, "elo1": 100, "batch_pairs": 4,
                                                          "max_pairs": 40}})
    rng = random.Random(8)

    def decide(job: MatchJob) -> MatchResult:
        new_wins = rng.random() < 0.75
        w = (0 if job.team0 == "new" else 1) if new_wins else (1 if job.team0 == "new" else 0)
        return result_of_job(job, WON if w == 0 else WON[::-1], w)

    tours = drive(NoRecords(broker), spec, decide)
    progress = tours.progress("s")
    expected = Tournament(spec).sprt_state(broker.results("s"))
    assert progress.sprt == expected and progress.state is TournamentState.FINISHED



@pytest.mark.parametrize("duplicate", [False, True])
def test_a_partners_tournament_advances_from_summaries_to_per_bot_standings(
    broker: Broker, duplicate: bool,
) -> None:
    spec = TournamentSpec(tournament_id="p", format="partners", bots=PARTNERS, rounds=4, seed="fixed",
                          deals=2 if duplicate else None, duplicate="mirror" if duplicate else "")
    rng = random.Random(6)
    kinds = {"ann": "heuristic", "bob": "random", "cat": "random", "dan": "heuristic", "eve": "random"}
    decide = (lambda job: play_job(job, kinds, rng)) if duplicate else seeded_winner(5)
    store = NoRecords(broker)
    tours = drive(store, spec, decide)
    progress = tours.progress("p")
    results = broker.results("p")
    expected = Tournament(spec)
    assert progress.state is TournamentState.FINISHED
    assert all(r.is_mixed for r in results)
    assert progress.standings == expected.standings(results)
    assert {s.bot for s in progress.standings} == set(PARTNERS)
    assert sum(s.played for s in progress.standings) == 4 * 4  # one table a round, four bots
    # the crosstable's games between bots, and the pairings' games, as the results give them
    assert list(progress.bot_games) == expected.bot_games(results)
    assert list(progress.games) == expected.games(results)
    assert all("+" not in g.a + g.b for g in progress.bot_games)
    assert progress.matches_done == len(results) == progress.matches_scheduled == 4 * (2 if duplicate else 1)
    assert store.summaries_read == len(results) and store.starts == sorted(store.starts)
    assert all(s.is_mixed and s.seat_bots == r.seat_bots
               for s, r in zip(sorted(broker.summaries("p"), key=lambda s: s.match_id), results, strict=True))
    if duplicate:
        assert all(g.difference is not None for g in progress.games)


# ------------------------------------------------------------ stores of an older version
def forget_summaries(store: Store) -> None:
    """Make the store look as an older version left it: results, and no summaries."""
    if store.kind == "embedded":
        with sqlite3.connect(store.path) as db:
            db.execute("DELETE FROM summaries")
            db.execute("DELETE FROM bot_matches")
            db.execute("PRAGMA user_version = 0")
        return
    import redis

    from arena.queue.keys import Keys

    client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    try:
        keys = Keys(store.prefix)
        own = [*client.scan_iter(match=keys.summaries("*")), *client.scan_iter(match=keys.bot_matches("*"))]
        assert own
        client.delete(*own)
    finally:
        client.close()


def test_results_of_an_older_version_are_summarized_once(store: Store) -> None:
    broker = store.open()
    spec = TournamentSpec(tournament_id="old", format="swiss", bots=("A", "B", "C", "D"), rounds=2,
                          deals=2, duplicate="mirror", seed="fixed")
    rng = random.Random(5)
    kinds = {"A": "heuristic", "B": "random", "C": "random", "D": "heuristic"}
    drive(broker, spec, lambda job: play_job(job, kinds, rng))
    before = broker.summaries("old")
    standings = Tournaments(broker).progress("old").standings
    recent = broker.bot_matches("A", 20)
    broker.close()
    forget_summaries(store)

    again = store.open()  # embedded: summarized on opening; Redis: when the tournament is first read
    if store.kind == "embedded":
        with sqlite3.connect(store.path) as db:
            assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert Tournaments(again).progress("old").standings == standings
    by_id = {s.match_id: s for s in before}
    assert {s.match_id: s for s in again.summaries("old")} == by_id
    assert {m.match_id for m in again.bot_matches("A", 20)} == {m.match_id for m in recent}
    assert len(again.summaries("old")) == len(before)  # once: reading again adds nothing
    new = play_job(MatchJob("old-r9-0", "old", "A", "B", "classic", "x", deals=1), kinds, rng)
    again.write_result(new)
    assert again.summaries("old", len(before))[0].match_id == "old-r9-0"
    assert again.bot_matches("A", 1)[0].match_id == "old-r9-0"


def test_a_fresh_embedded_file_is_marked_current(tmp_path: Any) -> None:
    EmbeddedBroker(tmp_path / "q.sqlite3").close()
    with sqlite3.connect(tmp_path / "q.sqlite3") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_reader_that_forgot_a_tournament_reads_it_whole_again(
    broker: Broker, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("arena.tournament.advance.LOGS_KEPT", 1)
    store = NoRecords(broker)
    tours = Tournaments(store)
    broker.write_result(game("t1", 0))
    broker.write_result(game("t2", 0))
    assert [s.match_id for s in tours.summaries("t1")] == ["t1-r1-0"]
    assert [s.match_id for s in tours.summaries("t2")] == ["t2-r1-0"]  # t1 is forgotten
    broker.write_result(game("t1", 1))
    assert [s.match_id for s in tours.summaries("t1")] == ["t1-r1-0", "t1-r1-1"]
    assert [s.match_id for s in tours.summaries("t1")] == ["t1-r1-0", "t1-r1-1"]
    assert store.starts == [0, 0, 0, 2]


def test_a_starting_node_summarizes_an_older_stores_results_for_the_bots_pages(store: Store) -> None:
    broker = store.open()
    for t in ("a", "b"):
        broker.put_tournament(tournament_spec(t))
        broker.write_result(game(t, 0))
    broker.close()
    forget_summaries(store)
    again = store.open()
    assert again.complete_summaries() == (2 if store.kind == "redis" else 0)  # embedded: on opening
    assert again.complete_summaries() == 0  # once
    assert {m.match_id for m in again.bot_matches("alpha", 20)} == {"a-r1-0", "b-r1-0"}
    assert [s.match_id for s in again.summaries("b")] == ["b-r1-0"]


def test_mixed_results_of_an_older_version_are_summarized_with_their_seats(store: Store) -> None:
    """A store the mixed-partnership version left (mixed results and their to-rate queue, no
    summaries: on sqlite no summary tables and ``user_version`` 0) is summarized once, each mixed
    result for its four bots, and its unrated games stay queued."""
    broker = store.open()
    spec = TournamentSpec(tournament_id="mx", format="partners", bots=PARTNERS, rounds=3, seed="fixed")
    drive(broker, spec, seeded_winner(7))
    before = broker.summaries("mx")
    standings = Tournaments(broker).progress("mx").standings
    pool = f"tournament:{spec.tournament_id}"
    pending = broker.mixed_pending(pool)
    assert pending == 3
    broker.close()
    forget_summaries(store)
    if store.kind == "embedded":
        with sqlite3.connect(store.path) as db:  # as the older version made the file: no such tables
            db.execute("DROP TABLE summaries")
            db.execute("DROP TABLE bot_matches")

    again = store.open()
    if store.kind == "embedded":
        with sqlite3.connect(store.path) as db:
            assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert Tournaments(NoRecords(again)).progress("mx").standings == standings
    assert {s.match_id: s for s in again.summaries("mx")} == {s.match_id: s for s in before}
    assert all(s.is_mixed for s in again.summaries("mx"))
    for bot in PARTNERS:
        expect = {s.match_id for s in before if bot in s.seat_bots}
        assert {m.match_id for m in again.bot_matches(bot, 20)} == expect, bot
    assert again.mixed_pending(pool) == pending
    assert again.apply_mixed(pool) == pending and again.mixed_pending(pool) == 0


def test_a_file_of_the_summaries_version_gets_the_mixed_tables(tmp_path: Any) -> None:
    """A file the summaries version left (``user_version`` 1, no mixed tables) opens as it is and
    takes mixed results: the schema adds the tables, nothing is summarized again."""
    path = tmp_path / "q.sqlite3"
    broker = EmbeddedBroker(path)
    broker.put_tournament(tournament_spec("t1"))
    broker.write_result(game("t1", 0))
    broker.close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE mixed_queue")
        db.execute("DROP TABLE mixed_ratings")
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    again = EmbeddedBroker(path)
    assert [s.match_id for s in again.summaries("t1")] == ["t1-r1-0"]
    again.put_tournament(TournamentSpec("m", "partners", PARTNERS, seed="fixed"))
    assert again.write_result(mixed_game("m", 0, ("ann", "bob", "cat", "dan")))
    assert again.apply_mixed("tournament:m") == 1
    assert [m.match_id for m in again.bot_matches("dan", 20)] == ["m-r1-0"]
