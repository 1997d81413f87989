"""Action texts are remembered, within a bound: a bot's answer may be any number, and the referee
formats an illegal one for its strike, so a flood of distinct numbers must not grow the memory."""

from __future__ import annotations

import pytest

from arena.engine import actions
from arena.engine.actions import BELOTE_WORD, format_action, parse_action
from arena.engine.cards import CARD_TEXTS, CARDS


@pytest.mark.reliability
def test_remembered_texts_are_the_texts_and_stay_bounded() -> None:
    first = {a: format_action(a) for a in (0, 31, 5 | BELOTE_WORD)}
    for n in range(20_000):  # distinct numbers, as a hostile bot's answers could be
        format_action(1 << 40 | n) if n & 1 else format_action(n * 7 % 4096)
    assert len(actions._TEXTS) <= actions._TEXTS_KEPT
    assert {a: format_action(a) for a in first} == first
    assert format_action(5 | BELOTE_WORD) == "QS belote"
    assert parse_action(format_action(5 | BELOTE_WORD)) == 5 | BELOTE_WORD


def test_card_texts_are_the_cards_own() -> None:
    assert tuple(str(c) for c in CARDS) == CARD_TEXTS
