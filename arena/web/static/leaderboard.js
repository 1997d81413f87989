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

// Whether a ranked bot is connected now, to this node or another (the nodes' heartbeats): a dot, said in words
// to a screen reader. A row of a board that does not know says nothing.
function presenceCell(e) {
  if (e.connected === null || e.connected === undefined) return el("td", { class: "presence" });
  const words = e.connected ? "connected now" : "not connected";
  return el("td", { class: `presence ${e.connected ? "on" : "off"}`, title: words, "aria-label": words },
            e.connected ? "\u25cf" : "\u25cb");
}

// A provisional rating (too few games, or too wide an interval, for its rank to be settled) is marked "?"
// after it, as chess sites do; the note under the table says the rule, from the API.
function provisionalNote(rule) {
  return el("p", { class: "muted note", id: "provisional-note",
                   text: `? after a rating: provisional, fewer than ${rule.games} games in the pool or a 95% ` +
                         `interval wider than \u00b1${fixed(rule.half_width, 0)}; its rank may still move far.` });
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
                  offset: Number(query("offset", "0")) || 0, q: query("q", "") };
  if (!methods.includes(state.method)) state.method = "bt";
  const poolSelect = el("select", { id: "pool", "aria-label": "rating pool" },
    ...pools.map((p) => el("option", { value: p, text: p })));
  const methodSelect = el("select", { id: "method", "aria-label": "rating method" },
    ...methods.map((m) => el("option", { value: m, text: METHOD_NAMES[m] || m })));
  const search = el("input", { id: "search", type: "search", placeholder: "a bot's name", "aria-label": "find a bot by name",
                                maxlength: "64", autocomplete: "off", spellcheck: "false" });
  search.value = state.q;
  const body = el("div", {});
  let asking = 0;  // the latest draw's number: an older answer arriving late is not drawn over it
  const draw = async () => {
    const mine = ++asking;
    const board = await getJSON(`/leaderboard?pool=${encodeURIComponent(state.pool)}` +
      `&method=${encodeURIComponent(state.method)}&offset=${state.offset}&limit=${PAGE_SIZE}` +
      (state.q ? `&q=${encodeURIComponent(state.q)}` : ""));
    if (mine !== asking) return;
    state.pool = board.pool;
    poolSelect.value = state.pool;
    methodSelect.value = state.method;
    setQuery(state);
    const values = board.entries.flatMap((e) => [e.low ?? e.rating, e.high ?? e.rating]);
    const low = Math.min(...values), high = Math.max(...values);
    const rows = board.entries.map((e) => el("tr", { "data-bot": e.bot, "data-connected": String(e.connected),
                                                     "data-provisional": String(e.provisional) },
      ...ratingCells(e, low, high).map((cell, i) => (i === 1 ? [cell, presenceCell(e)] : [cell])).flat(),
      el("td", { class: "los", text: percent(e.los_next) }),
      gamesCell(e),
      el("td", { class: "wins wide", text: e.wins }),
      el("td", { class: "draws wide", text: e.draws }),
      el("td", { class: "losses wide", text: e.losses }),
      el("td", { class: "score wide", text: fixed(e.score, 3) })));
    const none = state.q ?
      el("p", { class: "muted", id: "no-match", text: `No bot of this pool has \u201c${state.q}\u201d in its name.` }) :
      el("p", { class: "muted", id: "empty", text: "No rated games in this pool yet." });
    body.replaceChildren(
      board.entries.length === 0 ? none :
        scroll(table([["#"], ["bot", "name"], ["on", "presence"], ["rating"], ["95% interval", "name interval"],
                      ["low \u2013 high", "wide"], ["LOS next"], ["games"], ["W", "wide"], ["D", "wide"], ["L", "wide"],
                      ["score", "wide"]],
                     rows, { id: "leaderboard" })),
      board.entries.some((e) => e.provisional) ? provisionalNote(board.provisional_rule) : "",
      pager(board, (offset) => { state.offset = offset; draw().catch(showError); }));
  };
  let typing = null;
  search.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => { state.q = search.value.trim(); state.offset = 0; draw().catch(showError); }, 200);
  });
  poolSelect.addEventListener("change", () => { state.pool = poolSelect.value; state.offset = 0; draw().catch(showError); });
  methodSelect.addEventListener("change", () => { state.method = methodSelect.value; state.offset = 0; draw().catch(showError); });
  show(el("h1", { text: "Leaderboard" }),
       el("div", { class: "controls" }, el("label", {}, "Pool ", poolSelect), el("label", {}, "Method ", methodSelect),
          el("label", {}, "Find ", search)),
       el("p", { class: "muted note", text: "LOS next: the likelihood this bot is stronger than the next one down. " +
                                            "On: \u25cf connected now, \u25cb not." }),
       body);
  await draw();
}
