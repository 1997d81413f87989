"""The bot author's one-call harness: an in-process node, the bot over real gRPC."""

from __future__ import annotations

from belote_bot import Bot, Observation, RandomBot

from arena.harness import play_local


class FirstLegalBot(Bot):
    name = "first-legal"

    def act(self, obs: Observation) -> str:
        return str(obs.legal_actions[-1])  # a text answer is parsed by the SDK


def test_play_local_plays_the_bot_against_a_builtin_on_both_sides() -> None:
    result = play_local(FirstLegalBot(), opponent="heuristic", matches=2, ruleset="coinche", deals=2)
    assert len(result.matches) == 2
    assert result.wins + result.losses + result.draws == 2
    seats = [record.players[0] for record in result.matches]
    assert seats == ["candidate", "opponent"]  # the candidate plays each side once
    for record in result.matches:
        assert record.strikes == ()
        match, _ = record.replay()
        assert tuple(match.totals) == record.totals
    assert str(result).startswith("2 matches:")


def test_play_local_accepts_a_bot_instance_as_opponent() -> None:
    result = play_local(RandomBot(seed=3), opponent=RandomBot(seed=4), matches=1, ruleset="classic", deals=1)
    assert len(result.matches) == 1 and result.matches[0].deals_played == 1
