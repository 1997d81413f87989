// Belote Arena's pages, drawn from the JSON API (/api/v1/). No build step, no dependency.
// Everything a user supplies (bot names, versions, ids) goes into the page as text:
// elements are made with createElement and filled with textContent, never parsed as HTML.
"use strict";

const API = "/api/v1";
const PAGE_SIZE = 50;
const METHOD_NAMES = { bt: "Bradley-Terry", elo: "Elo (online)", openskill: "openskill (mixed partners)" };
const SUIT_SYMBOL = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
const SVG_NS = "http://www.w3.org/2000/svg";
// what a reader of an empty or young node does next (README: Run a referee, Tournaments)
const HOW_TO_REGISTER = "belote-arena bot register NAME";
const HOW_TO_RATE = "belote-arena tournament create --format round-robin --bots A,B,C";
const HOW_TO_DEMO = "belote-arena demo --http 127.0.0.1:8080";

// ------------------------------------------------------------------ helpers
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === "") continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

// A chart's axes: its two lines, a tick and its value at each of xt, a grid line and its value at each
// A ranked bot's first cells, on the leaderboard and a ladder's standings alike: its rank, its name (and
// version), its rating, its 95% interval drawn between low and high, and as numbers.
function ratingCells(e, low, high) {
  return [el("td", { class: "rank", text: e.rank }),
          botCell(e),
          el("td", { class: "rating", text: fixed(e.rating, 0) }),
          el("td", { class: "interval" }, intervalBar(e, low, high)),
          el("td", { class: "range wide", text: e.low === null ? "" : `${fixed(e.low, 0)} \u2013 ${fixed(e.high, 0)}` })];
}

// of yt (sx and sy place a value; the box's width and height less its margins hold the plot).
function chartAxes(xt, yt, sx, sy, { width, height, left, right, top, bottom }) {
  const axes = svg("g", { class: "axes" });
  axes.append(svg("line", { x1: left, x2: width - right, y1: height - bottom, y2: height - bottom }),
              svg("line", { x1: left, x2: left, y1: top, y2: height - bottom }));
  for (const v of xt) {
    axes.append(svg("line", { class: "tick", x1: sx(v), x2: sx(v), y1: height - bottom, y2: height - bottom + 4 }),
                svg("text", { class: "x-tick", x: sx(v), y: height - bottom + 16, "text-anchor": "middle" }, v));
  }
  for (const v of yt) {
    axes.append(svg("line", { class: "grid", x1: left, x2: width - right, y1: sy(v), y2: sy(v) }),
                svg("text", { class: "y-tick", x: left - 6, y: sy(v) + 4, "text-anchor": "end" }, v));
  }
  return axes;
}

class NeedsCredential extends Error {}

async function getJSON(path) {
  const reply = await fetch(API + path, { headers: { Accept: "application/json" } });
  const body = await reply.json().catch(() => ({}));
  if (reply.status === 401) throw new NeedsCredential(body.error || "this arena's reads need a credential");
  if (!reply.ok) throw new Error(body.error || `${reply.status} ${reply.statusText}`);
  return body;
}

// A node with private reads: the reader signs in once; the node keeps the credential in a cookie
// this script cannot read (HttpOnly), which the API calls and the live views' EventSource send.
function showSignIn(message) {
  const input = el("input", { type: "password", name: "token", autocomplete: "current-password",
                              "aria-label": "credential", size: 32, required: "" });
  const status = el("p", { class: "error", role: "alert" });
  const form = el("form", { id: "sign-in", onsubmit: async (event) => {
    event.preventDefault();
    const reply = await fetch(`${API}/session`, {
      method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ token: input.value }) });
    if (reply.ok) { location.reload(); return; }
    const body = await reply.json().catch(() => ({}));
    status.textContent = body.error || `${reply.status} ${reply.statusText}`;
  } }, el("label", {}, "Credential ", input), " ", el("button", { type: "submit", text: "Sign in" }));
  show(el("h1", { text: "Sign in" }), el("p", { class: "muted", text: message }), form, status);
}

function main() { return document.getElementById("main"); }

function show(...nodes) { main().replaceChildren(...nodes.filter((n) => n !== "" && n !== null)); }

function showError(error) {
  if (error instanceof NeedsCredential) { showSignIn(error.message); return; }
  show(el("p", { class: "error", role: "alert", text: String(error.message || error) }));
}

function pathPart(index) {
  return decodeURIComponent(location.pathname.split("/")[index] || "");
}

function query(name, fallback) {
  const value = new URLSearchParams(location.search).get(name);
  return value === null || value === "" ? fallback : value;
}

function setQuery(params) {
  const search = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(params)) {
    if (v === "" || v === null || v === undefined) search.delete(k);
    else search.set(k, String(v));
  }
  const text = search.toString();
  history.replaceState(null, "", text ? `${location.pathname}?${text}` : location.pathname);
}

function botLink(name) { return el("a", { href: `/bots/${encodeURIComponent(name)}`, text: name }); }
// A side of a match: its bot, or its two bots ("north+south": a bot name holds no "+").
function sideLinks(side) {
  return el("span", { class: "side" }, ...String(side).split("+").flatMap((b, i) => (i ? [" & ", botLink(b)] : [botLink(b)])));
}
// The winning side of a finished match that is not sealed is shown in bold.
function won(m, team) { return !m.sealed && m.state !== "running" && m.winner === team; }

function sideCell(m, team, cls) {
  return el("td", { class: `name ${cls || ""}${won(m, team) ? " won-side" : ""}` }, sideLinks(m.teams[team]));
}

