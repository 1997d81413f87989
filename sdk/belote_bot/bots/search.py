"""A search bot: determinized Monte Carlo over the engine's fast path.

    python -m belote_bot.bots.search --address HOST:PORT [--token-file FILE] [--budget-ms MS]

For each decision it samples the hidden hands many times, consistent with
everything public (:mod:`belote_bot.bots.sampling`), and on each sample plays
every candidate action to the end of the deal with a fast rollout policy
(:mod:`belote_bot.bots.rollout`); it answers the candidate with the best mean
deal score for its team (its points minus the other side's, contract made or
failed and coinche multipliers included). All candidates are evaluated on the
same samples, so their differences carry less noise than their values
(perfect-information Monte Carlo, PIMC).

- Card play: the candidates are the legal cards, each with the most words it
  may carry (belote, declarations).
- Bidding: pass, and a few bids (classic: take or a suit; coinche: the lowest
  and a higher bid in each suit it could hold, raising the partner, coinche,
  surcoinche). After a candidate the rest of the bidding on each sample is
  played by the heuristic, so other seats may outbid it or coinche.
- Time: a fraction of the referee's per-decision deadline and a little of the
  time bank, minus a safety margin; ``budget_ms`` overrides it and
  ``iterations`` caps the samples. Given its seed, an iteration cap and no
  time cap, the same observation always gives the same action.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from arena.engine import actions as A
from arena.engine.bots import HeuristicPlayer
from arena.engine.cards import JACK, NINE
from arena.engine.deal import Deal, Phase
from arena.engine.observation import Observation as EngineObservation
from arena.engine.observation import observe
from arena.engine.rules import PRESETS, Ruleset
from belote_bot.bot import Bot
from belote_bot.bots.rollout import POLICIES, RolloutPolicy, play_out, team_value
from belote_bot.bots.sampling import Likelihood, deal_of, knowledge_of, sample_hands
from belote_bot.events import MatchInfo, MatchResult
from belote_bot.types import Action, Observation

__all__ = ["SearchBot", "SearchResult", "bid_candidates", "main", "search", "time_budget_s"]

log = logging.getLogger("belote_bot")

_BIDDING = Phase.BIDDING
_HEURISTIC = HeuristicPlayer()
#: never plan to answer later than this before the hard limit (deadline + time bank)
SAFETY_S = 0.030
#: the budget when the request announces no deadline and no iteration cap is set
DEFAULT_BUDGET_S = 0.1


@dataclass(frozen=True, slots=True)
class SearchResult:
    """A search's answer and what it cost."""

    action: int
    #: the candidates and their mean value for the searching team (points per deal)
    values: tuple[tuple[int, float], ...]
    #: samples drawn, rollouts played, seconds spent
    samples: int
    rollouts: int
    seconds: float


#: coinche: the bids searched in a suit, as steps above the lowest legal bid
BID_STEPS: tuple[int, ...] = (0, 20)


def bid_candidates(
    obs: EngineObservation, rules: Ruleset, rng: random.Random, steps: tuple[int, ...] = BID_STEPS,
) -> list[int]:
    """The few bids worth a search: pass, the heuristic's choice, and per plausible trump suit
    the lowest bid and those ``steps`` above it (coinche), or every legal bid (classic)."""
    legal = obs.legal_actions
    if not rules.is_coinche:
        return list(legal)
    out = [A.PASS]
    heuristic = _HEURISTIC.act(obs, rng)
    if heuristic not in out:
        out.append(heuristic)
    for special in (A.COINCHE, A.SURCOINCHE):
        if special in legal:
            out.append(special)
    values = {a for a in legal if A.is_value_bid(a) and A.bid_value(a) != A.CAPOT_VALUE}
    if not values:
        return out
    low = min(A.bid_value(a) for a in values)
    first = obs.dealer + 1
    partner_suits = {A.bid_suit(b) for i, b in enumerate(obs.bids)
                     if A.is_value_bid(b) and (first + i) & 3 == obs.seat ^ 2}
    for suit in range(4):
        byte = (obs.hand >> (8 * suit)) & 0xFF
        plausible = (byte >> JACK & 1 or byte >> NINE & 1) and byte.bit_count() >= 2
        if plausible or suit in partner_suits:
            for v in (low + step for step in steps):
                a = A.bid_action(v, suit)
                if a in values and a not in out:
                    out.append(a)
    return out


def play_candidates(obs: EngineObservation) -> list[int]:
    """One action per legal card: the one with the most words (belote, declarations)."""
    best: dict[int, int] = {}
    for a in obs.legal_actions:
        c = a & A.CARD_FIELD
        if c not in best or a >> 5 > best[c] >> 5:
            best[c] = a
    return list(best.values())


