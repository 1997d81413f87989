// Belote Arena's pages: the ladders' pages (common.js has the helpers; app.js starts the page).
"use strict";

// ----------------------------------------------------------------- ladders
const HOW_TO_LADDER = "belote-arena ladder start --pool coinche";
const HOW_TO_LADDER_ADD = "belote-arena ladder add --pool coinche alpha beta gamma";
const HOW_TO_SCHEDULE = "belote-arena tournament schedule --every 24h --at 02:00 --format swiss --bots a,b,c";
// a ladder's page draws it again this often (ms): its standings move as its matches end
const LADDER_REFRESH_MS = 5000;

function ladderLink(pool) { return el("a", { href: `/ladders/${encodeURIComponent(pool)}`, text: pool }); }

function ladderState(l) {
  const playing = l.in_progress === 1 ? "1 match in progress" : `${l.in_progress} matches in progress`;
  return `${l.on ? "on" : "off"}: matches of ${l.deals} deal${l.deals === 1 ? "" : "s"}, ${playing}`;
}

async function laddersPage() {
  const { ladders } = await getJSON("/ladders");
  if (!ladders.length) {
    show(el("h1", { text: "Ladders" }), empty("empty", "No ladder yet.",
      "A ladder keeps the bots opted in to a pool playing rated matches, without a tournament.",
      ["An admin opts bots in with ", command(HOW_TO_LADDER_ADD), " and starts it with ", command(HOW_TO_LADDER), "."]));
    return;
  }
  const rows = ladders.map((l) => el("tr", { "data-pool": l.pool },
    el("td", { class: "name" }, ladderLink(l.pool)), el("td", { class: "name state", text: l.on ? "on" : "off" }),
    el("td", { class: "bots", text: l.bots }), el("td", { class: "playing", text: l.in_progress }),
    el("td", { class: "wide", text: l.deals })));
  show(el("h1", { text: "Ladders" }),
       scroll(table([["pool", "name"], ["state", "name"], ["bots"], ["in progress"], ["deals", "wide"]], rows, { id: "ladders" })));
}

// A ladder's bots: each with its state (playing, or paused from the ladder: until when, and why) and its
// games in the pool by opponent, most first.
function ladderBots(l) {
  const states = new Map((l.bot_states || []).map((b) => [b.bot, b]));
  const rows = l.bots.map((name) => {
    const b = states.get(name) || { opponents: [], other_games: 0, paused_until: 0 };
    const against = b.opponents.map((o) => `${o.bot} ${o.games}`).join(", ") +
      (b.other_games ? ` (+${b.other_games} against others)` : "");
    return el("tr", { "data-bot": name },
      el("td", { class: "name" }, botLink(name)),
      el("td", { class: `name state${b.paused_until ? " error" : ""}`,
                 text: b.paused_until ? `paused until ${when(b.paused_until).slice(11)}` : "playing" }),
      el("td", { class: "name opponents", text: against || "no game yet" }));
  });
  const paused = (l.bot_states || []).filter((b) => b.paused_until);
  return [scroll(table([["bot", "name"], ["state", "name"], ["games by opponent", "name"]], rows, { id: "ladder-bots" })),
          paused.length ? el("ul", { id: "ladder-paused", class: "muted" },
                             ...paused.map((b) => el("li", { "data-bot": b.bot, text: b.paused_why }))) : ""];
}

async function ladderPage() {
  const pool = pathPart(2);
  document.title = `Ladder ${pool} \u2013 Belote Arena`;
  const state = el("p", { id: "ladder-state" });
  const standings = el("div", {});
  const bots = el("div", {});
  const picks = el("div", {});
  const draw = async () => {
    const l = await getJSON(`/ladders/${encodeURIComponent(pool)}?limit=${PAGE_SIZE}`);
    picks.replaceChildren(l.picks.length ?
      el("ol", { id: "ladder-picks", class: "picks" }, ...l.picks.map((p) => el("li", { "data-match": p.match_id },
        el("span", { class: "muted", text: `${when(p.at)}: ` }), matchLink(p.match_id, `${p.a} v ${p.b}`),
        el("span", { text: ` – ${p.why.replace(/^\S+ \([^)]*\) v \S+ \([^)]*\), /, "")}` })))) :
      el("p", { class: "muted", id: "no-picks", text: "No pairing yet: the matchmaking pairs the opted-in bots " +
                                                       "connected with free seats, once the ladder is on." }));
    state.textContent = ladderState(l);
    const board = l.standings;
    if (board.entries.length === 0) {
      standings.replaceChildren(el("p", { class: "muted", id: "no-standings",
        text: "No rated game in this pool yet: the standings appear as the ladder's matches end." }));
    } else {
      const values = board.entries.flatMap((e) => [e.low ?? e.rating, e.high ?? e.rating]);
      const low = Math.min(...values), high = Math.max(...values);
      const rows = board.entries.map((e) => el("tr", { "data-bot": e.bot },
        ...ratingCells(e, low, high),
        gamesCell(e),
        el("td", { class: "wins wide", text: e.wins }),
        el("td", { class: "draws wide", text: e.draws }),
        el("td", { class: "losses wide", text: e.losses })));
      standings.replaceChildren(
        scroll(table([["#"], ["bot", "name"], ["rating"], ["95% interval", "name interval"], ["low \u2013 high", "wide"],
                      ["games"], ["W", "wide"], ["D", "wide"], ["L", "wide"]], rows, { id: "standings" })),
        board.total > board.entries.length ?
          el("p", { class: "muted" }, `The first ${board.entries.length} of ${board.total}: the rest on `,
             el("a", { href: `/?pool=${encodeURIComponent(pool)}&method=bt`, text: "the leaderboard" }), ".") : "");
    }
    bots.replaceChildren(...(l.bots.length ? ladderBots(l) : [
      empty("no-bots", "No bot is opted in to this ladder.",
        ["An admin opts bots in with ", command(`belote-arena ladder add --pool ${pool} BOT`), "."])]));
  };
  show(el("h1", { text: `Ladder ${pool}` }), state,
       el("p", { class: "muted note", text: "Bradley-Terry ratings of the pool's rated games, with their 95% intervals; " +
                                            "this page follows them as the ladder's matches end." }),
       el("h2", { text: "Standings" }), standings,
       el("h2", { text: "Latest pairings, and why" }),
       el("p", { class: "muted note", text: "Each pairing is the game expected to narrow the pool's 95% intervals " +
                                            "most, within the fairness bounds (docs/ratings.md, Matchmaking)." }),
       picks, el("h2", { text: "Bots opted in" }),
       el("p", { class: "muted note", text: "Each bot's games in the pool by opponent (every rated game of the pool). " +
                                            "A bot whose recent ladder matches ended in its forfeit is paused from the ladder " +
                                            "for a while, longer each time (docs/ratings.md, Matchmaking)." }),
       bots);
  await draw();
  const again = () => setTimeout(() => draw().then(again, showError), LADDER_REFRESH_MS);
  again();
}
