"""A duplicate pair's and quartet's scores, as the store keeps them, and the history points."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from arena.ratings.online import Leg, Part, duplicate_score, history_points, quartet_scores
from arena.records import ResultReason
from arena.tournament import MatchJob
from arena.tournament.duplicate import pair_score
from arena.tournament.quartet import quartet_games
from arena.tournament.summary import ResultSummary
from tests.factories import result_of_job

legs = st.builds(Leg, st.integers(0, 3000), st.integers(0, 3000), st.sampled_from([0.0, 0.5, 1.0]),
                 st.booleans())


@given(legs, legs)
def test_the_pair_score_does_not_depend_on_which_leg_came_first(x: Leg, y: Leg) -> None:
    assert duplicate_score(x, y) == duplicate_score(y, x)


@given(legs)
def test_a_leg_is_kept_as_text_and_read_back(x: Leg) -> None:
    assert Leg.from_text(x.to_text()) == x


@given(st.integers(0, 3000), st.integers(0, 3000), st.integers(0, 3000), st.integers(0, 3000),
       st.sampled_from(["finished", "forfeit"]), st.sampled_from(["finished", "forfeit"]))
def test_the_store_scores_a_pair_as_the_tournament_does(
    a0: int, b0: int, a1: int, b1: int, reason0: str, reason1: str,
) -> None:
    """With the deal points summing to the totals, the store's rule is the standings' rule."""
    def winner(x: int, y: int) -> int | None:
        return 0 if x > y else 1 if y > x else None

    leg0 = result_of_job(MatchJob("d-r1-0-leg0", "d", "A", "B", "coinche", "s", deals=4), (a0, b0),
                         winner(a0, b0), reason=reason0)
    leg1 = result_of_job(MatchJob("d-r1-0-leg1", "d", "B", "A", "coinche", "s", deals=4), (b1, a1),
                         winner(b1, a1), reason=reason1)
    expected = pair_score(leg0, leg1, a0 + a1 - b0 - b1)
    got = duplicate_score(Leg(a0, b0, leg0.score0(), reason0 == "forfeit"),
                          Leg(a1, b1, 1.0 - leg1.score0(), reason1 == "forfeit"))
    assert got == expected


def test_history_ends_with_the_latest_point_once() -> None:
    assert history_points([(10, 1510.0)], (12, 1520.0)) == [(10, 1510.0), (12, 1520.0)]
    assert history_points([(10, 1510.0)], (10, 1510.0)) == [(10, 1510.0)]
    assert history_points([], None) == []


parts = st.builds(Part, st.just(""), st.just(""), st.integers(0, 3000), st.integers(0, 3000),
                  st.sampled_from([0.0, 0.5, 1.0]), st.booleans())


@given(st.lists(parts, min_size=4, max_size=4), st.booleans())
def test_the_store_scores_a_quartet_as_the_tournament_does(four: list[Part], scored: bool) -> None:
    """With the deal points summing to the totals, the store's rule is the standings' rule; a part
    is kept as text and read back."""
    names = [("P", "R"), ("Q", "S"), ("P", "S"), ("Q", "R")]
    tables = [Part(t0, t1, p.points0, p.points1, p.score0, p.forfeit)
              for (t0, t1), p in zip(names, four, strict=True)]
    assert [Part.from_text(p.to_text()) for p in tables] == tables
    summaries = [ResultSummary(
        match_id=f"q-r1-0-t{k}", tournament_id="q", team0=p.team0, team1=p.team1,
        totals=(p.points0, p.points1), winner=None if p.score0 == 0.5 else 0 if p.score0 == 1.0 else 1,
        reason=ResultReason.FORFEIT if p.forfeit else ResultReason.FINISHED, seed=f"s{k // 2}",
        deals_played=2, deal_diff=p.points0 - p.points1) for k, p in enumerate(tables)]
    expected = [(g.a, g.b, g.score_a) for g in quartet_games(1, 0, "PQRS", summaries, scored)]
    assert quartet_scores(tables, scored) == expected
