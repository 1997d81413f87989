// Belote Arena's pages: the leaderboard page (common.js has the helpers; app.js starts the page).
"use strict";

// -------------------------------------------------------------- leaderboard
function intervalBar(entry, low, high) {
  const width = 160, height = 14, pad = 4;
  const x = (v) => pad + (high > low ? (v - low) / (high - low) : 0.5) * (width - 2 * pad);
  const bar = svg("svg", { class: "bar", width, height, viewBox: `0 0 ${width} ${height}` });
  if (entry.low !== null && entry.high !== null) {
    bar.append(svg("line", { x1: x(entry.low), x2: x(entry.high), y1: height / 2, y2: height / 2 }));
  }
  bar.append(svg("circle", { cx: x(entry.rating), cy: height / 2, r: 3.5 }));
  return bar;
}

// A bot in a leaderboard's row, at the version it plays as ("alpha 2"): its promoted one, which the row rates,
// said "promoted by hand" when its owner or an admin chose it over the tests (docs/web.md, Versions).
function botCell(e) {
  return el("td", { class: "name bot" }, botLink(e.bot),
    e.version ? el("span", { class: "played-version", title: `rated as version ${e.version}, the one it plays as` }, " ",
                   el("a", { href: `/bots/${encodeURIComponent(e.bot)}/versions`, text: e.version })) : "",
    e.version && e.promoted_how === "hand" ? el("span", { class: "muted by-hand", text: " promoted by hand" }) : "");
}

// A ranked bot's games: all of them, and for a bot with versions how many the version its row rates played
// ("347, 12 as 3"): a version promoted a moment ago has few, and its rating is mostly the one before it's
// (docs/ratings.md, A rating per version).
function gamesCell(e) {
  return el("td", { class: "games" }, String(e.games),
    e.version ? el("span", { class: "muted version-games",
                             title: `${e.version_games} of them played by version ${e.version}, the one this row rates` },
                   `, ${e.version_games} as ${e.version}`) : "");
}

function noRatingsYet() {
  return empty("empty", "No ratings yet: this arena has played no rated game.",
    "Ratings come from tournaments. A single match (belote-arena match start) is unrated: its bots " +
    "show it on their pages, not here.",
    ["Rank your bots with a tournament between them: ", command(HOW_TO_RATE), "."],
    ["No bot yet? Register one with ", command(HOW_TO_REGISTER), ", or see the whole arena at work with ",
     command(HOW_TO_DEMO), "."]);
}

async function leaderboardPage() {
  const { pools, methods } = await getJSON("/pools");
  if (!pools.length) {
    show(el("h1", { text: "Leaderboard" }), noRatingsYet());
    return;
  }
  // no pool asked, or one this node does not have: the API's default (the preset with the most games)
  const asked = query("pool", "");
  const state = { pool: pools.includes(asked) ? asked : "", method: query("method", "bt"),
                  offset: Number(query("offset", "0")) || 0 };
  if (!methods.includes(state.method)) state.method = "bt";
  const poolSelect = el("select", { id: "pool", "aria-label": "rating pool" },
    ...pools.map((p) => el("option", { value: p, text: p })));
  const methodSelect = el("select", { id: "method", "aria-label": "rating method" },
    ...methods.map((m) => el("option", { value: m, text: METHOD_NAMES[m] || m })));
  const body = el("div", {});
  const draw = async () => {
    const board = await getJSON(`/leaderboard?pool=${encodeURIComponent(state.pool)}` +
      `&method=${encodeURIComponent(state.method)}&offset=${state.offset}&limit=${PAGE_SIZE}`);
    state.pool = board.pool;
    poolSelect.value = state.pool;
    methodSelect.value = state.method;
    setQuery(state);
    const values = board.entries.flatMap((e) => [e.low ?? e.rating, e.high ?? e.rating]);
    const low = Math.min(...values), high = Math.max(...values);
    const rows = board.entries.map((e) => el("tr", { "data-bot": e.bot },
      ...ratingCells(e, low, high),
      el("td", { class: "los", text: percent(e.los_next) }),
      gamesCell(e),
      el("td", { class: "wins wide", text: e.wins }),
      el("td", { class: "draws wide", text: e.draws }),
      el("td", { class: "losses wide", text: e.losses }),
      el("td", { class: "score wide", text: fixed(e.score, 3) })));
    body.replaceChildren(
      board.entries.length === 0 ? el("p", { class: "muted", id: "empty", text: "No rated games in this pool yet." }) :
        scroll(table([["#"], ["bot", "name"], ["rating"], ["95% interval", "name interval"], ["low \u2013 high", "wide"],
                      ["LOS next"], ["games"], ["W", "wide"], ["D", "wide"], ["L", "wide"], ["score", "wide"]],
                     rows, { id: "leaderboard" })),
      pager(board, (offset) => { state.offset = offset; draw().catch(showError); }));
  };
  poolSelect.addEventListener("change", () => { state.pool = poolSelect.value; state.offset = 0; draw().catch(showError); });
  methodSelect.addEventListener("change", () => { state.method = methodSelect.value; state.offset = 0; draw().catch(showError); });
  show(el("h1", { text: "Leaderboard" }),
       el("div", { class: "controls" }, el("label", {}, "Pool ", poolSelect), el("label", {}, "Method ", methodSelect)),
       el("p", { class: "muted note", text: "LOS next: the likelihood this bot is stronger than the next one down." }),
       body);
  await draw();
}
