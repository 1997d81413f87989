"""A tournament's schedule, rebuilt from its spec and the results so far.

Nothing is stored but the spec and the results: every call replays the
schedule from them, so any node computes the same next jobs, the same
standings and the same SPRT decision. What it reads of each result is its
:class:`~arena.tournament.summary.ResultSummary` (teams, totals, winner, a
duplicate leg's deal difference, who sat at each seat of a mixed match), which
the store keeps with the result;
a :class:`MatchResult` given instead is summarized here, once per instance.

Identifiers (all deterministic, so regenerating a round gives the same jobs):

- a pairing of round ``r`` (batch ``b`` for sprt), board ``i``:
  match id ``{tid}-r{r}-{i}``; in mirror duplicate play its two legs are
  ``{tid}-r{r}-{i}-leg0`` (A at team 0) and ``-leg1`` (A at team 1); in field
  duplicate play, quartet ``i`` of round ``r`` has the four tables
  ``{tid}-r{r}-{i}-t0`` .. ``-t3`` (``-f0`` .. ``-f3`` when its last two
  sides only fill the tables: :mod:`arena.tournament.tables`);
- its seed ``derive_seed(spec.seed, "r{r}-{i}")`` (HMAC-SHA256 of the
  pairing's place under the tournament's secret, itself made by the node from
  its own secret and the tournament id), shared by both legs of a mirror pair;
  a quartet's board sets ``"r{r}-{i}-s0"`` (tables 0 and 1) and ``-s1``
  (tables 2 and 3): a seed made public tells nothing of the others, and a
  tournament given the same seed deals the same decks;
- the idempotency key of what to enqueue: ``{tid}/all`` (round-robin,
  gauntlet, partners), ``{tid}/round/{r}`` (Swiss, knockout), ``{tid}/batch/{b}``
  (sprt). Rounds and batches count from 1. A stage of mirror pairs is enqueued
  in two halves: every pair's leg 0 under the stage's key, then, once each of
  them has a result, every leg 1 under ``{key}/leg1`` (:meth:`Tournament.jobs_for`).

The SPRT reads each mirror pair's match results in pair order; a pair with a
leg whose every deal was thrown in (no card played) is set aside, no evidence
(:mod:`arena.tournament.sprt`).

Results are looked up by match id; a result listed twice counts once (the
first), results of other tournaments or of matches not scheduled are ignored,
and a result whose teams (or bots at each seat) differ from its job's raises
:class:`TournamentError`.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.engine.dealing import derive_seed
from arena.records import side_name
from arena.tournament.duplicate import check_legs, pair_score
from arena.tournament.jobs import MatchJob, MatchResult
from arena.tournament.pairing import circle_rounds, first_round, swiss_pairings
from arena.tournament.partners import Table, partner_rounds
from arena.tournament.quartet import (
    Quartet,
    Side,
    board_set,
    quartet_games,
    round_quartets,
    round_robin_quartets,
    seatings,
)
from arena.tournament.spec import TournamentError, TournamentSpec
from arena.tournament.sprt import SequentialTest, SprtState, run_sprt
from arena.tournament.standings import Game, Order, Standing, compute_standings
from arena.tournament.summary import ResultSummary
from arena.tournament.tables import duplicate_legs, pairing_id, quartet_tables, seed_label

#: the last part of the idempotency key of a mirror stage's second half (its pairs' leg 1)
SECOND_LEGS = "leg1"

__all__ = ["SECOND_LEGS", "Overview", "Pairing", "Stage", "Tournament", "duplicate_legs", "pairing_id",
           "seed_label"]


@dataclass(frozen=True)
class Pairing:
    """Two bots on one board: one match, or the two legs of a mirror duplicate pair; or a quartet
    of field duplicate (:mod:`arena.tournament.quartet`): four tables, ``a`` and ``b`` its sides P
    and Q, ``sides`` all four (P, Q, R, S), and ``scored`` whether R vs S is a game too.

    In the partners format, two sides of two different bots each: ``a`` and
    ``b`` are the sides' names (``"north+south"``) and ``table`` the bots at
    seats 0..3 of the first leg.
    """

    round: int
    index: int
    a: str  # team 0 of the first (or only) leg
    b: str
    jobs: tuple[MatchJob, ...]
    table: Table | None = None
    sides: tuple[Side, Side, Side, Side] | None = None
    scored: bool = True

    @property
    def side_names(self) -> tuple[str, str, str, str]:
        """A quartet's sides P, Q, R, S by name (a side of two bots: ``"north+south"``)."""
        assert self.sides is not None
        p, q, r, s = (side_name(*side) for side in self.sides)
        return p, q, r, s

    @property
    def compared(self) -> list[tuple[str, str]]:
        """The pairs of sides whose games it scores: (a, b), and a quartet's (R, S) when scored."""
        if self.sides is None:
            return [(self.a, self.b)]
        p, q, r, s = self.side_names
        return [(p, q), (r, s)] if self.scored else [(p, q)]


