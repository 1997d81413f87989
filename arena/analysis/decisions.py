"""Every decision of a recorded match analysed: the JSON of ``GET /api/v1/matches/ID/analysis``.

For each card a bot chose (docs/analysis.md#decisions):

- its **value** and the **best value**: double-dummy, the margin of the side that played it (its
  deal score less the other's) with that card and with the best card, all four hands seen, every
  later card played perfectly; the **loss** is their difference;
- a **label** when the loss reaches a threshold (:data:`LABELS`: inaccuracy 10, mistake 30,
  blunder 80 points);
- an **accuracy**, ``100 * exp(-loss / 50)`` (:func:`accuracy`), averaged per seat per deal and per
  bot over the match (decisions with a choice only);
- the **second opinion** (:mod:`arena.analysis.second`): the search bot's values of the legal cards
  on what the bot knew.

A card with one legal choice is no decision (``choices: 1``), and a card the referee played for a
struck bot (``fallback``) is valued but marked nothing and counted for nobody. For each deal, the
bidding: par and what each side lost by the contract reached (:mod:`arena.analysis.par`); luck
and skill (:mod:`arena.analysis.luck`). The whole is plain JSON (format 1, docs/analysis.md).
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.analysis import Position, Solver, card_values, solve
from arena.analysis.luck import dealt_deal, heuristic_result, margin
from arena.analysis.par import Contract, contract_of, par
from arena.analysis.second import opinion
from arena.engine.cards import CARD_TEXTS
from arena.engine.deal import Deal
from arena.engine.errors import EngineError, RecordError
from arena.engine.record import replay_match
from arena.engine.rules import Ruleset

__all__ = ["FORMAT", "LABELS", "NOTE", "Settings", "accuracy", "analyse", "label_of"]

FORMAT = 1

#: the labels and the points a card must lose to earn each (the smallest first)
LABELS: tuple[tuple[str, int], ...] = (("inaccuracy", 10), ("mistake", 30), ("blunder", 80))
#: the points of loss at which a card's accuracy falls to 1/e (37%)
ACCURACY_SCALE = 50.0

NOTE = ("Double-dummy values suppose every player sees every card and plays perfectly from there on: "
        "a card marked here may still have been the right one on what its bot knew (its own hand and "
        "the cards played), and a card called best may have needed a look at the other hands. Over 10 "
        "matches of 8 deals it put 13.9 points lost a decision on the heuristic bot and 20.2 on a careless "
        "one, with a spread from match to match (8 to 12) as large as the gap: one match hardly tells two "
        "bots apart. The second opinion values each card on what the bot saw (sampled hands), with a "
        "simple player's play after it; it told those two bots apart 3 times better. Luck is what the "
        "built-in heuristic bot made of the same cards at all four seats; skill is the result less that.")


@dataclass(frozen=True, slots=True)
class Settings:
    """How an analysis is made (its ``settings`` in the JSON)."""

    labels: tuple[tuple[str, int], ...] = LABELS
    #: samples of the hidden hands per decision for the second opinion (0: none)
    second_opinion_samples: int = 16
    #: whether the bidding's par is solved (about 10 to 16 double-dummy solves a deal)
    par: bool = True
    #: the worst decisions listed
    worst: int = 10
    #: the deals analysed at most, the first ones (a 1,000-deal match would take minutes of CPU and
    #: megabytes of JSON); the analysis says how many there were (``deals_in_match``)
    max_deals: int = 200

    def to_json(self) -> dict[str, Any]:
        return {"labels": dict(self.labels), "accuracy_scale": ACCURACY_SCALE,
                "second_opinion_samples": self.second_opinion_samples, "par": self.par,
                "max_deals": self.max_deals}


def label_of(loss: float, labels: Sequence[tuple[str, int]] = LABELS) -> str | None:
    """The label a loss earns: the highest threshold it reaches, or None."""
    found = None
    for name, threshold in labels:
        if loss >= threshold:
            found = name
    return found


def accuracy(loss: float) -> float:
    """A decision's accuracy in percent: 100 for a best card, ``100 * exp(-loss / 50)`` below."""
    return 100.0 * math.exp(-max(0.0, loss) / ACCURACY_SCALE)


def dd_value(deal: Deal, solver: Solver | None = None) -> int:
    """Team 0's double-dummy margin of ``deal`` in its card play (``solver``: one shared by the
    positions of this deal, its table kept)."""
    value = solve(Position.from_deal(deal, solver))
    return value if deal.to_act & 1 == 0 else -value


def dd_card_values(deal: Deal, solver: Solver | None = None) -> dict[int, int]:
    """Each legal card's double-dummy margin for the side to play (its deal score less the other's)."""
    return {int(c): int(v) for c, v in card_values(Position.from_deal(deal, solver)).items()}


@dataclass
class _Tally:
    decisions: int = 0
    loss: float = 0.0
    accuracy: float = 0.0
    second: int = 0
    second_loss: float = 0.0

    def add(self, loss: float) -> None:
        self.decisions += 1
        self.loss += loss
        self.accuracy += accuracy(loss)


