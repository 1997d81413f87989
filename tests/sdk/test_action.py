"""Action: the wire code, its record text both ways, and what it says."""

from __future__ import annotations

import pytest
from belote_bot import Action

from arena.engine import ActionError, Card, format_action, parse_action
from arena.engine import actions as A


def every_action_code() -> list[int]:
    """One code of every kind: each bid, each card with each combination of words."""
    bids = [A.PASS, A.TAKE, A.REDEAL, A.COINCHE, A.SURCOINCHE, *(A.CHOOSE + s for s in range(4))]
    bids += [A.bid_action(v, s) for v in [*range(80, 250, 10), A.CAPOT_VALUE] for s in range(4)]
    cards = [
        card | words | A.decl_code(counts) << A.DECL_SHIFT
        for card in range(32)
        for words in (0, A.BELOTE_WORD, A.REBELOTE_WORD)
        for counts in [(0, 0, 0, 0), (1, 0, 0, 0), (2, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1),
                       (1, 0, 0, 1), (0, 0, 0, 2), (3, 0, 0, 0)]
    ]
    return bids + cards


@pytest.mark.parametrize(
    "text",
    ["pass", "take", "redeal", "coinche", "surcoinche", "H", "90H", "160C", "capotS", "JH", "TD", "7S",
     "KH belote", "QH rebelote", "AS tierce", "AS tierce cinquante", "JC carre", "9D tierce tierce"],
)
def test_record_text_round_trips(text: str) -> None:
    action = Action.parse(text)
    assert str(action) == text
    assert action.code == parse_action(text)
    assert Action(action.code) == action
    assert repr(action) == f"Action({text!r})"


def test_every_code_round_trips_through_its_text() -> None:
    for code in every_action_code():
        action = Action(code)
        assert str(action) == format_action(code)
        assert Action.parse(str(action)) == action
        assert int(action) == code


def test_bids_say_what_they_are() -> None:
    assert Action.parse("pass").is_pass and Action.parse("pass").is_bid
    assert Action.parse("take").is_take
    assert Action.parse("coinche").is_coinche and Action.parse("surcoinche").is_surcoinche
    assert Action.parse("redeal").is_redeal
    bid = Action.parse("90H")
    assert (bid.is_bid, bid.is_play, bid.value, bid.suit, bid.card) == (True, False, 90, "H", None)
    capot = Action.parse("capotS")
    assert (capot.value, capot.suit, capot.is_capot) == (250, "S", True)
    assert Action.parse("D").suit == "D" and Action.parse("D").value is None
    assert Action.parse("pass").suit is None and Action.parse("coinche").value is None
    assert Action.parse("pass").declared_kinds == () and not Action.parse("pass").says_belote


def test_card_plays_say_their_card_and_words() -> None:
    jh = Action.parse("JH")
    assert (jh.is_bid, jh.is_play, jh.card, jh.suit, jh.value) == (False, True, Card.parse("JH"), "H", None)
    assert str(jh.card) == "JH"
    assert not jh.says_belote and not jh.says_rebelote and jh.declared_kinds == ()
    kh = Action.parse("KH belote")
    assert kh.says_belote and not kh.says_rebelote and kh.card == Card.parse("KH")
    assert Action.parse("QH rebelote").says_rebelote
    assert Action.parse("AS tierce cinquante").declared_kinds == ("tierce", "cinquante")
    assert Action.parse("9D tierce tierce carre").declared_kinds == ("tierce", "tierce", "carre")


def test_actions_are_values() -> None:
    a, b = Action.parse("JH"), Action.of(parse_action("JH"))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert Action.of(a.code) is Action.of(a.code)
    assert sorted([Action.parse("pass"), Action.parse("7S")]) == [Action.parse("7S"), Action.parse("pass")]
    with pytest.raises(AttributeError):
        a.code = 3  # type: ignore[misc]


@pytest.mark.parametrize("code", [-1, 0xFFFFFFFF, 1 << 15, A.BID + 9, A.BID + 15, A.bid_action(70, 0),
                                  A.bid_action(260, 0), True])
def test_not_an_action_code(code: int) -> None:
    with pytest.raises(ActionError):
        Action(code)


@pytest.mark.parametrize("text", ["", "jack", "95H", "1H", "JH belote belote", "JH hello", "capot"])
def test_malformed_text_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        Action.parse(text)


def test_codes_of_all_kinds_are_distinct() -> None:
    codes = every_action_code()
    assert len(set(codes)) == len(codes)
    texts = [str(Action(c)) for c in codes]
    assert len(set(texts)) == len(texts)
