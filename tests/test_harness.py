"""The bot author's one-call harness: an in-process node, the bot over real gRPC."""

from __future__ import annotations

from belote_bot import Action, Bot, HeuristicBot, Observation, RandomBot

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
    assert result.strikes == 0 and result.strikes_by_kind == {} and str(result).endswith("; no strike")


def test_play_local_accepts_a_bot_instance_as_opponent() -> None:
    result = play_local(RandomBot(seed=3), opponent=RandomBot(seed=4), matches=1, ruleset="classic", deals=1)
    assert len(result.matches) == 1 and result.matches[0].deals_played == 1


class OneIllegalAnswerAMatchBot(Bot):
    """Answers its first decision of each match, a bid, with a card: not one of the legal actions."""

    name = "one-illegal"

    def __init__(self) -> None:
        self.struck: set[str] = set()

    def act(self, obs: Observation) -> Action | str:
        if obs.match_id not in self.struck:
            self.struck.add(obs.match_id)
            assert obs.phase == "bidding"
            return "AS"
        return obs.legal_actions[0]


def test_play_local_counts_the_bot_s_strikes_and_not_its_opponent_s() -> None:
    result = play_local(OneIllegalAnswerAMatchBot(), opponent="heuristic", matches=2, ruleset="coinche",
                        deals=1)
    # the candidate's one strike a match, on whichever side it sat; the heuristic has none
    struck = [r.players[s.seat] for r in result.matches for s in r.strikes]
    assert struck == ["candidate", "candidate"]
    assert result.strikes == 2 and sum(result.strikes_by_kind.values()) == 2
    kinds = ", ".join(f"{k} {n}" for k, n in result.strikes_by_kind.items())
    assert str(result).endswith(f"; 2 strikes ({kinds})")


class VersionedBot(HeuristicBot):
    """The class a bot author releases: it says its version, as the README's versions section shows."""

    version = "2"


def test_play_local_plays_a_bot_that_says_its_version() -> None:
    """The README's way to test a bot locally tests the very class that is then released: a bot with a
    ``version`` is seated at that version (its first, so promoted), not waited for as an unversioned one."""
    result = play_local(VersionedBot(), opponent="random", matches=2, ruleset="coinche", deals=2)
    assert len(result.matches) == 2
    for record in result.matches:
        mine = [b for b in record.bots if b.name == "candidate"]
        assert len(mine) == 2 and all(b.version == "2" for b in mine)
    assert result.wins + result.draws + result.losses == 2