def _rounded(x: float | None, digits: int = 1) -> float | None:
    return None if x is None else round(x, digits)


def analyse(record: Mapping[str, Any], *, fallbacks: Collection[tuple[int, int]] = (),
            settings: Settings | None = None) -> dict[str, Any]:
    """The analysis of a match record (the engine's: ``ruleset``, ``seed``, ``players``, ``deals``;
    :class:`RecordError` if it does not replay). ``fallbacks`` are the ``(deal, decision)`` places
    (decision: its index in the deal, bids then plays) where the referee played for a struck bot."""
    settings = settings or Settings()
    players = [str(p) for p in record.get("players", ["", "", "", ""])]
    if len(players) != 4:
        players = ["", "", "", ""]
    if record.get("deals") == []:  # a match forfeited in its first deal: nothing was finished to analyse
        return _analysis(settings, players, {n: _Tally() for n in dict.fromkeys(players)}, {}, [], [],
                         [[0, 0, 0], [0, 0, 0]])
    try:
        match, outcomes = replay_match(record)
    except RecordError:
        raise
    except EngineError as e:
        raise RecordError(str(e)) from None
    rules: Ruleset = match.rules
    seed = record.get("seed")
    fallback_set = {(int(d), int(i)) for d, i in fallbacks}
    tallies = {name: _Tally() for name in dict.fromkeys(players)}
    labels_count: dict[str, dict[str, int]] = {name: {n: 0 for n, _ in settings.labels} for name in tallies}
    worst: list[dict[str, Any]] = []
    deals_out: list[dict[str, Any]] = []
    team_totals = [[0, 0, 0], [0, 0, 0]]  # result, luck, skill
    for index, (rec, real, outcome) in enumerate(zip(record["deals"], match.deals, outcomes, strict=True)):
        if index >= settings.max_deals:
            break
        result = margin(outcome.score)
        dealt = dealt_deal(rec, rules, seed if isinstance(seed, int | str) else None, index)
        luck = heuristic_result(dealt) if dealt is not None else None
        entry: dict[str, Any] = {"index": index, "thrown_in": outcome.thrown_in, "score": list(outcome.score),
                                 "result": [result, -result]}
        if luck is not None:
            entry["luck"] = [luck, -luck]
            entry["skill"] = [result - luck, luck - result]
            for team, sign in ((0, 1), (1, -1)):
                team_totals[team][0] += sign * result
                team_totals[team][1] += sign * luck
                team_totals[team][2] += sign * (result - luck)
        if outcome.thrown_in:
            entry.update(cards=[], accuracy=[None] * 4, bidding={"contract": None})
            deals_out.append(entry)
            continue
        start = _at_first_card(rec, rules)
        bids = len(real.bids)
        solver = Solver(start)
        cards, per_seat = _cards(index, start, real, bids, players, fallback_set, settings, seed,
                                 tallies, labels_count, worst, solver)
        entry["cards"] = cards
        entry["accuracy"] = [None if not n else round(total / n, 1) for total, n in per_seat]
        by_bot: dict[str, list[float]] = {}
        for seat, (total, n) in enumerate(per_seat):
            kept = by_bot.setdefault(players[seat], [0.0, 0.0])
            kept[0] += total
            kept[1] += n
        entry["accuracy_by_bot"] = {name: None if not n else round(total / n, 1)
                                    for name, (total, n) in by_bot.items()}
        entry["bidding"] = _bidding(index, dealt, start, players, settings, worst, solver)
        deals_out.append(entry)
    out = _analysis(settings, players, tallies, labels_count, worst, deals_out, team_totals)
    out["deals_in_match"] = len(outcomes)
    return out


def _analysis(settings: Settings, players: list[str], tallies: dict[str, _Tally],
              labels_count: dict[str, dict[str, int]], worst: list[dict[str, Any]],
              deals_out: list[dict[str, Any]], team_totals: list[list[int]]) -> dict[str, Any]:
    """The analysis's JSON from its parts."""
    worst.sort(key=lambda w: (-w["loss"], w["deal"], w.get("i", -1)))
    bots = []
    for name, t in tallies.items():
        counts = labels_count.get(name, {})
        bots.append({
            "bot": name, "seats": [s for s in range(4) if players[s] == name], "decisions": t.decisions,
            "loss": round(t.loss, 1),
            "loss_per_decision": _rounded(t.loss / t.decisions if t.decisions else None, 2),
            "accuracy": _rounded(t.accuracy / t.decisions if t.decisions else None),
            "inaccuracies": counts.get("inaccuracy", 0), "mistakes": counts.get("mistake", 0),
            "blunders": counts.get("blunder", 0),
            "second_opinion": {
                "decisions": t.second,
                "loss_per_decision": _rounded(t.second_loss / t.second if t.second else None, 2)},
        })
    names = _team_names(players)
    teams = [{"team": t, "name": names[t], "result": team_totals[t][0], "luck": team_totals[t][1],
              "skill": team_totals[t][2]} for t in (0, 1)]
    return {"format": FORMAT, "note": NOTE, "settings": settings.to_json(), "players": players,
            "bots": bots, "teams": teams, "worst": worst[:settings.worst], "deals": deals_out}


