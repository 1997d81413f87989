"""A pool's ladder on both backends: its setting and opted-in bots stored for every node (and a restart),
each change announced by a notice, and its matches' results written once and rated in the pool."""

from __future__ import annotations

import pytest

from arena.node.ladder import NO_FIELD, LadderError, Ladders, LadderSetting, ladder_job
from arena.queue import LADDER_NOTICE, Broker, Notice, Write
from arena.queue.broker import LADDER_PICKS_KEPT
from arena.ratings import LADDER_PREFIX, ladder_id, ladder_pool, tournament_pool
from arena.tournament import TournamentError, TournamentSpec
from arena.tournament.spec import RESERVED_PREFIX
from tests.factories import result_of_job
from tests.queue.conftest import Store


def notices(broker: Broker, cursor: str) -> list[Notice]:
    return list(broker.notices(cursor, 0.5).notices)


def test_the_setting_is_stored_replaced_and_read_by_another_node_after_a_restart(store: Store) -> None:
    first = store.open()
    assert first.ladders() == {}
    first.put_ladder("coinche", LadderSetting("coinche", on=True, deals=8).to_json())
    first.put_ladder("classic", LadderSetting("classic", on=False, deals=4).to_json())
    first.put_ladder("coinche", LadderSetting("coinche", on=True, deals=6).to_json())  # replaced
    first.close()
    other = Ladders(store.open())  # another node, or the same one restarted
    assert other.settings() == {"coinche": LadderSetting("coinche", on=True, deals=6),
                                "classic": LadderSetting("classic", on=False, deals=4)}
    assert other.setting("coinche").deals == 6
    assert other.setting("club") == LadderSetting("club")  # none stored: off, at the defaults


def test_bots_opt_in_and_out_per_pool(broker: Broker) -> None:
    assert broker.ladder_add("coinche", "bravo") is True
    assert broker.ladder_add("coinche", "alpha") is True
    assert broker.ladder_add("coinche", "alpha") is False  # in already
    assert broker.ladder_add("classic", "charlie") is True
    assert broker.ladder_bots("coinche") == ["alpha", "bravo"]
    assert broker.ladder_bots("classic") == ["charlie"]
    assert broker.ladder_remove("coinche", "alpha") is True
    assert broker.ladder_remove("coinche", "alpha") is False  # out already
    assert broker.ladder_remove("classic", "alpha") is False  # never in that pool
    assert broker.ladder_bots("coinche") == ["bravo"]
    assert broker.ladder_bots("club") == []


def test_a_bot_joins_by_itself_unless_an_admin_removed_it_and_an_admins_add_clears_it(store: Store) -> None:
    broker = store.open()
    assert broker.ladder_join("coinche", "alpha") is True
    assert broker.ladder_join("coinche", "alpha") is False  # in already
    assert broker.ladder_remove("coinche", "alpha") is True  # the admin takes it out...
    assert broker.ladder_join("coinche", "alpha") is False  # ...and its own asking does not put it back
    assert broker.ladder_remove("coinche", "bravo") is False  # never in: marked all the same
    assert broker.ladder_join("coinche", "bravo") is False
    assert broker.ladder_join("classic", "alpha") is True  # the mark is the pool's only
    assert broker.ladder_bots("coinche") == []
    again = store.open()  # the mark is stored: another node, or a restart, keeps it
    assert again.ladder_join("coinche", "alpha") is False
    assert again.ladder_add("coinche", "alpha") is True  # the admin's add clears the mark
    assert again.ladder_remove("coinche", "alpha") is True
    assert again.ladder_add("coinche", "alpha") is True
    assert again.ladder_join("coinche", "bravo") is False
    assert again.ladder_bots("coinche") == ["alpha"]
    assert again.ladder_bots("classic") == ["alpha"]


def test_the_latest_picks_are_kept_newest_first_and_bounded_per_pool(broker: Broker) -> None:
    assert broker.ladder_picks("coinche") == []
    broker.note_ladder_picks("coinche", [f"pick-{i}" for i in range(3)])
    broker.note_ladder_picks("classic", ["other"])
    assert broker.ladder_picks("coinche") == ["pick-2", "pick-1", "pick-0"]
    broker.note_ladder_picks("coinche", [f"pick-{i}" for i in range(3, LADDER_PICKS_KEPT + 5)])
    kept = broker.ladder_picks("coinche")
    assert len(kept) == LADDER_PICKS_KEPT and kept[0] == f"pick-{LADDER_PICKS_KEPT + 4}"
    assert kept[-1] == "pick-5" and broker.ladder_picks("classic") == ["other"]


