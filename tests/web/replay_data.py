"""What the replay's tests share: a node where a bot forfeited mid-deal, and an analysis of a match in the
shape the replay page draws (docs/web.md#the-replay's analysis marks), built from the match's own cards.

The analysis itself is made elsewhere (``GET /api/v1/matches/ID/analysis``); the page's drawing of it is
tested with :func:`analysis_of`, whose marks sit on the cards the match really played and whose better
cards are cards the same seat still held then.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from belote_bot import Action, HeuristicBot, Observation

from tests.web.site import Site

#: the marks :func:`analysis_of` puts, by place in the play of the first played deal: (label, points lost;
#: a loss under the labels' thresholds has none)
MARKED = {5: ("blunder", 24), 10: ("mistake", 12), 21: ("inaccuracy", 5), 26: ("", 2)}


class QuitsMidDeal(HeuristicBot):
    """Plays well until three tricks of a deal are played, then has no answer (its ``act`` raises, so the
    SDK sends the no-action code): strikes, and the match forfeited in the middle of its first deal."""

    def act(self, obs: Observation) -> Action:
        if obs.phase == "play" and len(obs.hand) <= 5:
            raise RuntimeError("gave up")
        return super().act(obs)


@pytest.fixture(scope="module")
def forfeited() -> Iterator[tuple[Site, str]]:
    """A node where a bot gave up in the middle of a deal: the match forfeited, its deal unfinished."""
    with tempfile.TemporaryDirectory() as tmp:
        site = Site(Path(tmp), players={"alpha": HeuristicBot(seed=1), "quitter": QuitsMidDeal(seed=2)},
                    tournament=False, analyses=False)  # its pages' tests read none
        try:
            match_id = site.start_match("alpha", "quitter", deals=2, ruleset="coinche", seed="quits/1")
            site.wait_match(match_id)
            yield site, match_id
        finally:
            site.close()


def plays_by_seat(match: dict[str, Any], deal: int) -> list[tuple[int, str]]:
    """The (seat, card) of each card played in ``deal`` of a match as ``GET /api/v1/matches/ID`` gives it."""
    out = []
    for trick in match["replay"][deal]["tricks"]:
        for i, card in enumerate(trick["cards"]):
            out.append(((trick["leader"] + i) % 4, card))
    return out


def analysis_of(match: dict[str, Any], marked: dict[int, tuple[str, int]] | None = None) -> dict[str, Any]:
    """An analysis of ``match`` (its view from the API) in the shape of ``GET /api/v1/matches/ID/analysis``
    (docs/web.md#the-replay): every card of every played deal valued, the cards of ``marked`` (by place in
    the first played deal) losing points to a card their seat still held, every other card a best one;
    each bot's figures, each team's luck and skill, the worst decisions. Its numbers are made up: the
    page's drawing of them is what is tested."""
    marked = MARKED if marked is None else marked
    players = match["players"]
    first = next(i for i, o in enumerate(match["replay"]) if not o.get("thrown_in"))
    deals, worst = [], []
    for i, outcome in enumerate(match["replay"]):
        if outcome.get("thrown_in"):
            deals.append({"index": i, "thrown_in": True, "score": [0, 0], "result": [0, 0],
                          "luck": [0, 0], "skill": [0, 0], "cards": [], "accuracy": [None] * 4,
                          "bidding": {"contract": None}})
            continue
        held = [set(h) for h in match["record"]["deals"][i]["hands"]]
        cards = []
        for k, (seat, played) in enumerate(plays_by_seat(match, i)):
            label, loss = marked.get(k, ("", 0)) if i == first else ("", 0)
            others = sorted(held[seat] - {played})
            if not others:  # the seat's last card: the only one it could play
                cards.append({"i": k, "trick": k // 4, "seat": seat, "card": played, "action": played,
                              "choices": 1})
                continue
            value = 60 - k
            cards.append({"i": k, "trick": k // 4, "seat": seat, "card": played, "action": played,
                          "choices": 2, "value": value, "best_value": value + loss,
                          "best": [others[0]] if loss else [played], "loss": loss, "label": label or None,
                          "accuracy": 100.0 - loss})
            if loss:
                worst.append({"kind": "card", "deal": i, "i": k, "trick": k // 4, "seat": seat,
                              "bot": players[seat], "played": played, "better": [others[0]], "loss": loss,
                              "label": label or None})
            held[seat].discard(played)
        result = outcome["score"][0] - outcome["score"][1]
        deals.append({"index": i, "thrown_in": False, "score": outcome["score"], "result": [result, -result],
                      "luck": [result - 10, 10 - result], "skill": [10, -10], "cards": cards,
                      "accuracy": [90.0, 80.5, 70.0, 60.5],
                      "bidding": {"contract": None, "par": {"contract": {"text": "100S", "takers": 1}},
                                  "bidding_loss": [20, -20]}})
    worst.append({"kind": "bidding", "deal": first, "team": 1, "bot": players[1], "played": "90H by team 0",
                  "better": ["100S by team 1"], "loss": 3, "label": None})
    worst.sort(key=lambda w: -w["loss"])
    bots = [{"bot": name, "seats": [s for s in range(4) if players[s] == name], "decisions": 40, "loss": 100,
             "loss_per_decision": 2.5, "accuracy": 88.8, "inaccuracies": 1, "mistakes": 1, "blunders": 1,
             "second_opinion": {"decisions": 0, "loss_per_decision": None}}
            for name in dict.fromkeys(players)]
    teams = [{"team": t, "name": players[t], "result": 30 * (1 - 2 * t), "luck": 20 * (1 - 2 * t),
              "skill": 10 * (1 - 2 * t)} for t in (0, 1)]
    return {"match_id": match["match_id"], "format": 1, "note": "A double-dummy note.",
            "settings": {"labels": {"inaccuracy": 5, "mistake": 10, "blunder": 20}}, "bots": bots,
            "teams": teams, "worst": worst, "deals": deals}