function sidesCell(m) {
  const side = (t) => el("span", { class: won(m, t) ? "won-side" : "" }, sideLinks(m.teams[t]));
  return el("td", { class: "name teams" }, side(0), " vs ", side(1));
}
function matchLink(id, text) { return el("a", { href: `/matches/${encodeURIComponent(id)}`, text: text || id, title: id }); }
function tournamentLink(id) { return el("a", { href: `/tournaments/${encodeURIComponent(id)}`, text: id }); }

function fixed(value, digits) { return value === null || value === undefined ? "" : Number(value).toFixed(digits); }

function percent(value) { return value === null || value === undefined ? "" : `${(value * 100).toFixed(0)}%`; }

// A card as every page writes it: a chip "10♣" (its record text, "TC", in data-card and its title).
function card(text, extra) {
  const suit = text.slice(-1);
  const node = el("span", { class: `card${"HD".includes(suit) ? " red" : ""}${extra ? " " + extra : ""}`,
                            "data-card": text, title: text });
  node.textContent = text.slice(0, -1).replace("T", "10") + (SUIT_SYMBOL[suit] || suit);
  return node;
}

function suit(letter) {
  return el("span", { class: `suit${"HD".includes(letter) ? " red" : ""}`, title: letter, text: SUIT_SYMBOL[letter] || letter });
}

const CARD_TEXT = /^([789TJQKA][SHDC])$/i;
const BID_TEXT = /^(\d{2,3}|capot)([SHDC])$/i;

// An action's record text (docs/records.md#action-text) with its cards and suits drawn as everywhere
// else: "TC belote" is a chip 10♣ then "belote", "90H" is 90♥, "H" (classic, round two) is ♥.
function action(text) {
  const [first, ...words] = String(text).trim().split(/\s+/);
  const rest = words.length ? ` ${words.join(" ")}` : "";
  if (CARD_TEXT.test(first)) return el("span", { class: "action" }, card(first.toUpperCase()), rest);
  const bid = BID_TEXT.exec(first);
  if (bid) return el("span", { class: "action bid" }, `${bid[1]} `, suit(bid[2].toUpperCase()), rest);
  if (/^[SHDC]$/i.test(first)) return el("span", { class: "action bid" }, suit(first.toUpperCase()), rest);
  return el("span", { class: "action" }, String(text));
}

// What the bids so far make: the contract (its trump, value and doubling) and the seat that took, or
// null while nobody has. Classic: "take" (the turned-up card's suit) or a suit; coinche: the last bid.
function contractOf(bids, turnedUp) {
  let contract = null;
  for (const { seat, text } of bids) {
    const word = String(text).trim().split(/\s+/)[0].toLowerCase();
    const bid = BID_TEXT.exec(word);
    if (word === "take" && turnedUp) contract = { seat, trump: turnedUp.slice(-1), value: "", doubled: "" };
    else if (/^[shdc]$/.test(word)) contract = { seat, trump: word.toUpperCase(), value: "", doubled: "" };
    else if (bid) contract = { seat, trump: bid[2].toUpperCase(), value: bid[1], doubled: "" };
    else if ((word === "coinche" || word === "surcoinche") && contract) contract.doubled = word;
  }
  return contract;
}

function table(headers, rows, attrs) {
  const head = el("tr", {}, ...headers.map(([label, cls]) => el("th", { class: cls, text: label })));
  return el("table", attrs || {}, el("thead", {}, head), el("tbody", {}, ...rows));
}

// A table that may be wider than a phone scrolls inside its box: the page itself never scrolls sideways.
function scroll(node) { return el("div", { class: "scroll" }, node); }

// What an empty list says: why it is empty, then what to do (commands shown as code).
function empty(id, why, ...next) {
  return el("div", { class: "empty", id },
    el("p", { class: "lead", text: why }),
    ...next.map((line) => el("p", {}, ...(Array.isArray(line) ? line : [line]))));
}

function command(text) { return el("code", { class: "command", text }); }

function pager(page, onMove, size) {
  const step = size || PAGE_SIZE;
  const first = page.total === 0 ? 0 : page.offset + 1;
  const last = page.offset + (page.entries || page.items).length;
  return el("div", { class: "pager" },
    el("button", { type: "button", class: "prev", disabled: page.offset === 0 ? "" : null,
                   onclick: () => onMove(Math.max(0, page.offset - step)) }, "\u2190 previous"),
    el("span", { class: "range", text: `${first}\u2013${last} of ${page.total}` }),
    el("button", { type: "button", class: "next", disabled: last >= page.total ? "" : null,
                   onclick: () => onMove(page.offset + step) }, "next \u2192"));
}

// Round numbers for an axis, about n steps, from the last at or below lo to the first at or above hi.
function ticks(lo, hi, n) {
  if (!(hi > lo)) hi = lo + 1;
  const raw = (hi - lo) / n, power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const out = [];
  for (let v = Math.floor(lo / step) * step; v < hi + step - 1e-9; v += step) out.push(Number(v.toFixed(6)));
  return out;
}

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
         "your bot with that token: README, Write a bot."],
        ["Or see the whole arena at work with ", command(HOW_TO_DEMO), "."]));
      return;
    }
    const rows = page.items.map((b) => el("tr", { "data-bot": b.name },
      el("td", { class: "name" }, botLink(b.name)),
      el("td", { class: "name version", text: b.version }),
      el("td", { text: b.connected ? "connected" : "" }),
      el("td", { text: b.revoked ? "revoked" : "" })));
    body.replaceChildren(scroll(table([["bot", "name"], ["version", "name"], ["here"], [""]], rows, { id: "bots" })),
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
    const h = await getJSON(`/bots/${encodeURIComponent(name)}/history?pool=${encodeURIComponent(pool)}`);
    history.replaceChildren(
      el("p", { class: "muted", id: "history-note" },
         `The table above is the Bradley-Terry rating, fitted over every game at once. This chart is the ` +
         `online Elo (K=${h.k}), which moves with each result: a point after every ${h.every} games, and the latest.`),
      historyChart(h));
  };
  let historySection = [];
  if (pools.length) {
    const select = el("select", { id: "history-pool", "aria-label": "pool of the rating history" },
      ...pools.map((p) => el("option", { value: p, text: p })));
    select.addEventListener("change", () => drawHistory(select.value).catch(showError));
    historySection = [el("h2", { text: "Online Elo as it went" }),
                      pools.length > 1 ? el("div", { class: "controls" }, el("label", {}, "Pool ", select)) : "",
                      history];
  }
  show(el("h1", { id: "bot-name", text: b.name }),
       el("p", { class: "version-line" }, "Version: ", el("code", { id: "bot-version", text: b.version || "(not connected here)" }),
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
         el("p", { class: "muted", id: "no-matches", text: "No matches yet." }));
  if (pools.length) await drawHistory(pools[0]);
}

