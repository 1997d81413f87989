// Belote Arena's pages: the bots' pages: the list and one bot's page (common.js has the helpers; app.js starts the page).
"use strict";

// -------------------------------------------------------------------- bots
async function botsPage() {
  let offset = Number(query("offset", "0")) || 0;
  const body = el("div", {});
  const draw = async () => {
    setQuery({ offset: offset || "" });
    const page = await getJSON(`/bots?offset=${offset}&limit=${PAGE_SIZE}`);
    if (page.total === 0) {
      body.replaceChildren(empty("empty", "No bot is registered on this arena yet.",
        ["Register one with ", command(HOW_TO_REGISTER), " (it prints the bot's token, once), then run " +
         "your bot with that token: docs/tutorial/write-a-bot.md."],
        ["Or see the whole arena at work with ", command(HOW_TO_DEMO), "."]));
      return;
    }
    const rows = page.items.map((b) => el("tr", { "data-bot": b.name },
      el("td", { class: "name" }, botLink(b.name)),
      el("td", { class: "name version", text: b.version }),
      el("td", { text: b.connected ? "connected" : "" }),
      el("td", { text: b.revoked ? "revoked" : "" })));
    body.replaceChildren(scroll(table([["bot", "name"], ["client", "name"], ["here"], [""]], rows, { id: "bots" })),
                         pager(page, (o) => { offset = o; draw().catch(showError); }));
  };
  show(el("h1", { text: "Bots" }), body);
  await draw();
}

// The online Elo as it went, with both axes labelled (it is not the Bradley-Terry rating of the table).
function historyChart(h) {
  const points = h.history;
  if (!points.length) {
    return el("p", { class: "muted", id: "history", text: "No point yet in this pool." });
  }
  const width = 480, height = 220, left = 52, right = 14, top = 12, bottom = 40;
  const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
  const xt = ticks(0, Math.max(...xs), 5);
  const yt = ticks(Math.min(...ys) - 5, Math.max(...ys) + 5, 4);
  const [x0, x1, y0, y1] = [xt[0], xt[xt.length - 1], yt[0], yt[yt.length - 1]];
  const sx = (v) => left + (x1 > x0 ? (v - x0) / (x1 - x0) : 0.5) * (width - left - right);
  const sy = (v) => height - bottom - (y1 > y0 ? (v - y0) / (y1 - y0) : 0.5) * (height - top - bottom);
  const last = points[points.length - 1];
  const chart = svg("svg", { class: "chart", id: "history", viewBox: `0 0 ${width} ${height}`, role: "img",
                             "aria-label": `online Elo of ${h.bot} in ${h.pool}: ${fixed(last[1], 0)} after ${last[0]} games` });
  const axes = chartAxes(xt, yt, sx, sy, { width, height, left, right, top, bottom });
  axes.append(svg("text", { class: "axis-label", id: "x-label", x: (left + width - right) / 2, y: height - 6,
                            "text-anchor": "middle" }, `games played in ${h.pool}`),
              svg("text", { class: "axis-label", id: "y-label", x: -(top + height - bottom) / 2, y: 14,
                            transform: "rotate(-90)", "text-anchor": "middle" }, "online Elo"));
  chart.append(axes);
  if (points.length > 1) chart.append(svg("polyline", { points: points.map((p) => `${sx(p[0])},${sy(p[1])}`).join(" ") }));
  for (const [games, rating] of points) {
    const dot = svg("circle", { class: "point", cx: sx(games), cy: sy(rating), r: 3 });
    dot.append(svg("title", {}, `after ${games} games: ${fixed(rating, 0)}`));
    chart.append(dot);
  }
  return chart;
}

function result(m) {
  if (m.sealed) return `${m.state}, sealed`;
  if (m.state === "running") return "running";
  if (m.state === "aborted") return "aborted";
  return m.winner === null ? "draw" : `${m.teams[m.winner]} won`;
}

// How a match ended, when it is worth a word: a forfeit (played to its end says nothing more).
function how(m) { return m.reason === "finished" ? "" : m.reason; }

// A match of a tournament by its place in the schedule ("r1-10"), its tournament said beside it.
function shortId(m) {
  const prefix = `${m.tournament_id}-`;
  return m.tournament_id && m.match_id.startsWith(prefix) ? m.match_id.slice(prefix.length) : m.match_id;
}

function matchRows(matches) {
  return matches.map((m) => el("tr", { "data-match": m.match_id },
    el("td", { class: "name" }, matchLink(m.match_id, shortId(m))),
    el("td", { class: "name tournament" }, m.tournament_id ? tournamentLink(m.tournament_id) : el("span", { class: "muted", text: "single" })),
    sidesCell(m),
    // a sealed table: another table deals its cards and is not over, so its score is not shown yet
    el("td", { class: "score", text: m.sealed || !m.totals.length ? "" : `${m.totals[0]} \u2013 ${m.totals[1]}` }),
    el("td", { class: "name result wide", text: result(m) }),
    el("td", { class: "muted name wide",
               text: m.sealed ? "shown once every table dealing its cards is over" : how(m) })));
}