def _finish_bidding(deal: Deal, rng: random.Random) -> None:
    """Play the rest of the bidding with the heuristic (every seat)."""
    while deal.phase == _BIDDING:
        deal.apply_unchecked(_HEURISTIC.act(observe(deal, deal.to_act), rng))


def search(
    obs: EngineObservation, rules: Ruleset, rng: random.Random, *, iterations: int | None = None,
    stop_at: float | None = None, policy: RolloutPolicy = POLICIES["greedy"],
    likelihood: Likelihood | None = None, bid_steps: tuple[int, ...] = BID_STEPS,
) -> SearchResult:
    """Choose ``obs.seat``'s action by PIMC: at most ``iterations`` samples, none started after
    ``stop_at`` (a ``time.perf_counter()`` value); at least one sample unless the time is up.
    ``likelihood`` weighs the samples by the bidding (default:
    :func:`~belote_bot.bots.sampling.bid_likelihood`)."""
    started = time.perf_counter()
    bidding = obs.phase == _BIDDING
    candidates = bid_candidates(obs, rules, rng, bid_steps) if bidding else play_candidates(obs)
    if len(candidates) == 1:
        return SearchResult(candidates[0], ((candidates[0], 0.0),), 0, 0, 0.0)
    knowledge = knowledge_of(obs, rules)
    team = obs.seat & 1
    totals = [0] * len(candidates)
    samples = rollouts = 0
    while iterations is None or samples < iterations:
        if stop_at is not None and time.perf_counter() >= stop_at:
            break
        hands = sample_hands(knowledge, rng, likelihood=likelihood)
        base = deal_of(knowledge, hands, rng)
        for i, action in enumerate(candidates):
            d = base.copy()
            d.apply_unchecked(action)
            if bidding:
                _finish_bidding(d, rng)
            play_out(d, policy, rng)
            totals[i] += team_value(d, team)
        samples += 1
        rollouts += len(candidates)
    if samples == 0:  # no time at all: the heuristic's answer
        choice = _HEURISTIC.act(obs, rng)
        return SearchResult(choice, (), 0, 0, time.perf_counter() - started)
    values = tuple((a, t / samples) for a, t in zip(candidates, totals, strict=True))
    best = max(range(len(candidates)), key=lambda i: totals[i])  # ties: the first candidate
    return SearchResult(candidates[best], values, samples, rollouts, time.perf_counter() - started)


def time_budget_s(
    deadline_ms: int, time_bank_ms: int, last_round_trip_us: int = 0, *, deadline_fraction: float = 0.5,
    bank_fraction: float = 0.02,
) -> float:
    """Seconds to search for one decision: a fraction of the deadline and a sliver of the bank,
    never past the hard limit (deadline + bank) minus a margin for the network and Python."""
    hard = (deadline_ms + time_bank_ms) / 1000 - SAFETY_S - 2 * last_round_trip_us / 1e6
    want = deadline_fraction * deadline_ms / 1000 + bank_fraction * time_bank_ms / 1000
    return max(0.0, min(want, hard))


def _infer_rules(obs: EngineObservation) -> Ruleset:
    """The ruleset when the referee did not say (a request built by hand): the preset of the
    game, with declarations and spoken belote if the history or the legal actions show them."""
    if obs.retourne < 0:
        return PRESETS["coinche"]
    codes = (*obs.plays, *obs.legal_actions)
    annonces = any(a < A.BID and a >> A.DECL_SHIFT for a in codes)
    declared = any(a < A.BID and a & (A.BELOTE_WORD | A.REBELOTE_WORD) for a in codes)
    rules = PRESETS["classic-annonces" if annonces else "classic"]
    return rules.with_options(belote="declared") if declared else rules