// ------------------------------------------------------------- tournaments
// The tournaments, or (?tests=1) the version tests: the arena makes those between two versions of a
// bot, and lists them apart, so that one bot's tests never push the tournaments off the first page.
async function tournamentsPage() {
  let offset = Number(query("offset", "0")) || 0;
  const tests = query("tests", "") === "1";
  const body = el("div", {});
  const other = (page) => el("p", { class: "muted", id: "apart" }, tests ?
    el("a", { href: "/tournaments", text: `The tournaments (${page.apart})` }) :
    el("a", { href: "/tournaments?tests=1", text: `The version tests (${page.apart})` }),
    tests ? "" : ": the tests of bots' new versions, listed apart.");
  const draw = async () => {
    setQuery({ offset: offset || "", tests: tests ? "1" : "" });
    const page = await getJSON(`/tournaments?offset=${offset}&limit=${PAGE_SIZE}${tests ? "&tests=1" : ""}`);
    if (page.total === 0) {
      body.replaceChildren(tests ?
        empty("empty", "No version test yet.",
          ["A bot that connects with a new version (",
           command("--bot-version 2"), ") has it tested against its promoted one on the ladder's slots."]) :
        empty("empty", "No tournament yet.",
          ["An admin creates one between registered bots: ", command(HOW_TO_RATE), ". Its matches are " +
           "played as the bots connect, and its games rate them."],
          ["Or see the whole arena at work with ", command(HOW_TO_DEMO), "."]),
        page.apart ? other(page) : "");
      return;
    }
    const rows = page.items.map((t) => el("tr", { "data-tournament": t.tournament_id },
      el("td", { class: "name" }, tournamentLink(t.tournament_id)), el("td", { class: "name", text: t.format }),
      el("td", { class: "name", text: t.state }), el("td", { text: t.bots }),
      el("td", { class: "name wide", text: typeof t.ruleset === "string" ? t.ruleset : JSON.stringify(t.ruleset) })));
    body.replaceChildren(scroll(table([[tests ? "version test" : "tournament", "name"], ["format", "name"],
                                       ["state", "name"], ["bots"], ["ruleset", "name wide"]], rows, { id: "tournaments" })),
                         pager(page, (o) => { offset = o; draw().catch(showError); }),
                         page.apart ? other(page) : "");
  };
  show(el("h1", { text: tests ? "Version tests" : "Tournaments" }), body);
  await draw();
}

// A tournament's finished matches, a page at a time, in schedule order (round, board, leg or table).
function finishedMatches(t) {
  let offset = Number(query("offset", "0")) || 0;
  const box = el("div", { id: "finished" });
  const draw = async () => {
    setQuery({ offset: offset || "" });
    const page = await getJSON(`/tournaments/${encodeURIComponent(t.tournament_id)}/matches?offset=${offset}&limit=${PAGE_SIZE}`);
    if (page.total === 0) {
      box.replaceChildren(el("p", { class: "muted", id: "no-finished", text: "No match has finished yet." }));
      return;
    }
    const rows = page.items.map((m) => el("tr", { "data-match": m.match_id },
      el("td", { class: "round wide", text: m.round }),
      el("td", { class: "name" }, matchLink(m.match_id, shortId({ ...m, tournament_id: t.tournament_id }))),
      sideCell(m, 0, "team0"), sideCell(m, 1, "team1"),
      el("td", { class: "score", text: m.sealed || !m.totals.length ? "" : `${m.totals[0]} \u2013 ${m.totals[1]}` }),
      el("td", { class: "name result wide", text: result(m) }),
      el("td", { class: "muted name wide", text: m.sealed ? "shown once every table dealing its cards is over" : how(m) })));
    box.replaceChildren(
      scroll(table([["round", "wide"], ["match", "name"], ["team 0", "name"], ["team 1", "name"], ["score"], ["result", "name wide"], ["", "wide"]],
                   rows, { id: "matches" })),
      pager(page, (o) => { offset = o; draw().catch(showError); }));
  };
  return { box, draw };
}