@dataclass(frozen=True)
class Stage:
    """What is enqueued at once under one idempotency key (``number`` 0 for ``/all``)."""

    number: int
    key: str
    pairings: tuple[Pairing, ...]
    byes: tuple[str, ...] = ()

    @property
    def jobs(self) -> list[MatchJob]:
        return [j for p in self.pairings for j in p.jobs]


Legs = tuple[ResultSummary, ...]
#: what the schedule is rebuilt from: the results so far, or their summaries (the store keeps both)
Results = Sequence[MatchResult | ResultSummary]


@dataclass(frozen=True)
class Overview:
    """A tournament as its results leave it (see :meth:`Tournament.overview`)."""

    #: every stage scheduled so far, the current one last
    stages: list[Stage]
    #: every finished pairing, in schedule order
    games: list[Game]
    #: the same as games between bots: ``games``, except that a partners game is one per bot of
    #: a side (:meth:`Tournament.bot_games`)
    bot_games: list[Game]
    standings: list[Standing]
    #: the SPRT (sprt format only)
    sprt: SprtState | None
    finished: bool


@dataclass
class _Progress:
    stages: list[Stage] = field(default_factory=list)
    #: the finished pairings and their results (one, or two legs), in schedule order
    done: list[tuple[Pairing, Legs]] = field(default_factory=list)
    finished: bool = False
    sprt: SprtState | None = None
    reached: dict[str, int] = field(default_factory=dict)  # knockout
    #: the results of the tournament's matches, by match id
    results: dict[str, ResultSummary] = field(default_factory=dict)