def _team_names(players: Sequence[str]) -> tuple[str, str]:
    def side(a: str, b: str) -> str:
        return a if a == b else f"{a}+{b}"

    return side(players[0], players[2]), side(players[1], players[3])


def _at_first_card(rec: Mapping[str, Any], rules: Ruleset) -> Deal:
    """The deal as its card play starts (the recorded hands, the bids applied)."""
    from arena.engine.record import deal_from_record

    bare = {k: v for k, v in rec.items() if k != "plays"}
    return deal_from_record(bare, rules)


def _cards(index: int, start: Deal, real: Deal, bids: int, players: Sequence[str],
           fallbacks: set[tuple[int, int]], settings: Settings, seed: object,
           tallies: dict[str, _Tally], labels_count: dict[str, dict[str, int]],
           worst: list[dict[str, Any]], solver: Solver,
           ) -> tuple[list[dict[str, Any]], list[tuple[float, int]]]:
    plays = list(real.plays)
    per_seat = [(0.0, 0)] * 4
    out: list[dict[str, Any]] = []
    deal = start.copy()
    for i, action in enumerate(plays):
        seat = deal.to_act
        card = action & 31
        legal = deal.legal_cards()
        choices = legal.bit_count()
        text = CARD_TEXTS[card]
        mark: dict[str, Any] = {"i": i, "trick": i // 4, "seat": seat, "card": text,
                                "action": _action_text(action), "choices": choices}
        if choices > 1:
            values = dd_card_values(deal, solver)
            value = values[card]
            top = max(values.values())
            best = [CARD_TEXTS[c] for c in sorted(values) if values[c] == top]
            loss = top - value
            fallback = (index, bids + i) in fallbacks
            label = None if fallback else label_of(loss, settings.labels)
            mark.update(value=value, best_value=top, best=best, loss=loss, label=label,
                        accuracy=round(accuracy(loss), 1))
            if fallback:
                mark["fallback"] = True
            else:
                name = players[seat]
                tallies[name].add(loss)
                total, n = per_seat[seat]
                per_seat[seat] = (total + accuracy(loss), n + 1)
                if label is not None:
                    labels_count[name][label] += 1
                if loss > 0:
                    worst.append({"kind": "card", "deal": index, "i": i, "trick": i // 4, "seat": seat,
                                  "bot": name, "played": text, "better": best, "loss": loss, "label": label,
                                  "value": value, "best_value": top})
            if settings.second_opinion_samples > 0:
                rng = random.Random(f"belote-arena/analysis/{seed}/{index}/{i}")
                seen = opinion(start, real, plays[:i], action, rng, settings.second_opinion_samples)
                if seen is not None:
                    mark["second_opinion"] = {
                        "best": [CARD_TEXTS[c] for c in seen.best], "loss": round(seen.loss, 1),
                        "values": {CARD_TEXTS[c]: round(v, 1) for c, v in sorted(seen.values.items())},
                        "samples": seen.samples}
                    if not fallback:
                        t = tallies[players[seat]]
                        t.second += 1
                        t.second_loss += seen.loss
        out.append(mark)
        deal.apply_unchecked(action)
    return out, per_seat


def _action_text(action: int) -> str:
    from arena.engine.actions import format_action

    return format_action(action)


def _bidding(index: int, dealt: Deal | None, start: Deal, players: Sequence[str], settings: Settings,
             worst: list[dict[str, Any]], solver: Solver) -> dict[str, Any]:
    reached = contract_of(start)
    out: dict[str, Any] = {"contract": None if reached is None else reached.to_json()}
    if reached is not None:
        out["contract"]["text"] = reached.text
    actual = dd_value(start, solver)
    out["dd_value"] = [actual, -actual]
    if not settings.par or dealt is None:
        return out
    if not dealt.rules.is_coinche and dealt.deck is None:
        return out
    found = par(dealt, dd_value)
    out["par"] = {"contract": None if found.contract is None else found.contract.to_json(),
                  "value": [found.value, -found.value], "solves": found.solves}
    loss0 = found.value - actual
    out["bidding_loss"] = [loss0, -loss0]
    if loss0 != 0:
        team = 0 if loss0 > 0 else 1
        loss = abs(loss0)
        seats = [s for s in range(4) if s & 1 == team]
        name = players[seats[0]] if players[seats[0]] == players[seats[1]] else \
            f"{players[seats[0]]}+{players[seats[1]]}"
        worst.append({"kind": "bidding", "deal": index, "team": team, "bot": name,
                      "played": _described(reached), "better": [_described(found.contract)], "loss": loss,
                      "label": label_of(loss, settings.labels)})
    return out


def _described(contract: Contract | None) -> str:
    return "all pass" if contract is None else contract.describe()


def parse_fallbacks(strikes: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """The ``(deal, decision)`` places of a record's strikes (docs/records.md#arena-match-record)."""
    out = []
    for s in strikes:
        try:
            out.append((int(s["deal"]), int(s["decision"])))
        except (KeyError, TypeError, ValueError):
            continue
    return out