// Why a bot has no rating, from what it played: nothing, single matches only, or tournament games
// not rated yet.
function whyNotRated(detail) {
  const matches = detail.recent_matches;
  const single = matches.filter((m) => !m.tournament_id).length;
  const rate = ["Ratings come from tournaments: ", command(HOW_TO_RATE), "."];
  if (!matches.length) return empty("not-rated", "Not rated yet: it has played no match here.", rate);
  if (single === matches.length) {
    return empty("not-rated", `Not rated: its ${matches.length === 1 ? "match" : `${matches.length} matches`} ` +
                 "below were single matches, and single matches (belote-arena match start) are unrated.", rate);
  }
  return empty("not-rated", "Not rated yet: a tournament game counts once its result is written (a " +
               "duplicate pair once both its legs are over).", rate);
}

async function botPage() {
  const name = pathPart(2);
  const detail = await getJSON(`/bots/${encodeURIComponent(name)}`);
  const b = detail.bot;
  document.title = `${b.name} \u2013 Belote Arena`;
  const methods = new Set(detail.ratings.map((r) => r.method));
  const methodColumn = methods.size > 1 ? "name" : "name gone";
  const ratings = detail.ratings.map((r) => el("tr", { "data-pool": r.pool },
    el("td", { class: "name", text: r.pool }), el("td", { class: methodColumn, text: METHOD_NAMES[r.method] || r.method }),
    el("td", { text: r.rank }), el("td", { class: "rating", text: fixed(r.rating, 0) }),
    el("td", { class: "wide", text: r.low === null ? "" : `${fixed(r.low, 0)} \u2013 ${fixed(r.high, 0)}` }),
    el("td", { text: r.games })));
  const ratingsTitle = methods.size === 1 ? `Ratings (${METHOD_NAMES[[...methods][0]] || [...methods][0]})` : "Ratings";
  // the online Elo is kept where the bot played one bot a side (its Bradley-Terry pools)
  const pools = [...new Set(detail.ratings.filter((r) => r.method === "bt").map((r) => r.pool))];
  const history = el("div", { id: "history-box" });
  const drawHistory = async (pool) => {
    const path = `/bots/${encodeURIComponent(name)}/history?pool=${encodeURIComponent(pool)}`;
    const [h, bt] = await Promise.all([getJSON(path), getJSON(`${path}&method=bt`)]);
    history.replaceChildren(
      el("p", { class: "muted", id: "history-note" },
         `The table above is the Bradley-Terry rating, fitted over every game at once. This chart is the ` +
         `online Elo (K=${h.k}), which moves with each result: a point after every ${h.every} games, and the latest.`),
      historyChart(h),
      el("p", { class: "muted", id: "bt-history-note" },
         "The Bradley-Terry rating as the pool was fitted now and then, with its 95% interval:"),
      btChart(bt));
  };
  let historySection = [];
  const box = el("div", { id: "bot-history" });  // its statistics, head-to-head and history (history.js)
  if (pools.length) {
    const select = el("select", { id: "history-pool", "aria-label": "pool of the rating history" },
      ...pools.map((p) => el("option", { value: p, text: p })));
    select.addEventListener("change", () => drawHistory(select.value).catch(showError));
    historySection = [el("h2", { text: "Ratings as they went" }),
                      pools.length > 1 ? el("div", { class: "controls" }, el("label", {}, "Pool ", select)) : "",
                      history];
  }
  // the client the bot connected with, as it said (the SDK says belote_bot/0.1.0, its own version): not the
  // bot's own version, which its versions page shows
  show(el("h1", { id: "bot-name", text: b.name }),
       el("p", { class: "version-line" }, "Client: ", el("code", { id: "bot-version", text: b.version || "(not connected here)" }),
          b.connected ? " \u00b7 connected to this node" : "", b.revoked ? " \u00b7 revoked" : ""),
       el("p", { id: "versions-link" },
          el("a", { href: `/bots/${encodeURIComponent(b.name)}/versions`, text: "Versions and their tests" })),
       detail.ladder_pause ? el("p", { id: "ladder-pause", class: "error", text: detail.ladder_pause.why }) : "",
       el("h2", { text: ratings.length ? ratingsTitle : "Ratings" }),
       ratings.length ? scroll(table([["pool", "name"], ["method", methodColumn], ["rank"], ["rating"], ["95% interval", "wide"], ["games"]],
                                     ratings, { id: "ratings" })) : whyNotRated(detail),
       ...historySection,
       el("h2", { text: "Recent matches" }),
       detail.recent_matches.length ?
         scroll(table([["match", "name"], ["tournament", "name"], ["teams", "name"], ["score"], ["result", "name wide"], ["", "wide"]],
                      matchRows(detail.recent_matches), { id: "recent" })) :
         el("p", { class: "muted", id: "no-matches", text: "No matches yet." }),
       box);
  const allPools = [...new Set(detail.ratings.map((r) => r.pool))];
  await Promise.all([pools.length ? drawHistory(pools[0]) : null, drawBotHistory(box, name, allPools)]);
}
