"""What the replay's tests share: a bot that forfeits mid-deal, and an analysis of a match in the shape the
replay page draws (docs/web.md#the-replay's analysis marks), built from the match's own cards.

The analysis itself is made elsewhere (``GET /api/v1/matches/ID/analysis``); the page's drawing of it is
tested with :func:`analysis_of`, whose marks sit on the cards the match really played and whose better
cards are cards the same seat still held then.
"""

from __future__ import annotations

from typing import Any

from belote_bot import Action, HeuristicBot, Observation

#: the marks :func:`analysis_of` puts, by place in the play of the first played deal: (label, points lost)
MARKED = {5: ("blunder", 24), 10: ("mistake", 12), 21: ("inaccuracy", 5), 26: ("", 2)}


class QuitsMidDeal(HeuristicBot):
    """Plays well until three tricks of a deal are played, then has no answer (its ``act`` raises, so the
    SDK sends the no-action code): strikes, and the match forfeited in the middle of its first deal."""

    def act(self, obs: Observation) -> Action:
        if obs.phase == "play" and len(obs.hand) <= 5:
            raise RuntimeError("gave up")
        return super().act(obs)


def plays_by_seat(match: dict[str, Any], deal: int) -> list[tuple[int, str]]:
    """The (seat, card) of each card played in ``deal`` of a match as ``GET /api/v1/matches/ID`` gives it."""
    out = []
    for trick in match["replay"][deal]["tricks"]:
        for i, card in enumerate(trick["cards"]):
            out.append(((trick["leader"] + i) % 4, card))
    return out


def analysis_of(match: dict[str, Any], marked: dict[int, tuple[str, int]] | None = None) -> dict[str, Any]:
    """An analysis of ``match`` (its view from the API) in the page's shape: every card of every played
    deal valued, the cards of ``marked`` (by place in the first played deal) losing points to a card
    their seat still held, every other card the best one."""
    marked = MARKED if marked is None else marked
    first = next(i for i, o in enumerate(match["replay"]) if not o.get("thrown_in"))
    deals = []
    for i, outcome in enumerate(match["replay"]):
        if outcome.get("thrown_in"):
            continue
        held = [set(h) for h in match["record"]["deals"][i]["hands"]]
        cards = []
        for k, (seat, played) in enumerate(plays_by_seat(match, i)):
            label, loss = marked.get(k, ("", 0)) if i == first else ("", 0)
            others = sorted(held[seat] - {played})
            if not others:  # the seat's last card: the only one it could play
                label, loss = "", 0
            best = [others[0]] if loss else [played]
            value = 60 + k
            cards.append({"trick": k // 4, "card": k % 4, "seat": seat, "played": played, "value": value,
                          "best": best, "best_value": value + loss, "loss": loss, "label": label})
            held[seat].discard(played)
        deals.append({"deal": i, "cards": cards})
    return {"match_id": match["match_id"], "state": "ready", "deals": deals}
