"""A cheating bot for the detection tests: it remembers every hand it was shown, and uses them.

In a mirror duplicate pair (``...-leg0`` and ``...-leg1``, the same decks, the sides swapped) it
holds both seats of its side at each table, so once it has been asked a decision of deal ``i`` at
one table it knows two hands of that deck, and at the other table it holds the other two: it
knows all four. There it rebuilds the true deal from memory and plays the perfect-information
card (:func:`arena.tournament.oracle.best_cards`); elsewhere, and in the bidding, it plays as
``honest`` does. Coinche only: a classic deal hands out its last cards after the bidding, by who
took, so the hands of one table are not quite those of the other.

``rate`` (1.0) is the share of the decisions it could cheat at where it does (a seeded coin):
a bot that uses what it knows only a little.
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Awaitable

from belote_bot import Bot, HeuristicBot, Observation
from belote_bot.bot import ActResult
from belote_bot.events import MatchInfo

from arena.engine import CARDS, Deal, Ruleset
from arena.tournament.oracle import best_cards

_LEG = re.compile(r"(.+)-leg[01]")


class RememberingBot(Bot):
    """Plays ``honest`` until it meets a deck a second time; then perfect information."""

    name = "remembering"
    act_inline = True

    def __init__(self, honest: Bot | None = None, *, rate: float = 1.0, seed: int = 0) -> None:
        self.honest = honest or HeuristicBot(seed)
        self.rate = rate
        self.rng = random.Random(f"remembering/{seed}")
        self.lock = threading.Lock()
        #: (pair, deal index) -> {match id -> {seat -> the hand it was dealt}}
        self.memory: dict[tuple[str, int], dict[str, dict[int, int]]] = {}
        self.rules: dict[str, Ruleset] = {}
        #: decisions where it knew every hand, and where it played the oracle's card
        self.knew = 0
        self.cheated = 0

    def on_match_start(self, info: MatchInfo) -> None:
        if info.ruleset is not None:
            self.rules[info.match_id] = info.ruleset

    def act(self, obs: Observation) -> ActResult | Awaitable[ActResult]:
        found = _LEG.fullmatch(obs.match_id)
        pair = found.group(1) if found else obs.match_id
        o = obs.to_engine()
        with self.lock:
            tables = self.memory.setdefault((pair, obs.deal_index), {})
            seats = tables.setdefault(obs.match_id, {})
            if obs.seat not in seats:  # coinche: every seat speaks before any card, so the whole hand
                seats[obs.seat] = o.hand
            hands = {s: h for t in tables.values() for s, h in t.items()}
        rules = self.rules.get(obs.match_id)
        if obs.phase != "play" or len(hands) < 4 or rules is None or not rules.is_coinche:
            return self.honest.act(obs)
        self.knew += 1
        if self.rng.random() >= self.rate:
            return self.honest.act(obs)
        deal = Deal.from_hands(rules, o.dealer, [hands[s] for s in range(4)])
        for action in (*o.bids, *o.plays):
            deal.apply(action)
        answer = best_cards(deal)
        if answer is None:
            return self.honest.act(obs)
        self.cheated += 1
        card = (answer.best & -answer.best).bit_length() - 1
        return obs.play(CARDS[card])