def test_start_stop_add_remove_announce_their_pool(broker: Broker) -> None:
    ladders = Ladders(broker)
    cursor = broker.notice_cursor()
    assert ladders.start("coinche", deals=8).on
    assert ladders.add("coinche", "alpha") and not ladders.add("coinche", "alpha")
    assert ladders.remove("coinche", "alpha")
    stopped = ladders.stop("coinche")
    assert not stopped.on and stopped.deals == 8  # the format is kept for the next start
    assert notices(broker, cursor) == [Notice(LADDER_NOTICE, "coinche")] * 4  # the no-op add: none


@pytest.mark.parametrize(("pool", "deals", "duplicate", "says"), [
    ("coinche+custom", 8, "", "ruleset preset"),
    ("tournament:t1", 8, "", "ruleset preset"),
    ("coinche", 0, "", "deals must be"),
    ("coinche", True, "", "deals must be"),
    ("coinche", 8, "mirror", NO_FIELD),
    ("coinche", 8, "field", NO_FIELD),
])
def test_a_ladder_that_cannot_be_is_refused_and_nothing_stored(
        broker: Broker, pool: str, deals: int, duplicate: str, says: str) -> None:
    with pytest.raises(LadderError, match=says.replace("(", r"\(").replace(")", r"\)")):
        Ladders(broker).start(pool, deals=deals, duplicate=duplicate)
    assert broker.ladders() == {}


def test_a_setting_stored_unreadable_is_named_and_skipped(broker: Broker) -> None:
    broker.put_ladder("coinche", "{not json")
    broker.put_ladder("classic", LadderSetting("classic", on=True).to_json())
    assert list(Ladders(broker).settings()) == ["classic"]
    with pytest.raises(LadderError, match="stored unreadable"):
        Ladders(broker).setting("coinche")


def test_a_ladder_result_is_rated_in_its_pool_once(broker: Broker) -> None:
    setting = LadderSetting("coinche", on=True, deals=4)
    job = ladder_job(setting, "alpha", "bravo", "n1")
    assert job.tournament_id == "ladder:coinche" and job.ruleset == "coinche" and job.deals == 4
    assert len(job.seed) == 64 and job.seed != ladder_job(setting, "alpha", "bravo").seed  # fresh
    broker.enqueue([job])
    assert broker.pending_count(ladder_id("coinche")) == 1
    [claim] = broker.claim("n1", 1, 30.0, {"alpha": 2, "bravo": 2})
    result = result_of_job(job, (900, 400), 0)
    [done] = broker.finish([(claim, result)])
    assert done.write is Write.WRITTEN
    assert broker.write_result(result) is False  # replayed elsewhere: counted once
    ratings = broker.pool_ratings("coinche")
    assert {bot: games for bot, (_, games) in ratings.items()} == {"alpha": 1, "bravo": 1}
    assert ratings["alpha"][0] > ratings["bravo"][0]
    assert "coinche" in broker.pools() and tournament_pool(job.tournament_id) not in broker.pools()
    assert broker.pending_count(ladder_id("coinche")) == 0
    assert broker.get_tournament(job.tournament_id) is None  # no tournament holds it


def test_no_tournament_can_take_a_ladders_id() -> None:
    assert RESERVED_PREFIX == LADDER_PREFIX  # the two layers' copies of the prefix agree
    assert ladder_pool(ladder_id("coinche")) == "coinche" and ladder_pool("coinche") is None
    assert ladder_pool(LADDER_PREFIX) is None
    with pytest.raises(TournamentError, match="the ladders'"):
        TournamentSpec(tournament_id="ladder:coinche", format="round-robin", bots=("a", "b"))


def test_a_ladder_s_batch_is_enqueued_only_while_the_setting_it_read_is_stored(broker: Broker) -> None:
    """A node's ladder reads the setting, picks, then enqueues: a stop (or a change) in between, from
    any node, makes that batch enqueue nothing, so that nothing is enqueued once ``ladder stop``
    returned (a look under way once put one more match in after it)."""
    ladders = Ladders(broker)
    read = ladders.start("coinche", deals=2)
    stored = ladders.setting("coinche")
    assert stored.stored == broker.ladders()["coinche"] and stored == read
    job = ladder_job(stored, "alpha", "bravo")
    assert broker.enqueue_ladder("coinche", stored.stored, [job]) is True
    assert broker.pending_count(ladder_id("coinche")) == 1
    ladders.stop("coinche")  # meanwhile, on another node
    late = ladder_job(stored, "alpha", "bravo")
    assert broker.enqueue_ladder("coinche", stored.stored, [late]) is False
    ladders.start("coinche", deals=4)  # on again, but changed: still not the setting that batch read
    assert broker.enqueue_ladder("coinche", stored.stored, [late]) is False
    assert broker.enqueue_ladder("classic", stored.stored, [late]) is False  # no ladder in that pool
    assert broker.pending_count(ladder_id("coinche")) == 1
    assert broker.enqueue_ladder("coinche", ladders.setting("coinche").stored, [late]) is True
    assert broker.pending_count(ladder_id("coinche")) == 2