class SearchBot(Bot):
    """Determinized Monte Carlo search (see the module docstring).

    ``budget_ms`` fixes the search time per decision (default: half the
    referee's deadline plus 2% of the time bank, minus a safety margin);
    ``iterations`` caps the samples per decision; ``rollout`` names a policy of
    :data:`belote_bot.bots.rollout.POLICIES` or is one; ``ruleset`` is used
    when the referee does not announce one (requests built by hand);
    ``search_bids=False`` leaves the bidding to the heuristic; ``likelihood``
    weighs the samples by the bidding (see :mod:`belote_bot.bots.sampling`).
    """

    name = "search"

    def __init__(
        self, seed: int | str | None = None, budget_ms: float | None = None, *,
        iterations: int | None = None, rollout: str | RolloutPolicy = "greedy",
        ruleset: Ruleset | str | None = None, deadline_fraction: float = 0.5, bank_fraction: float = 0.02,
        search_bids: bool = True, likelihood: Likelihood | None = None,
        bid_steps: tuple[int, ...] = BID_STEPS,
    ) -> None:
        self.seed = seed
        self.budget_ms = budget_ms
        self.iterations = iterations
        self.policy: RolloutPolicy = POLICIES[rollout] if isinstance(rollout, str) else rollout
        self.ruleset = Ruleset.from_spec(ruleset) if ruleset is not None else None
        self.deadline_fraction = deadline_fraction
        self.bank_fraction = bank_fraction
        self.search_bids = search_bids
        self.likelihood = likelihood
        self.bid_steps = bid_steps
        self._rules: dict[str, Ruleset] = {}
        self._lock = threading.Lock()
        #: the last search of this bot (any seat): for benches and curious authors
        self.last: SearchResult | None = None

    def on_match_start(self, info: MatchInfo) -> None:
        if info.ruleset is not None:
            with self._lock:
                self._rules[info.match_id] = info.ruleset

    def on_match_end(self, result: MatchResult) -> None:
        with self._lock:
            self._rules.pop(result.match_id, None)

    def rules_for(self, obs: Observation, engine_obs: EngineObservation) -> Ruleset:
        with self._lock:
            rules = self._rules.get(obs.match_id)
        return rules or self.ruleset or _infer_rules(engine_obs)

    def decision_rng(self, obs: Observation) -> random.Random:
        """The random source of one decision, from the seed, the match, the deal and the decision."""
        p = obs.proto
        return random.Random(f"search/{self.seed}/{obs.match_id}/{p.deal_index}/{p.seat}/"
                             f"{len(p.bids)}/{len(p.plays)}")

    def stop_time(self, obs: Observation) -> float | None:
        """The ``time.perf_counter()`` after which no new sample starts, or None (no time cap)."""
        if self.budget_ms is not None:
            budget = self.budget_ms / 1000
        elif obs.deadline_ms or obs.time_bank_ms:
            budget = time_budget_s(obs.deadline_ms, obs.time_bank_ms, obs.last_round_trip_us,
                                   deadline_fraction=self.deadline_fraction, bank_fraction=self.bank_fraction)
        elif self.iterations is not None:
            return None
        else:
            budget = DEFAULT_BUDGET_S
        spent = max(0.0, time.monotonic() - obs.received_at)
        return time.perf_counter() + budget - spent

    def act(self, obs: Observation) -> Action:
        stop_at = self.stop_time(obs)
        engine_obs = obs.to_engine()
        if not self.search_bids and obs.phase == "bidding":
            return Action.of(_HEURISTIC.act(engine_obs, self.decision_rng(obs)))
        rng = self.decision_rng(obs)
        try:
            result = search(engine_obs, self.rules_for(obs, engine_obs), rng,
                            iterations=self.iterations, stop_at=stop_at, policy=self.policy,
                            likelihood=self.likelihood, bid_steps=self.bid_steps)
        except Exception:  # a history the sampler cannot explain (a ruleset guessed wrong): never a strike
            log.exception("search failed for match %s, seat %d; answering the heuristic's choice",
                          obs.match_id, obs.seat)
            return Action.of(_HEURISTIC.act(engine_obs, rng))
        self.last = result
        return Action.of(result.action)


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--budget-ms", type=float, default=None, metavar="MS",
                        help="search time per decision (default: half the referee's deadline and 2%% of "
                             "the time bank, never past them)")
    parser.add_argument("--iterations", type=_at_least_one, default=None, metavar="N",
                        help="at most N samples a decision (within the time it has): the same strength on "
                             "a busy machine as on a quiet one, where a time budget gives fewer")
    parser.add_argument("--rollout", default="greedy", choices=sorted(POLICIES),
                        help="the rollout policy (default: %(default)s)")


def _at_least_one(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"a whole number of at least 1, not {text[:20]!r}")
    return n


def _configure(bot: Bot, args: argparse.Namespace) -> None:
    assert isinstance(bot, SearchBot)
    bot.budget_ms = args.budget_ms
    bot.iterations = args.iterations
    bot.policy = POLICIES[args.rollout]


def main(argv: Sequence[str] | None = None) -> int:
    from belote_bot.cli import bot_main

    return bot_main(SearchBot, "python -m belote_bot.bots.search",
                    "Play by determinized Monte Carlo search over the hidden hands.", argv,
                    options=_options, configure=_configure)


if __name__ == "__main__":
    sys.exit(main())