async function tournamentPage() {
  const id = pathPart(2);
  const t = await getJSON(`/tournaments/${encodeURIComponent(id)}`);
  document.title = `${t.tournament_id} \u2013 Belote Arena`;
  const share = t.matches_scheduled ? t.matches_done / t.matches_scheduled : 0;
  const bar = el("div", { class: "progress", role: "progressbar", "aria-valuenow": t.matches_done,
                          "aria-valuemax": t.matches_scheduled }, el("div", {}));
  bar.firstChild.style.width = `${(share * 100).toFixed(1)}%`;
  const standings = t.standings.map((s) => el("tr", { "data-bot": s.bot },
    el("td", { text: s.rank }), el("td", { class: "name" }, botLink(s.bot)), el("td", { text: s.played }),
    el("td", { text: s.wins }), el("td", { text: s.draws }), el("td", { text: s.losses }),
    el("td", { text: s.score }), el("td", { text: s.diff })));
  let cross = el("p", { class: "muted", text: "Too many bots for a crosstable." });
  if (t.crosstable) {
    const bots = t.crosstable_bots;
    cross = scroll(table([[""], ...bots.map((b, i) => [String(i + 1)])], t.crosstable.map((row, i) => el("tr", {},
      el("th", { class: "name" }, `${i + 1}. `, botLink(bots[i])),
      ...row.map((cell, j) => el("td", { class: i === j ? "self" : "", title: cell ? `${bots[i]} vs ${bots[j]}` : "",
                                         text: cell ? `${cell[0]}/${cell[1]}` : "" })))), { class: "cross", id: "crosstable" }));
  }
  const finished = finishedMatches(t);
  let test = "";
  if (t.sprt) {
    const sp = t.sprt;
    const outcome = sp.decision ? DECISION[sp.decision].replace(" (promoted)", "") : t.state === "finished" ? "no decision" : "under way";
    test = el("section", { id: "sprt" }, el("h2", { text: "SPRT" }),
      el("p", { id: "sprt-line" }, `${t.bots[0]} against ${t.bots[1]}: ${outcome}. LLR ${fixed(sp.llr, 2)} after ${sprtCounts(sp)}; `,
         `bounds ${fixed(sp.lower, 2)} and ${fixed(sp.upper, 2)}.`),
      el("p", { class: "muted", text: `H0: ${t.bots[0]} is ${fixed(sp.elo0, 1)} Elo stronger; H1: ${fixed(sp.elo1, 1)} Elo ` +
                                       "(match scale). The interval holds after any number of pairs." }),
      scroll(table(PAIR_POINTS.map((p) => [p]), [el("tr", {}, ...sp.pentanomial.map((n) => el("td", { text: n })))],
                   { id: "sprt-pentanomial" })));
  }
  show(el("h1", { text: `Tournament ${t.tournament_id}` }),
       el("p", {}, `${t.format}, ${t.state}: ${t.matches_done} of ${t.matches_scheduled} matches played`,
          t.matches_queued ? `, ${t.matches_queued} queued` : ""), bar,
       el("p", { class: "muted" }, "Commitment: ", el("code", { text: t.commitment }),
          t.secret ? el("span", {}, " \u00b7 secret: ", el("code", { text: t.secret })) : ""),
       t.unrated_reason ? el("p", { class: "muted", text: `Unrated: ${t.unrated_reason}` }) : "",
       t.duplicate_mode ? el("p", { id: "duplicate", class: t.duplicate_note ? "" : "muted",
                                    text: t.duplicate_note ? `Duplicate: ${t.duplicate_note}.`
                                      : `Duplicate: ${t.duplicate_mode} (no bot sees a deal from two seats).` }) : "",
       t.ending ? el("p", { class: "muted", id: "ending", text: t.ending }) : "",
       test,
       el("h2", { text: "Standings" }),
       t.standings.length ?
         scroll(table([["#"], ["bot", "name"], ["played"], ["W"], ["D"], ["L"], ["score"], ["diff"]], standings, { id: "standings" })) :
         el("p", { class: "muted", text: "No game has finished yet." }),
       el("h2", { text: "Crosstable" }), cross,
       el("h2", { text: "Finished matches" }), finished.box);
  await finished.draw();
}

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

// ---------------------------------------------------------------- versions
// a bot's versions page draws it again this often (ms): a test's LLR moves as its pairs end
const VERSIONS_REFRESH_MS = 5000;
const HOW_PROMOTED = { first: "first", sprt: "by SPRT", hand: "by hand" };
const DECISION = { H1: "H1: better (promoted)", H0: "H0: not better", "": "no decision" };
// the pentanomial's five counts: pairs by the candidate's points over their two legs
const PAIR_POINTS = ["0", "0.5", "1", "1.5", "2"];