class Tournament:
    """The schedule, standings and SPRT of one :class:`TournamentSpec`.

    Scheduling round-robin, gauntlet and sprt needs only which results are
    in; Swiss and knockout rounds, standings and games also need each
    duplicate pair's point difference, which a summary carries. Given whole
    results, an instance summarizes each once (a duplicate leg's replays its
    record, about 0.75 ms a deal) and keeps the summary by match id.
    """

    def __init__(self, spec: TournamentSpec) -> None:
        self.spec = spec
        self._ruleset = spec.ruleset.to_spec()
        # the summaries of results given whole, by match id (a pure function of the result)
        self._summaries: dict[str, tuple[MatchResult, ResultSummary]] = {}
        # the pairings made, by (round, index, a, b): as many as the matches scheduled
        self._pairings: dict[tuple[int, int, str, str], Pairing] = {}
        # the quartets made, by (round, index, P, Q, R, S)
        self._quartets: dict[tuple[int, int, str, str, str, str], Pairing] = {}
        # the partners format's one stage, made once (it does not depend on results)
        self._partners_stage: Stage | None = None

    # ------------------------------------------------------------ public
    def jobs_for(self, results: Results) -> tuple[str, list[MatchJob]]:
        """The idempotency key and the jobs to enqueue now, given the results so far.

        The current stage: all matches (round-robin, gauntlet), the first Swiss
        or knockout round not yet finished, the sprt batch under way. The same
        key and jobs come back until that stage is finished, so a broker's
        ``enqueue_once(key, jobs)`` may be called on every result. Once the
        tournament is finished: ``(f"{tid}/finished", [])``.

        A stage of mirror pairs comes in two halves: every pair's leg 0 under
        the stage's key until each of them has a result, then every leg 1 still
        without one under ``{key}/leg1``. So no bot is shown a deal's second leg
        before its first is over, and the audit (:mod:`arena.tournament.detection`)
        has the first leg's decisions, made before the bot could have seen the
        deal, to compare with the second's. The first half keeps the stage's old
        key: a stage enqueued whole by an older node is not enqueued again.
        """
        progress = self._progress(results)
        if progress.finished:
            return f"{self.spec.tournament_id}/finished", []
        stage = progress.stages[-1]
        if self.spec.duplicate != "mirror":
            return stage.key, stage.jobs
        firsts = [p.jobs[0] for p in stage.pairings]
        if any(j.match_id not in progress.results for j in firsts):
            return stage.key, firsts
        return f"{stage.key}/{SECOND_LEGS}", [
            p.jobs[1] for p in stage.pairings if p.jobs[1].match_id not in progress.results]

    def is_finished(self, results: Results) -> bool:
        return self._progress(results).finished

    def stages(self, results: Results) -> list[Stage]:
        """Every stage scheduled so far, the current one last."""
        return self._progress(results).stages

    def games(self, results: Results) -> list[Game]:
        """Every finished game, in schedule order (a quartet's one or two: its compared pairs)."""
        return [g for p, legs in self._progress(results).done for g in self._games(p, legs)]

    def bot_games(self, results: Results) -> list[Game]:
        """Every finished pairing as games between bots: :meth:`games`, except that a partners
        game counts for each bot of a side, against the opponent of the seat after its own."""
        progress = self._progress(results)
        return self._bot_games(progress)

    def overview(self, results: Results) -> Overview:
        """Its stages, games, standings and SPRT at once (one pass over the results, not four)."""
        progress = self._progress(results)
        games = [g for p, legs in progress.done for g in self._games(p, legs)]
        bot_games = self._bot_games(progress)
        return Overview(stages=progress.stages, games=games, bot_games=bot_games,
                        standings=self._standings(progress, bot_games),
                        sprt=progress.sprt if progress.sprt is not None else (
                            run_sprt((), self.spec.sprt_options) if self.spec.format == "sprt" else None),
                        finished=progress.finished)

    def standings(self, results: Results) -> list[Standing]:
        """Every bot's standing, best first (see :mod:`arena.tournament.standings`)."""
        progress = self._progress(results)
        return self._standings(progress, self._bot_games(progress))

    def _bot_games(self, progress: _Progress) -> list[Game]:
        """The games of ``progress.done``, in order, as games between bots: a partners game split
        by the seats its first leg's summary names, or a quartet's by its sides' seats."""
        partners = self.spec.format == "partners"
        out: list[Game] = []
        for p, legs in progress.done:
            games = self._games(p, legs)
            if not partners:
                out += games
            elif p.sides is None:
                out += [g for game in games for g in _bot_games(game, legs[0].seat_bots)]
            else:
                by_name = dict(zip(p.side_names, p.sides, strict=True))
                out += [g for game in games for g in _bot_games(
                    game, (by_name[game.a][0], by_name[game.b][0], by_name[game.a][1], by_name[game.b][1]))]
        return out

    def _standings(self, progress: _Progress, bot_games: list[Game]) -> list[Standing]:
        """The standings from the games between bots (a partners bot scores its side's result)."""
        spec = self.spec
        fmt = spec.format
        order: Order = "swiss" if fmt == "swiss" else "knockout" if fmt == "knockout" else "points"
        return compute_standings(
            spec.bots, bot_games, order=order,
            duplicate=bool(spec.duplicate), byes=[b for s in progress.stages for b in s.byes],
            bye_scores=fmt == "swiss", reached=progress.reached,
        )

    def sprt_state(self, results: Results) -> SprtState:
        """The SPRT over the finished pairs in pair order (sprt format only)."""
        options = self.spec.sprt_options
        state = self._progress(results).sprt
        return state if state is not None else run_sprt((), options)

    # ------------------------------------------------------------ schedule
    def _progress(self, results: Results) -> _Progress:
        by_id: dict[str, ResultSummary] = {}
        for r in results:
            if r.tournament_id == self.spec.tournament_id and r.match_id not in by_id:
                by_id[r.match_id] = r if isinstance(r, ResultSummary) else self.summary(r)
        fmt = self.spec.format
        if fmt == "swiss":
            progress = self._swiss(by_id)
        elif fmt == "knockout":
            progress = self._knockout(by_id)
        elif fmt == "sprt":
            progress = self._sprt(by_id)
        else:
            stage = self._partners() if fmt == "partners" else self._all_at_once()
            progress = _Progress(stages=[stage])
            progress.finished = self._play(progress, progress.stages[0], by_id) is not None
        progress.results = by_id
        return progress

    def _play(self, progress: _Progress, stage: Stage, by_id: dict[str, ResultSummary]) -> list[Game] | None:
        """Record the stage's finished pairings; their games if all are finished, else None.

        Only the completeness is needed to schedule round-robin and gauntlet;
        the games (which replay duplicate records) are built for Swiss and
        knockout, whose next round depends on them.
        """
        complete = True
        for p in stage.pairings:
            legs = self._legs(p, by_id)
            if legs is None:
                complete = False
            else:
                progress.done.append((p, legs))
        if not complete:
            return None
        if self.spec.format not in ("swiss", "knockout"):
            return []
        return [g for p, legs in progress.done if p.round == stage.number for g in self._games(p, legs)]

    def _all_at_once(self) -> Stage:
        spec = self.spec
        if spec.duplicate == "field":  # round-robin: every pair compared once a repeat, in quartets
            quartets = round_robin_quartets(circle_rounds(spec.bots))
            return Stage(0, f"{spec.tournament_id}/all", tuple(
                self._quartet(r, i, q)
                for r in range(1, spec.round_count + 1) for i, q in enumerate(quartets)))
        if spec.format == "gauntlet":
            assert spec.candidate is not None
            c = spec.candidate
            ordered = [(c, o) for o in spec.bots if o != c]
        else:
            ordered = [pair for rnd in circle_rounds(spec.bots) for pair in rnd]
        if not spec.duplicate:  # both seatings; a duplicate pair already plays both
            ordered += [(b, a) for a, b in ordered]
        pairings = tuple(
            self._pairing(r, i, a, b)
            for r in range(1, spec.round_count + 1) for i, (a, b) in enumerate(ordered)
        )
        return Stage(0, f"{spec.tournament_id}/all", pairings)

    def _partners(self) -> Stage:
        """Every round's tables at once (they do not depend on results); the bots that sit a
        round out are the stage's byes (they score nothing). Made once per instance: the tables
        are searched for (:func:`partner_rounds`) and every seed is an HMAC."""
        if self._partners_stage is None:
            spec = self.spec
            rounds = partner_rounds(spec.bots, spec.round_count, spec.seed)
            pairings: tuple[Pairing, ...]
            if spec.duplicate == "field":  # a round's tables two by two, each table's two sides compared
                made: list[Pairing] = []
                for r, rnd in enumerate(rounds, 1):
                    sides: dict[str, Side] = {}
                    for t in rnd.tables:
                        for side in ((t[0], t[2]), (t[1], t[3])):
                            sides[side_name(*side)] = side
                    pairs = [(side_name(t[0], t[2]), side_name(t[1], t[3])) for t in rnd.tables]
                    made += [self._quartet(r, i, q, sides) for i, q in enumerate(round_quartets(pairs))]
                pairings = tuple(made)
            else:
                pairings = tuple(self._table(r, i, table)
                                 for r, rnd in enumerate(rounds, 1) for i, table in enumerate(rnd.tables))
            byes = tuple(b for rnd in rounds for b in rnd.sitting_out)
            self._partners_stage = Stage(0, f"{spec.tournament_id}/all", pairings, byes)
        return self._partners_stage

    def _swiss(self, by_id: dict[str, ResultSummary]) -> _Progress:
        spec = self.spec
        progress = _Progress()
        for r in range(1, spec.round_count + 1):
            stage = self._swiss_round(r, progress)
            progress.stages.append(stage)
            if self._play(progress, stage, by_id) is None:
                return progress
        progress.finished = True
        return progress

    def _swiss_round(self, r: int, progress: _Progress) -> Stage:
        spec = self.spec
        score: dict[str, float] = dict.fromkeys(spec.bots, 0.0)
        for g in (g for p, legs in progress.done for g in self._games(p, legs)):
            score[g.a] += g.score_a
            score[g.b] += 1.0 - g.score_a
        byes = Counter(b for s in progress.stages for b in s.byes)
        for b, n in byes.items():
            score[b] += n
        order = list(spec.bots)
        random.Random(f"{spec.seed}/swiss/{r}").shuffle(order)
        position = {b: i for i, b in enumerate(order)}
        ranked = sorted(spec.bots, key=lambda b: (-score[b], position[b]))
        earlier = [p for s in progress.stages for p in s.pairings]
        met = Counter(frozenset(pair) for p in earlier for pair in p.compared)
        pairs, bye = swiss_pairings(ranked, met, byes)
        byes_now = () if bye is None else (bye,)
        if spec.duplicate == "field":  # the round's pairs two by two, by rank: each pair's opponents near it
            return Stage(r, f"{spec.tournament_id}/round/{r}",
                         tuple(self._quartet(r, i, q) for i, q in enumerate(round_quartets(pairs))), byes_now)
        at_team0 = Counter(p.a for p in earlier)
        pairings = []
        for i, (x, y) in enumerate(pairs):
            if not spec.duplicate and at_team0[y] < at_team0[x]:
                x, y = y, x  # balance the seatings; the higher-ranked first otherwise
            pairings.append(self._pairing(r, i, x, y))
        return Stage(r, f"{spec.tournament_id}/round/{r}", tuple(pairings), byes_now)

    def _knockout(self, by_id: dict[str, ResultSummary]) -> _Progress:
        spec = self.spec
        seed_of = {b: i for i, b in enumerate(spec.bots)}
        progress = _Progress(reached={b: spec.round_count + 1 for b in spec.bots})
        slots = first_round(spec.bots)
        for r in range(1, spec.round_count + 1):
            winners: dict[int, str] = {}
            pairings: list[Pairing] = []
            for i, (x, y) in enumerate(slots):
                if x is None or y is None:
                    bye = x if y is None else y
                    assert bye is not None  # a first-round slot holds at least one bot
                    winners[i] = bye
                    continue
                a, b = (x, y) if seed_of[x] < seed_of[y] else (y, x)
                pairings.append(self._pairing(r, i, a, b))
            stage = Stage(r, f"{spec.tournament_id}/round/{r}", tuple(pairings),
                          tuple(winners[i] for i in sorted(winners)))
            progress.stages.append(stage)
            games = self._play(progress, stage, by_id)
            if games is None:
                return progress
            for g in games:
                w = self._knockout_winner(g)
                progress.reached[g.b if w == g.a else g.a] = r
                winners[g.index] = w
            ordered = [winners[i] for i in range(len(slots))]
            slots = [(ordered[2 * i], ordered[2 * i + 1]) for i in range(len(ordered) // 2)]
        progress.finished = True
        return progress

    def _knockout_winner(self, g: Game) -> str:
        """The game's winner; a draw goes to the point difference, then to a seeded coin."""
        if g.score_a != 0.5:
            return g.a if g.score_a > 0.5 else g.b
        diff = g.difference if g.difference is not None else g.points_a - g.points_b
        if diff:
            return g.a if diff > 0 else g.b
        coin = random.Random(f"{self.spec.seed}/coin/{g.round}/{g.index}").random()
        return g.a if coin < 0.5 else g.b

    def _sprt(self, by_id: dict[str, ResultSummary]) -> _Progress:
        spec = self.spec
        options = spec.sprt_options
        candidate, other = spec.bots
        progress = _Progress()
        test = SequentialTest(options)  # fed the finished pairs before the first unfinished one
        prefix = True
        scheduled = 0
        batch = 0
        while True:
            batch += 1
            size = min(options.batch_pairs, options.max_pairs - scheduled)
            stage = Stage(batch, f"{spec.tournament_id}/batch/{batch}", tuple(
                self._pairing(batch, i, candidate, other) for i in range(size)
            ))
            scheduled += size
            progress.stages.append(stage)
            for p in stage.pairings:
                legs = self._legs(p, by_id)
                if legs is not None:
                    progress.done.append((p, legs))
                prefix = prefix and legs is not None
                if prefix and legs is not None:
                    test.add(None if any(leg.no_play for leg in legs) else _legs_score(legs))
            progress.sprt = test.state()
            if test.decision is not None or (prefix and scheduled >= options.max_pairs):
                progress.finished = True
                return progress
            if not prefix:
                return progress

    # ------------------------------------------------------------ jobs and games
    def _job_fields(self, rnd: int, index: int, tags: dict[str, Any], label: str = "") -> dict[str, Any]:
        """What every job of a pairing holds; its seed from ``label`` (default: ``r{rnd}-{index}``)."""
        spec = self.spec
        ruleset = dict(self._ruleset) if isinstance(self._ruleset, dict) else self._ruleset
        return {"tournament_id": spec.tournament_id, "ruleset": ruleset,
                "seed": derive_seed(spec.seed, label or f"r{rnd}-{index}"), "deals": spec.deals,
                "target": spec.match_target, "round": rnd,
                "tags": {"format": spec.format, "index": index, **tags}}

    def _table(self, rnd: int, index: int, table: Table) -> Pairing:
        """A partners table: one mixed match, or a duplicate pair whose second leg swaps the sides
        (each seat's hands go to the opponent of the seat after it)."""
        base = f"{self.spec.tournament_id}-r{rnd}-{index}"
        n, e, s, w = table
        jobs: tuple[MatchJob, ...]
        if self.spec.duplicate == "mirror":
            jobs = (MatchJob.seated(f"{base}-leg0", seats=table,
                                    **self._job_fields(rnd, index, {"pair": base, "leg": 0})),
                    MatchJob.seated(f"{base}-leg1", seats=(e, n, w, s),
                                    **self._job_fields(rnd, index, {"pair": base, "leg": 1})))
        else:
            jobs = (MatchJob.seated(base, seats=table, **self._job_fields(rnd, index, {})),)
        return Pairing(rnd, index, jobs[0].team0, jobs[0].team1, jobs, table)

    def _quartet(self, rnd: int, index: int, quartet: Quartet,
                 sides: dict[str, Side] | None = None) -> Pairing:
        """A quartet of field duplicate: four tables on two board sets (:mod:`arena.tournament.quartet`).
        ``sides`` gives the bots of a side by name (partners); a side is otherwise one bot."""
        (p, q), (r, s), scored = quartet
        key = (rnd, index, p, q, r, s)
        made = self._quartets.get(key)
        if made is not None:
            return made
        base = f"{self.spec.tournament_id}-r{rnd}-{index}"
        of = sides or {}
        four = tuple(of.get(name, (name, name)) for name in (p, q, r, s))
        assert len(four) == 4
        ids = quartet_tables(base, scored)
        jobs = tuple(
            MatchJob.seated(ids[k], seats=seats, **self._job_fields(
                rnd, index, {"quartet": base, "table": k}, f"r{rnd}-{index}-s{board_set(k)}"))
            for k, seats in enumerate(seatings(four)))
        made = self._quartets[key] = Pairing(rnd, index, p, q, jobs, scored=scored,
                                             sides=(four[0], four[1], four[2], four[3]))
        return made

    def _pairing(self, rnd: int, index: int, a: str, b: str) -> Pairing:
        """The pairing and its jobs, made once per instance (a seed is an HMAC: rebuilding the
        schedule at every advance would make them all again)."""
        key = (rnd, index, a, b)
        made = self._pairings.get(key)
        if made is None:
            made = self._pairings[key] = self._make_pairing(rnd, index, a, b)
        return made

    def _make_pairing(self, rnd: int, index: int, a: str, b: str) -> Pairing:
        spec = self.spec
        base = f"{spec.tournament_id}-r{rnd}-{index}"

        def job(match_id: str, team0: str, team1: str, tags: dict[str, Any]) -> MatchJob:
            return MatchJob(match_id=match_id, team0=team0, team1=team1,
                            **self._job_fields(rnd, index, tags))

        jobs: tuple[MatchJob, ...]
        if spec.duplicate == "mirror":
            jobs = (job(f"{base}-leg0", a, b, {"pair": base, "leg": 0}),
                    job(f"{base}-leg1", b, a, {"pair": base, "leg": 1}))
        else:
            jobs = (job(base, a, b, {}),)
        return Pairing(rnd, index, a, b, jobs)

    def _legs(self, p: Pairing, by_id: dict[str, ResultSummary]) -> Legs | None:
        """The pairing's results if all are in (checked against their jobs), else None."""
        legs = [by_id.get(j.match_id) for j in p.jobs]
        found = tuple(r for r in legs if r is not None)
        if len(found) < len(legs):
            return None
        for job, r in zip(p.jobs, found, strict=True):
            if (r.team0, r.team1) != (job.team0, job.team1) or r.seat_bots != job.seat_bots:
                raise TournamentError(
                    f"result {r.match_id} seats {'/'.join(r.seat_bots)} (seats 0..3), "
                    f"but its job seats {'/'.join(job.seat_bots)}"
                )
        return found

    def _games(self, p: Pairing, legs: Legs) -> list[Game]:
        """The pairing's games: one, or a quartet's one or two (its seeds checked first)."""
        if p.sides is None:
            return [self._game(p, legs)]
        for first, second in ((legs[0], legs[1]), (legs[2], legs[3])):
            if first.seed != second.seed:
                raise TournamentError(f"{first.match_id} and {second.match_id} deal one board set, but "
                                      f"their seeds differ")
        return quartet_games(p.round, p.index, p.side_names, legs, p.scored)

    def _game(self, p: Pairing, legs: Legs) -> Game:
        if not self.spec.duplicate:
            (r,) = legs
            return Game(p.round, p.index, p.a, p.b, score_a=r.score0(), points_a=r.totals[0],
                        points_b=r.totals[1], difference=None, legs_score_a=r.score0(), no_play=r.no_play)
        leg0, leg1 = legs
        check_legs(leg0, leg1)
        # A's points minus B's: A is team 0 of leg 0 and team 1 of leg 1
        diff = leg0.deal_difference() - leg1.deal_difference()
        return Game(
            p.round, p.index, p.a, p.b, score_a=pair_score(leg0, leg1, diff),
            points_a=leg0.totals[0] + leg1.totals[1], points_b=leg0.totals[1] + leg1.totals[0],
            difference=diff, legs_score_a=_legs_score(legs), no_play=leg0.no_play or leg1.no_play,
        )

    def summary(self, result: MatchResult) -> ResultSummary:
        """The result's summary as the store keeps it (a duplicate leg's deal difference with it)."""
        cached = self._summaries.get(result.match_id)
        if cached is not None and (cached[0] is result or cached[0] == result):
            return cached[1]
        made = ResultSummary.of_result(result, deals=bool(self.spec.duplicate))
        self._summaries[result.match_id] = (result, made)
        return made


def _bot_games(game: Game, seats: Sequence[str]) -> list[Game]:
    """A partners game as each bot's own: the bots of a side score what their side scored, each
    counted once against the opponent of the seat after its own in the first leg (``seats``, the
    bots at its seats 0..3, as its summary names them: side A at 0 and 2, side B at 1 and 3)."""
    return [Game(game.round, game.index, seats[i], seats[i + 1], score_a=game.score_a,
                 points_a=game.points_a, points_b=game.points_b, difference=game.difference,
                 legs_score_a=game.legs_score_a, no_play=game.no_play)
            for i in (0, 2)]


def _legs_score(legs: Legs) -> float:
    """Team 0 of the first leg's mean match score over the legs (1 win, 1/2 draw)."""
    if len(legs) == 1:
        return legs[0].score0()
    return (legs[0].score0() + 1.0 - legs[1].score0()) / 2
