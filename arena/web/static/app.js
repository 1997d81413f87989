// Belote Arena's pages: the start: which page this is, and drawing it (common.js has the helpers; app.js starts the page).
"use strict";

// ------------------------------------------------------------------- start
const PAGES = { leaderboard: leaderboardPage, bots: botsPage, bot: botPage, tournaments: tournamentsPage,
                tournament: tournamentPage, versions: versionsPage, ladders: laddersPage, ladder: ladderPage, schedules: schedulesPage,
                live: livePage, replay: replayPage };

document.addEventListener("DOMContentLoaded", () => {
  const page = PAGES[document.body.dataset.page];
  if (page) page().catch(showError);
});