// an Elo estimate and its 95% interval: "+348 (95%: -28 to +∞)"; a null end is unbounded
function eloParts(elo, low, high) {
  const signed = (x) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(0)}`;
  return [signed(elo), `95%: ${low === null ? "−∞" : signed(low)} to ${high === null ? "+∞" : signed(high)}`];
}

function eloText(elo, low, high) {
  const [estimate, interval] = eloParts(elo, low, high);
  return `${estimate} (${interval})`;
}

// what an SPRT counted: its pairs, those set aside, its Elo (the versions page and an sprt tournament's)
function sprtCounts(t, most) {
  const aside = t.set_aside ? `, ${t.set_aside} set aside (a leg with no card played: no evidence)` : "";
  const elo = t.elo === null || t.elo === undefined ? "" : `; Elo ${eloText(t.elo, t.elo_low, t.elo_high)}`;
  return `${t.pairs} pair${t.pairs === 1 ? "" : "s"}${most ? ` (at most ${most})` : ""}${aside}${elo}`;
}

function versionRow(v) {
  const tested = Boolean(v.test);
  return el("tr", { "data-version": v.version, "data-state": v.state },
    el("td", { class: "name version", text: v.version }),
    el("td", { class: "name state", text: v.state }),
    el("td", { class: "name how", text: HOW_PROMOTED[v.how] || "" }),
    el("td", { class: "name wide", text: when(v.first_seen) }),
    el("td", { class: "name last-seen", text: when(v.last_seen) }),
    el("td", { class: "games", text: v.games }),
    el("td", { class: "name against", text: tested ? v.against : "" }),
    el("td", { class: "name decision", text: tested && v.state !== "testing" ? (DECISION[v.decision] || v.decision).replace(" (promoted)", "") : tested ? "under way" : "" }),
    el("td", { class: "llr", text: tested && v.state !== "testing" ? fixed(v.llr, 2) : "" }),
    el("td", { class: "pairs", text: tested && v.state !== "testing" ? v.pairs : "" }),
    tested && v.elo !== null ?
      el("td", { class: "elo", title: v.set_aside ? `${v.set_aside} pairs set aside (a leg with no card played)` : "" },
         eloParts(v.elo, v.elo_low, v.elo_high)[0], el("br"),
         el("span", { class: "muted interval", text: eloParts(v.elo, v.elo_low, v.elo_high)[1] })) :
      el("td", { class: "elo" }));
}

// why each candidate waits for its test (one at a time, the bot's tests a day, its turn among the bots)
function waitingList(versions) {
  const waiting = versions.filter((v) => v.state === "candidate" && v.waiting);
  return waiting.length ?
    el("ul", { id: "waiting" }, ...waiting.map((v) => el("li", { "data-version": v.version },
      el("strong", { text: `Version ${v.version}` }), ` ${v.waiting}.`))) : "";
}

// fishtest's chart: the LLR after each pair, between the two bounds at which the test decides.
function llrChart(t) {
  const series = t.llr_series;
  const width = 480, height = 240, left = 44, right = 14, top = 14, bottom = 40;
  const most = Math.max(series.length, 1);  // whole pairs: no tick between two
  const xt = ticks(0, most, Math.min(5, most));
  const lo = Math.min(t.lower, ...series), hi = Math.max(t.upper, ...series);
  const yt = ticks(lo, hi, 4);
  const [x0, x1, y0, y1] = [xt[0], xt[xt.length - 1], yt[0], yt[yt.length - 1]];
  const sx = (v) => left + (x1 > x0 ? (v - x0) / (x1 - x0) : 0.5) * (width - left - right);
  const sy = (v) => height - bottom - (y1 > y0 ? (v - y0) / (y1 - y0) : 0.5) * (height - top - bottom);
  const chart = svg("svg", { class: "chart", id: "llr-chart", viewBox: `0 0 ${width} ${height}`, role: "img",
                             "aria-label": `LLR ${fixed(t.llr, 2)} after ${series.length} pairs, bounds ` +
                                           `${fixed(t.lower, 2)} (accept H0) and ${fixed(t.upper, 2)} (accept H1)` });
  const axes = chartAxes(xt, yt, sx, sy, { width, height, left, right, top, bottom });
  axes.append(svg("text", { class: "axis-label", x: (left + width - right) / 2, y: height - 6, "text-anchor": "middle" },
                  "pairs played"),
              svg("text", { class: "axis-label", x: -(top + height - bottom) / 2, y: 14, transform: "rotate(-90)",
                            "text-anchor": "middle" }, "LLR"));
  chart.append(axes);
  for (const [value, label, cls] of [[t.upper, "accept H1", "bound upper"], [t.lower, "accept H0", "bound lower"]]) {
    const y = sy(value);
    chart.append(svg("line", { class: cls, x1: left, x2: width - right, y1: y, y2: y }),
                 svg("text", { class: `${cls} bound-label`, x: width - right - 4, y: cls.endsWith("upper") ? y - 5 : y + 14,
                               "text-anchor": "end" }, `${label} (${fixed(value, 2)})`));
  }
  if (series.length) {
    const points = [[0, 0], ...series.map((llr, i) => [i + 1, llr])];
    chart.append(svg("polyline", { class: "llr", points: points.map(([x, y]) => `${sx(x)},${sy(y)}`).join(" ") }));
  }
  return chart;
}

function testSection(t) {
  const running = t.state === "created" || t.state === "running";
  const pent = t.pentanomial.length ? scroll(table(PAIR_POINTS.map((p) => [p]),
    [el("tr", {}, ...t.pentanomial.map((n) => el("td", { text: n })))], { id: "pentanomial" })) :
    el("p", { class: "muted", id: "pentanomial", text: "No pair has finished yet." });
  const outcome = running ? "under way" : t.decision ? DECISION[t.decision] : `ended without a decision (${t.state || "its record is gone"})`;
  return el("section", { id: "test", "data-state": t.state },
    el("h2", { text: running ? "SPRT under way" : "Latest SPRT" }),
    el("p", { id: "test-line" }, `Version ${t.candidate} against ${t.against}: ${outcome}. `,
       `LLR ${fixed(t.llr, 2)} after ${sprtCounts(t, t.max_pairs)}; `,
       `bounds ${fixed(t.lower, 2)} and ${fixed(t.upper, 2)}. `,
       t.state ? el("span", {}, "Its tournament: ", tournamentLink(t.tournament_id), ".") : ""),
    el("p", { class: "muted", id: "hypotheses",
              text: `H0: the new version is ${fixed(t.elo0, 1)} Elo stronger; H1: ${fixed(t.elo1, 1)} Elo ` +
                    "(on the match scale: elo0 and elo1)." }),
    llrChart(t),
    el("h3", { text: "Pentanomial: pairs by the new version's points over their two legs" }), pent);
}

// Each version rated on its own games in each pool it played in, and the promoted one where it has not played
// yet: the rating of the version before it, the interval widened (docs/ratings.md, A rating per version).
function ratingsSection(ratings) {
  if (!ratings.length) {
    return el("p", { class: "muted", id: "no-version-ratings", text: "No version has played a rated game yet." });
  }
  const values = ratings.flatMap((r) => [r.low, r.high]);
  const low = Math.min(...values), high = Math.max(...values);
  const rows = ratings.map((r) => el("tr", { "data-pool": r.pool, "data-rated": r.version, "data-inherited": r.inherited },
    el("td", { class: "name pool", text: r.pool }),
    el("td", { class: "name version", text: r.version || "(none said)" }),
    el("td", { class: "rating", text: fixed(r.rating, 0) }),
    el("td", { class: "interval" }, intervalBar(r, low, high)),
    el("td", { class: "range wide", text: `${fixed(r.low, 0)} \u2013 ${fixed(r.high, 0)}` }),
    el("td", { class: "games", text: r.games }),
    el("td", { class: "name muted from", text: r.inherited ? "from the version before it" : "" })));
  return el("section", { id: "version-ratings" },
    el("h2", { text: "Ratings" }),
    el("p", { class: "muted", text: "Each version on its own games in each pool, with its 95% interval. A new version " +
      "starts from the rating of the one before it, its interval widened, and its own games take over as they come." }),
    scroll(table([["pool", "name"], ["version", "name"], ["rating"], ["95% interval", "name interval"],
                  ["low \u2013 high", "wide"], ["games"], ["", "name"]], rows, { id: "ratings" })));
}

async function versionsPage() {
  const name = pathPart(2);
  document.title = `Versions of ${name} \u2013 Belote Arena`;
  const body = el("div", {});
  const draw = async () => {
    const view = await getJSON(`/bots/${encodeURIComponent(name)}/versions`);
    if (!view.versions.length) {
      body.replaceChildren(empty("no-versions", "No versions: this bot never said one.",
        ["A bot says its version in its Hello (the SDK's ", command("bot.version = \"2\""), " or ",
         command("--bot-version 2"), "). Each new one is then tested against the promoted one by an SPRT on the ladder."]));
      return;
    }
    const promotedOne = view.versions.find((v) => v.state === "promoted");
    body.replaceChildren(
      el("p", { id: "plays-as" }, promotedOne ?
        `Plays as version ${promotedOne.version}, promoted ${HOW_PROMOTED[promotedOne.how] || promotedOne.how}.` :
        "No version promoted."),
      scroll(table([["version", "name"], ["state", "name"], ["promoted", "name"], ["first seen", "name wide"],
                    ["last seen", "name"], ["games"], ["against", "name"], ["decision", "name"], ["LLR"], ["pairs"],
                    ["Elo"]], view.versions.map(versionRow), { id: "versions" })),
      ratingsSection(view.ratings || []),
      waitingList(view.versions),
      view.test ? testSection(view.test) : el("p", { class: "muted", id: "no-test", text: "No version has been tested yet." }),
      el("p", { class: "muted", id: "duplicate-note", text: view.note }));
  };
  show(el("h1", { text: `Versions of ${name}` }),
       el("p", {}, el("a", { href: `/bots/${encodeURIComponent(name)}`, text: `\u2190 ${name}` })), body);
  await draw();
  const again = () => setTimeout(() => draw().then(again, showError), VERSIONS_REFRESH_MS);
  again();
}

// --------------------------------------------------------------- schedules
function when(seconds) { return seconds ? new Date(seconds * 1000).toISOString().replace("T", " ").slice(0, 16) + " UTC" : ""; }

function period(seconds) {
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]]) if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}

async function schedulesPage() {
  let offset = Number(query("offset", "0")) || 0;
  const body = el("div", {});
  const draw = async () => {
    setQuery({ offset: offset || "" });
    const page = await getJSON(`/schedules?offset=${offset}&limit=${PAGE_SIZE}`);
    if (page.total === 0) {
      body.replaceChildren(empty("empty", "No scheduled tournament.",
        ["An admin makes a tournament again and again with ", command(HOW_TO_SCHEDULE), "."]));
      return;
    }
    // a schedule whose bots need a word (its occurrence waits for bots, or draws them) says it in a row
    // of its own under it, on a phone too
    const rows = page.items.flatMap((s) => [el("tr", { "data-schedule": s.schedule_id },
      el("td", { class: "name", text: s.schedule_id }),
      el("td", { class: "name every", text: `every ${period(s.every_s)}${s.at ? ` at ${s.at} UTC` : ""}` }),
      el("td", { class: "name next", text: when(s.next_at) }),
      el("td", { class: "name wide" }, s.last_tournament_id ? tournamentLink(s.last_tournament_id) : "none yet"),
      el("td", { class: "name wide", text: [s.options.format, s.options.ruleset].filter(Boolean).join(", ") }),
      el("td", { class: "bots name", text: s.ladder ? `@ladder:${s.ladder}` : s.bots.length }),
      el("td", { class: "muted name wide", text: s.unrated_reason ? `unrated: ${s.unrated_reason}` : "" })),
      s.why ? el("tr", { class: "why", "data-why-of": s.schedule_id },
                 el("td", { class: "name why", colspan: 7, text: s.why })) : null].filter(Boolean));
    body.replaceChildren(scroll(table([["schedule", "name"], ["when", "name"], ["next", "name"], ["last", "name wide"],
                                       ["tournament", "name wide"], ["bots"], ["", "wide"]], rows, { id: "schedules" })),
                         pager(page, (o) => { offset = o; draw().catch(showError); }));
  };
  show(el("h1", { text: "Schedules" }), body);
  await draw();
}

// ------------------------------------------------------------------- live
function seatTitle(players, s) {
  return el("h3", {}, players[s] ? botLink(players[s]) : "?", el("span", { class: "seat-of", text: `seat ${s} \u00b7 team ${s % 2}` }));
}

function seatBoxes(players) {
  return [0, 1, 2, 3].map((s) => el("div", { class: `seat seat-${s}`, "data-seat": s },
    seatTitle(players, s), el("div", { class: "current" })));
}

// A side: one bot at its two seats, or two partners (seats t and t + 2).
function sideOf(players, t) {
  const two = players[t + 2] && players[t + 2] !== players[t];
  return el("span", { class: "team", id: `team-${t}` }, `team ${t}: `, botLink(players[t] || ""),
            two ? " & " : "", two ? botLink(players[t + 2]) : "");
}

function seatName(players, s) { return `seat ${s} (${players[s] || "?"})`; }

async function livePage() {
  const id = pathPart(2);
  const m = await getJSON(`/matches/${encodeURIComponent(id)}`);
  const players = m.players;
  document.title = `${id} \u2013 Belote Arena`;
  const seats = seatBoxes(players);
  const dealInfo = el("span", { id: "deal-info" });
  const contractBox = el("span", { id: "contract", class: "contract" });
  const trickLabel = el("div", { id: "trick-label" });
  const score = el("span", { id: "score" });
  const centre = el("div", { class: "center" }, trickLabel);
  const panel = el("dl", { class: "deal" }, el("dt", { text: "Deal" }), el("dd", {}, dealInfo),
                   el("dt", { text: "Contract" }), el("dd", {}, contractBox), el("dt", { text: "Match" }), el("dd", {}, score));
  const bidList = el("ol", { id: "bids", class: "bids" });
  const lastTrick = el("div", { id: "last-trick" }, el("span", { class: "muted", text: "none yet" }));
  const played = el("div", { id: "played" });
  const log = el("ol", { class: "log", id: "events" });
  const status = el("p", { id: "status", text: "Watching\u2026" });
  const replay = el("p", {}, el("a", { href: `/matches/${encodeURIComponent(id)}/replay`, id: "replay-link",
                                       text: "Replay with all hands (once the match is over)" }));
  show(el("h1", { text: `Match ${id}` }),
       el("p", { class: "teams" }, sideOf(players, 0), " vs ", sideOf(players, 1)),
       status, panel, el("div", { class: "table", id: "trick" }, ...seats, centre),
       el("h2", { text: "Last trick" }), lastTrick,
       el("h2", { text: "Bids" }), bidList,
       el("h2", { text: "Cards played this deal" }), played, replay,
       el("h2", { text: "Public events" }), log);
  // the deal as the public events tell it
  let deal = { bids: [], turnedUp: "", tricks: 0, dealer: 0 };
  const drawContract = (outcome) => {
    if (outcome && outcome.thrown_in) { contractBox.textContent = "thrown in: nobody took"; return; }
    const c = contractOf(deal.bids, deal.turnedUp);
    if (!c) { contractBox.textContent = deal.bids.length ? "bidding\u2026" : "\u2013"; return; }
    const what = c.value ? [`${c.value} `, suit(c.trump), c.doubled ? ` ${c.doubled}` : ""] : ["trump ", suit(c.trump)];
    const made = outcome ? (outcome.made === true ? ", made" : outcome.made === false ? ", down" : ", a tie (litige)") : "";
    contractBox.replaceChildren(el("span", {}, ...what), `, taken by ${seatName(players, c.seat)}, team ${c.seat % 2}${made}`);
  };
  const clearTrick = () => { for (const seat of seats) seat.querySelector(".current").replaceChildren(); };
  const source = new EventSource(`${API}/matches/${encodeURIComponent(id)}/events`);
  let ended = false;
  source.addEventListener("public", (message) => {
    const event = JSON.parse(message.data);
    const kind = event.kind;
    const body = event[kind] || {};
    let line = [kind.replace("_", " ")];
    if (kind === "deal_started") {
      clearTrick();
      played.replaceChildren();
      bidList.replaceChildren();
      lastTrick.replaceChildren(el("span", { class: "muted", text: "none yet" }));
      deal = { bids: [], turnedUp: body.retourne_card || "", tricks: 0, dealer: body.dealer };
      dealInfo.replaceChildren(`deal ${event.deal_index + 1}, dealt by ${seatName(players, body.dealer)}`,
                               deal.turnedUp ? el("span", {}, ", turned up ", card(deal.turnedUp)) : "");
      trickLabel.textContent = "";
      drawContract(null);
      line = [`deal ${event.deal_index + 1} starts, dealt by ${seatName(players, body.dealer)}`,
              deal.turnedUp ? el("span", {}, ", turned up ", card(deal.turnedUp)) : ""];
    } else if (kind === "action_played") {
      const found = /^([789TJQKA][SHDC])(?:\s|$)/.exec(body.text);
      if (found) {
        seats[body.seat].querySelector(".current").replaceChildren(action(body.text));
        played.append(card(found[1]));
        trickLabel.textContent = `trick ${deal.tricks + 1} of 8`;
      } else {
        deal.bids.push({ seat: body.seat, text: body.text });
        bidList.append(el("li", { "data-seat": body.seat }, `${seatName(players, body.seat)}: `, action(body.text)));
        drawContract(null);
      }
      line = [`${seatName(players, body.seat)}: `, action(body.text)];
    } else if (kind === "trick_completed") {
      deal.tricks += 1;
      clearTrick();
      const cards = body.card_names || [];
      lastTrick.replaceChildren(
        el("span", { class: "muted", text: `trick ${deal.tricks}: ` }),
        ...cards.map((c, i) => {
          const seat = (body.leader + i) % 4;
          return el("span", { class: "trick-card", "data-seat": seat }, card(c, seat === body.winner ? "won" : ""),
                    el("small", { class: "muted", text: ` ${players[seat] || seat}` }));
        }),
        el("span", { id: "last-winner", text: ` \u2192 won by ${seatName(players, body.winner)}` }));
      trickLabel.textContent = deal.tricks < 8 ? `trick ${deal.tricks + 1} of 8` : "";
      line = [`trick ${deal.tricks} to ${seatName(players, body.winner)}: `, ...cards.map((c) => card(c))];
    } else if (kind === "deal_ended") {
      const outcome = body.outcome || {};
      drawContract(outcome);
      score.textContent = `${body.match_score.join(" \u2013 ")} (team 0 \u2013 team 1)`;
      line = [`deal ends: ${body.score.join(" \u2013 ")} (match ${body.match_score.join(" \u2013 ")})`];
    } else if (kind === "declarations_shown") {
      line = [body.team === undefined ? "declarations: no team scores" : `declarations: team ${body.team} scores ${body.points}`];
    } else if (kind === "strike_given") {
      line = [`strike to ${seatName(players, body.seat)}: ${body.reason}`];
    }
    log.append(el("li", { "data-kind": kind }, el("span", { class: "n", text: `${log.childElementCount + 1}.` }),
                  el("span", { class: "what" }, ...line)));
    log.scrollTop = log.scrollHeight;
  });
  source.addEventListener("result", (message) => {
    const r = JSON.parse(message.data).result;
    status.textContent = `Over: ${r.totals.join(" \u2013 ")}, ` +
      (r.winner === undefined || r.winner === null ? "a draw" : `team ${r.winner} won`) + ` (${r.reason})`;
  });
  source.addEventListener("end", () => {
    ended = true;
    source.close();
    if (status.textContent === "Watching\u2026") status.textContent = "Over.";
    status.dataset.over = "true";
  });
  source.addEventListener("error", () => {
    if (ended) return;
    source.close();
    status.textContent = "The event stream stopped (reload to watch again).";
  });
}

// ----------------------------------------------------------------- replay
async function replayPage() {
  const id = pathPart(2);
  const m = await getJSON(`/matches/${encodeURIComponent(id)}`);
  const players = m.players;
  document.title = `Replay of ${id} \u2013 Belote Arena`;
  if (!m.record) {
    show(el("h1", { text: `Replay of ${id}` }),
         el("p", { id: "not-yet", text: "The replay is shown once the match is over." }),
         el("p", {}, el("a", { href: `/matches/${encodeURIComponent(id)}`, text: "Watch it live" })));
    return;
  }
  const deals = m.record.deals.map((d, i) => ({ record: d, outcome: (m.replay || [])[i] }))
    .filter((d) => d.outcome && !d.outcome.thrown_in && (d.record.hands || []).length === 4);
  const state = { deal: 0, trick: 0 };
  const dealSelect = el("select", { id: "deal", "aria-label": "deal" },
    ...deals.map((d, i) => el("option", { value: i, text: `deal ${m.record.deals.indexOf(d.record) + 1}` })));
  const label = el("span", { id: "trick-label" });
  const prev = el("button", { type: "button", id: "prev", text: "\u2190 previous trick" });
  const next = el("button", { type: "button", id: "next", text: "next trick \u2192" });
  const board = el("div", {});
  const draw = () => {
    const { record, outcome } = deals[state.deal];
    const tricks = outcome.tricks;
    const gone = new Set(tricks.slice(0, state.trick).flatMap((t) => t.cards));
    const shown = state.trick > 0 ? tricks[state.trick - 1] : null;
    label.textContent = `trick ${state.trick} of ${tricks.length}`;
    prev.disabled = state.trick === 0;
    next.disabled = state.trick >= tricks.length;
    const seats = seatBoxes(players);
    seats.forEach((box, seat) => {
      const hand = el("div", { class: "hand", "data-seat": seat },
        ...record.hands[seat].filter((c) => !gone.has(c)).map((c) => card(c)));
      box.querySelector(".current").replaceChildren(hand);
      if (shown) {
        const played = shown.cards[(seat - shown.leader + 4) % 4];
        box.append(el("div", { class: "trick-card" }, "played ", card(played, seat === shown.winner ? "won" : "")));
      }
    });
    // the bids go round from the seat after the dealer (docs/records.md#decision-index)
    const bids = (record.bids || []).map((text, i) => ({ seat: (record.dealer + 1 + i) % 4, text }));
    const taker = contractOf(bids, record.retourne);
    const contract = outcome.contract ? action(outcome.contract) : el("span", {}, "trump ", suit(outcome.trump));
    const centre = el("div", { class: "center" },
      el("div", { id: "replay-contract" }, contract,
         taker ? `, taken by ${seatName(players, taker.seat)}, team ${outcome.takers}` : `, taken by team ${outcome.takers}`),
      shown ? el("div", { id: "trick-winner", text: `trick ${state.trick} to seat ${shown.winner}` }) : "",
      state.trick === tricks.length ? el("div", { text: `deal score ${outcome.score.join(" \u2013 ")}` }) : "");
    const bidList = el("ol", { class: "bids", id: "replay-bids" },
      ...bids.map((b) => el("li", { "data-seat": b.seat }, `${seatName(players, b.seat)}: `, action(b.text))));
    board.replaceChildren(el("div", { class: "table" }, ...seats, centre), el("h2", { text: "Bids" }), bidList);
  };
  prev.addEventListener("click", () => { state.trick = Math.max(0, state.trick - 1); draw(); });
  next.addEventListener("click", () => { state.trick = Math.min(deals[state.deal].outcome.tricks.length, state.trick + 1); draw(); });
  dealSelect.addEventListener("change", () => { state.deal = Number(dealSelect.value); state.trick = 0; draw(); });
  show(el("h1", { text: `Replay of ${id}` }),
       el("p", { class: "teams" }, sideOf(players, 0), " vs ", sideOf(players, 1), `: ${m.totals.join(" \u2013 ")}`),
       el("p", { class: "muted" }, "Seed ", el("code", { text: m.seed })),
       deals.length ? el("div", { class: "controls" }, dealSelect, prev, label, next) :
         el("p", { id: "no-deal", text: "No card was played: every deal was thrown in (nobody took)." }),
       board);
  if (deals.length) draw();
}

// ------------------------------------------------------------------- start
const PAGES = { leaderboard: leaderboardPage, bots: botsPage, bot: botPage, tournaments: tournamentsPage,
                tournament: tournamentPage, versions: versionsPage, ladders: laddersPage, ladder: ladderPage, schedules: schedulesPage,
                live: livePage, replay: replayPage };

document.addEventListener("DOMContentLoaded", () => {
  const page = PAGES[document.body.dataset.page];
  if (page) page().catch(showError);
});
