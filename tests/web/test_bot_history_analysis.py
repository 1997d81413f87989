"""Why did my bot lose, from its history: once the node has analysed a match the bot lost, its history
gives that match's accuracy, its statistics the accuracy over time, and ``belote-arena bot report`` the
bot's worst decisions in that loss, each with the better card or contract: what the analysis says
(``GET /api/v1/matches/ID/analysis``). The history never asks for an analysis: a match not analysed
shows none. The bot's page shows the accuracy, in a real browser.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from belote_bot import Action, HeuristicBot, Observation

from arena.cli import main
from arena.cli.bots import worst_text
from arena.engine import Ruleset
from arena.tournament import TournamentSpec
from tests.web.browser import WIDE, Watched, browser, needs_chromium
from tests.web.site import Site, get

pytestmark = [pytest.mark.slow]
__all__ = ["browser"]  # the fixture


class CarelessBot(HeuristicBot):
    """Bids as the heuristic bot does, then plays any legal card: its contracts are sound, its play is not."""

    def act(self, obs: Observation) -> Action:
        if obs.phase == "play":
            return self.rng.choice(obs.legal_actions)
        return super().act(obs)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A node where the careless bot played four one-deal coinche matches against the heuristic bot.

    One deal a match: the loss analysed still lists the careless bot's worst decisions, in half the CPU
    of a two-deal one. Four matches: the two matches of a round are played at once, so which bot gets
    which random draw varies; the careless bot loses some five one-deal matches in six, so four make a
    loss all but certain (two two-deal matches did before)."""
    spec = TournamentSpec(tournament_id="why", format="round-robin", bots=("heuristic", "weak"),
                          ruleset=Ruleset.from_spec("coinche"), deals=1, rounds=2, seed="why/1",
                          unrated_reason="a test's seed")
    s = Site(Path(tmp_path_factory.mktemp("why")), tournaments=[spec],
             players={"heuristic": HeuristicBot(seed=1), "weak": CarelessBot(seed=2)})
    try:
        yield s
    finally:
        s.close()


def analysed(site: Site, match_id: str, timeout: float = 600.0) -> dict[str, Any]:
    """The match's analysis, asked for and waited for as a reader of the API does."""
    deadline = time.monotonic() + timeout
    while True:
        status, body = get(site, f"/api/v1/matches/{match_id}/analysis")
        if status == 200:
            return dict(body)
        assert status == 202, body
        assert time.monotonic() < deadline, f"no analysis of {match_id} after {timeout} s"
        time.sleep(0.5)


def test_a_loss_analysed_gives_its_accuracy_and_its_worst_decisions_in_the_history_and_the_report(
        site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    _, before = get(site, "/api/v1/bots/weak/matches?result=loss&limit=100")
    assert before["matches"], "the careless bot lost a match"
    assert all(m["accuracy"] is None for m in before["matches"])  # nothing analysed: none asked for
    loss = before["matches"][0]["match_id"]
    data = analysed(site, loss)
    weak = next(b for b in data["bots"] if b["bot"] == "weak")
    mine = [w for w in data["worst"] if "weak" in str(w["bot"]).split("+")]
    assert mine, "the analysis lists the careless bot's worst decisions"

    _, after = get(site, "/api/v1/bots/weak/matches?limit=100")
    by_id = {m["match_id"]: m for m in after["matches"]}
    assert by_id[loss]["accuracy"] == weak["accuracy"]
    assert all(m["accuracy"] is None for i, m in by_id.items() if i != loss)
    _, stats = get(site, "/api/v1/bots/weak/stats")
    assert [(a["match_id"], a["accuracy"]) for a in stats["statistics"]["accuracy"]] == [
        (loss, weak["accuracy"])]

    assert site.running is not None
    capsys.readouterr()
    assert main(["bot", "report", "weak", "--address", site.running.address, "--result", "loss",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (shown,) = [m for m in report["matches"] if m["match_id"] == loss]
    assert shown["worst_decisions"] == mine[:3]  # its three worst, worst first, each with the better one
    assert all(w["better"] for w in shown["worst_decisions"])
    assert main(["bot", "report", "weak", "--address", site.running.address]) == 0
    out = capsys.readouterr().out
    for w in mine[:3]:
        assert f"      {worst_text(w)}\n" in out
    assert f"accuracy {weak['accuracy']:.1f}" in out


@needs_chromium
def test_the_bots_page_shows_the_accuracy_of_its_analysed_matches(site: Site, browser: Any) -> None:
    _, page_data = get(site, "/api/v1/bots/weak/matches?limit=100")
    analysed_ones = [m for m in page_data["matches"] if m["accuracy"] is not None]
    if not analysed_ones:  # run alone: analyse one first
        analysed(site, page_data["matches"][0]["match_id"])
        _, page_data = get(site, "/api/v1/bots/weak/matches?limit=100")
        analysed_ones = [m for m in page_data["matches"] if m["accuracy"] is not None]
    watched = Watched(browser, WIDE)
    try:
        page = watched.page
        page.goto(site.url + "/bots/weak")
        page.wait_for_selector("#history-table tbody tr")
        for m in analysed_ones:
            cell = page.locator(f'#history-table tr[data-match="{m["match_id"]}"] td.accuracy')
            assert cell.inner_text() == f"{m['accuracy']:.1f}"
        assert "Accuracy in its latest analysed matches" in page.locator("#accuracy-over-time").inner_text()
        assert watched.problems == []
    finally:
        watched.close()
