// Belote Arena's pages, drawn from the JSON API (/api/v1/). No build step, no dependency.
// Everything a user supplies (bot names, versions, ids) goes into the page as text:
// elements are made with createElement and filled with textContent, never parsed as HTML.
"use strict";

const API = "/api/v1";
const PAGE_SIZE = 50;
const METHOD_NAMES = { bt: "Bradley-Terry", elo: "Elo (online)", openskill: "openskill (mixed partners)" };
const SUIT_SYMBOL = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
const SVG_NS = "http://www.w3.org/2000/svg";

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
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  return node;
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
                              "aria-label": "credential", size: 48, required: "" });
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

function show(...nodes) { main().replaceChildren(...nodes); }

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
  for (const [k, v] of Object.entries(params)) search.set(k, String(v));
  history.replaceState(null, "", `${location.pathname}?${search}`);
}

function botLink(name) { return el("a", { href: `/bots/${encodeURIComponent(name)}`, text: name }); }
function matchLink(id) { return el("a", { href: `/matches/${encodeURIComponent(id)}`, text: id }); }
function tournamentLink(id) { return el("a", { href: `/tournaments/${encodeURIComponent(id)}`, text: id }); }

function fixed(value, digits) { return value === null || value === undefined ? "" : Number(value).toFixed(digits); }

function percent(value) { return value === null || value === undefined ? "" : `${(value * 100).toFixed(0)}%`; }

function card(text, extra) {
  const suit = text.slice(-1);
  const node = el("span", { class: `card${"HD".includes(suit) ? " red" : ""}${extra ? " " + extra : ""}`,
                            "data-card": text, title: text });
  node.textContent = text.slice(0, -1).replace("T", "10") + (SUIT_SYMBOL[suit] || suit);
  return node;
}

function table(headers, rows, attrs) {
  const head = el("tr", {}, ...headers.map(([label, cls]) => el("th", { class: cls, text: label })));
  return el("table", attrs || {}, el("thead", {}, head), el("tbody", {}, ...rows));
}

function pager(page, onMove) {
  const first = page.total === 0 ? 0 : page.offset + 1;
  const last = page.offset + (page.entries || page.items).length;
  return el("div", { class: "pager" },
    el("button", { type: "button", class: "prev", disabled: page.offset === 0 ? "" : null,
                   onclick: () => onMove(Math.max(0, page.offset - PAGE_SIZE)) }, "\u2190 previous"),
    el("span", { class: "range", text: `${first}\u2013${last} of ${page.total}` }),
    el("button", { type: "button", class: "next", disabled: last >= page.total ? "" : null,
                   onclick: () => onMove(page.offset + PAGE_SIZE) }, "next \u2192"));
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

async function leaderboardPage() {
  const { pools, methods } = await getJSON("/pools");
  const state = { pool: query("pool", pools[0]), method: query("method", "bt"),
                  offset: Number(query("offset", "0")) || 0 };
  const poolSelect = el("select", { id: "pool", "aria-label": "rating pool" },
    ...pools.map((p) => el("option", { value: p, text: p })));
  const methodSelect = el("select", { id: "method", "aria-label": "rating method" },
    ...methods.map((m) => el("option", { value: m, text: METHOD_NAMES[m] || m })));
  const body = el("div", {});
  const draw = async () => {
    poolSelect.value = state.pool;
    methodSelect.value = state.method;
    setQuery(state);
    const board = await getJSON(`/leaderboard?pool=${encodeURIComponent(state.pool)}` +
      `&method=${encodeURIComponent(state.method)}&offset=${state.offset}&limit=${PAGE_SIZE}`);
    const values = board.entries.flatMap((e) => [e.low ?? e.rating, e.high ?? e.rating]);
    const low = Math.min(...values), high = Math.max(...values);
    const rows = board.entries.map((e) => el("tr", { "data-bot": e.bot },
      el("td", { class: "rank", text: e.rank }),
      el("td", { class: "name bot" }, botLink(e.bot)),
      el("td", { class: "rating", text: fixed(e.rating, 0) }),
      el("td", { class: "interval" }, intervalBar(e, low, high)),
      el("td", { class: "range", text: e.low === null ? "" : `${fixed(e.low, 0)} \u2013 ${fixed(e.high, 0)}` }),
      el("td", { class: "los", text: percent(e.los_next) }),
      el("td", { class: "games", text: e.games }),
      el("td", { class: "wins", text: e.wins }),
      el("td", { class: "draws", text: e.draws }),
      el("td", { class: "losses", text: e.losses }),
      el("td", { class: "score", text: fixed(e.score, 3) })));
    body.replaceChildren(
      board.entries.length === 0 ? el("p", { class: "muted", text: "No rated games in this pool yet." }) :
        table([["#"], ["bot", "name"], ["rating"], ["95% interval", "name"], ["low \u2013 high"],
               ["LOS next", ""], ["games"], ["W"], ["D"], ["L"], ["score"]], rows, { id: "leaderboard" }),
      pager(board, (offset) => { state.offset = offset; draw().catch(showError); }));
  };
  poolSelect.addEventListener("change", () => { state.pool = poolSelect.value; state.offset = 0; draw().catch(showError); });
  methodSelect.addEventListener("change", () => { state.method = methodSelect.value; state.offset = 0; draw().catch(showError); });
  show(el("h1", { text: "Leaderboard" }),
       el("div", { class: "controls" }, el("label", {}, "Pool ", poolSelect), el("label", {}, "Method ", methodSelect),
          el("span", { class: "muted", text: "LOS next: the likelihood this bot is stronger than the next one down." })),
       body);
  await draw();
}

// -------------------------------------------------------------------- bots
async function botsPage() {
  let offset = Number(query("offset", "0")) || 0;
  const body = el("div", {});
  const draw = async () => {
    setQuery({ offset });
    const page = await getJSON(`/bots?offset=${offset}&limit=${PAGE_SIZE}`);
    const rows = page.items.map((b) => el("tr", { "data-bot": b.name },
      el("td", { class: "name" }, botLink(b.name)),
      el("td", { class: "name version", text: b.version }),
      el("td", { text: b.connected ? "connected" : "" }),
      el("td", { text: b.revoked ? "revoked" : "" })));
    body.replaceChildren(table([["bot", "name"], ["version", "name"], ["here"], [""]], rows, { id: "bots" }),
                         pager(page, (o) => { offset = o; draw().catch(showError); }));
  };
  show(el("h1", { text: "Bots" }), body);
  await draw();
}

function historyChart(points) {
  if (points.length < 2) return el("p", { class: "muted", id: "history", text: "No rating history yet." });
  const width = 480, height = 160, pad = 28;
  const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const sx = (v) => pad + (x1 > x0 ? (v - x0) / (x1 - x0) : 0.5) * (width - 2 * pad);
  const sy = (v) => height - pad - (y1 > y0 ? (v - y0) / (y1 - y0) : 0.5) * (height - 2 * pad);
  const chart = svg("svg", { class: "chart", id: "history", width, height, viewBox: `0 0 ${width} ${height}` });
  chart.append(svg("polyline", { points: points.map((p) => `${sx(p[0])},${sy(p[1])}`).join(" ") }));
  for (const [value, y] of [[y1, sy(y1)], [y0, sy(y0)]]) {
    const label = svg("text", { x: 2, y: y + 4 });
    label.textContent = value.toFixed(0);
    chart.append(label);
  }
  return chart;
}

function matchRows(matches) {
  return matches.map((m) => el("tr", { "data-match": m.match_id },
    el("td", { class: "name" }, matchLink(m.match_id)),
    el("td", { class: "name" }, m.tournament_id ? tournamentLink(m.tournament_id) : ""),
    el("td", { class: "name" }, botLink(m.teams[0]), " vs ", botLink(m.teams[1])),
    // a sealed table: another table deals its cards and is not over, so its score is not shown yet
    el("td", { text: m.sealed ? "sealed" : `${m.totals[0]} \u2013 ${m.totals[1]}` }),
    el("td", { text: m.sealed ? `${m.state}, sealed` : m.state === "running" ? "running" :
                     m.winner === null ? "draw" : `team ${m.winner} won` }),
    el("td", { class: "muted",
               text: m.sealed ? "shown once every table dealing its cards is over" : m.reason })));
}

async function botPage() {
  const name = pathPart(2);
  const detail = await getJSON(`/bots/${encodeURIComponent(name)}`);
  const { pools } = await getJSON("/pools");
  const history = await getJSON(`/bots/${encodeURIComponent(name)}/history?pool=${encodeURIComponent(pools[0])}`);
  const b = detail.bot;
  document.title = `${b.name} \u2013 Belote Arena`;
  const ratings = detail.ratings.map((r) => el("tr", {},
    el("td", { class: "name", text: r.pool }), el("td", { class: "name", text: r.method }),
    el("td", { text: r.rank }), el("td", { text: fixed(r.rating, 0) }),
    el("td", { text: r.low === null ? "" : `${fixed(r.low, 1)} \u2013 ${fixed(r.high, 1)}` }),
    el("td", { text: r.games })));
  show(el("h1", { id: "bot-name", text: b.name }),
       el("p", {}, "Version: ", el("code", { id: "bot-version", text: b.version || "(not connected here)" }),
          b.connected ? " \u00b7 connected to this node" : "", b.revoked ? " \u00b7 revoked" : ""),
       el("h2", { text: "Ratings" }),
       ratings.length ? table([["pool", "name"], ["method", "name"], ["rank"], ["rating"], ["95% interval"], ["games"]],
                              ratings) : el("p", { class: "muted", text: "Not rated yet." }),
       el("h2", { text: `Rating history (${pools[0]})` }), historyChart(history.history),
       el("h2", { text: "Recent matches" }),
       detail.recent_matches.length ?
         table([["match", "name"], ["tournament", "name"], ["teams", "name"], ["score"], ["result"], [""]],
               matchRows(detail.recent_matches), { id: "recent" }) :
         el("p", { class: "muted", text: "No matches yet." }));
}

// ------------------------------------------------------------- tournaments
async function tournamentsPage() {
  let offset = Number(query("offset", "0")) || 0;
  const body = el("div", {});
  const draw = async () => {
    setQuery({ offset });
    const page = await getJSON(`/tournaments?offset=${offset}&limit=${PAGE_SIZE}`);
    const rows = page.items.map((t) => el("tr", { "data-tournament": t.tournament_id },
      el("td", { class: "name" }, tournamentLink(t.tournament_id)), el("td", { class: "name", text: t.format }),
      el("td", { class: "name", text: t.state }), el("td", { text: t.bots }),
      el("td", { class: "name", text: typeof t.ruleset === "string" ? t.ruleset : JSON.stringify(t.ruleset) })));
    body.replaceChildren(table([["tournament", "name"], ["format", "name"], ["state", "name"], ["bots"], ["ruleset", "name"]],
                               rows, { id: "tournaments" }),
                         pager(page, (o) => { offset = o; draw().catch(showError); }));
  };
  show(el("h1", { text: "Tournaments" }), body);
  await draw();
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
    cross = table([[""], ...bots.map((b, i) => [String(i + 1)])], t.crosstable.map((row, i) => el("tr", {},
      el("th", { class: "name" }, `${i + 1}. `, botLink(bots[i])),
      ...row.map((cell, j) => el("td", { class: i === j ? "self" : "", title: cell ? `${bots[i]} vs ${bots[j]}` : "",
                                         text: cell ? `${cell[0]}/${cell[1]}` : "" })))), { class: "cross", id: "crosstable" });
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
       el("h2", { text: "Standings" }),
       table([["#"], ["bot", "name"], ["played"], ["W"], ["D"], ["L"], ["score"], ["diff"]], standings, { id: "standings" }),
       el("h2", { text: "Crosstable" }), cross,
       el("h2", { text: "Finished matches" }),
       el("p", {}, ...t.finished_matches.slice(-200).flatMap((m) => [matchLink(m), " "])));
}

// ------------------------------------------------------------------- live
function seatBoxes(players) {
  const boxes = [0, 1, 2, 3].map((s) => el("div", { class: `seat seat-${s}`, "data-seat": s },
    el("h3", { text: `seat ${s} \u00b7 ${players[s] || ""} (team ${s % 2})` }), el("div", { class: "current" })));
  return boxes;
}

async function livePage() {
  const id = pathPart(2);
  const m = await getJSON(`/matches/${encodeURIComponent(id)}`);
  document.title = `${id} \u2013 Belote Arena`;
  const seats = seatBoxes(m.players);
  const centre = el("div", { class: "center" }, el("div", { id: "deal-info", text: "" }), el("div", { id: "score", text: "" }));
  const played = el("div", { id: "played" });
  const log = el("ol", { class: "log", id: "events" });
  const status = el("p", { id: "status", text: "Watching\u2026" });
  const replay = el("p", {}, el("a", { href: `/matches/${encodeURIComponent(id)}/replay`, id: "replay-link",
                                       text: "Replay with all hands (once the match is over)" }));
  show(el("h1", { text: `Match ${id}` }),
       el("p", {}, el("span", { text: "Team 0: " }), botLink(m.players[0] || ""), " \u00b7 team 1: ", botLink(m.players[1] || "")),
       status, el("div", { class: "table" }, ...seats, centre),
       el("h2", { text: "Cards played this deal" }), played, replay,
       el("h2", { text: "Public events" }), log);
  const source = new EventSource(`${API}/matches/${encodeURIComponent(id)}/events`);
  let ended = false;
  source.addEventListener("public", (message) => {
    const event = JSON.parse(message.data);
    const kind = event.kind;
    const body = event[kind] || {};
    let line = kind.replace("_", " ");
    if (kind === "deal_started") {
      for (const seat of seats) seat.querySelector(".current").replaceChildren();
      played.replaceChildren();
      centre.querySelector("#deal-info").textContent = `deal ${event.deal_index + 1}, dealt by seat ${body.dealer}`;
      line = `deal ${event.deal_index + 1} starts (dealer: seat ${body.dealer}${body.retourne_card ? ", turned up " + body.retourne_card : ""})`;
    } else if (kind === "action_played") {
      const found = /^([789TJQKA][SHDC])(?:\s|$)/.exec(body.text);
      if (found) {
        const current = seats[body.seat].querySelector(".current");
        current.replaceChildren(card(found[1]));
        played.append(card(found[1]));
      }
      line = `seat ${body.seat}: ${body.text}`;
    } else if (kind === "trick_completed") {
      line = `trick to seat ${body.winner}: ${(body.card_names || []).join(" ")}`;
    } else if (kind === "deal_ended") {
      centre.querySelector("#score").textContent = `match ${body.match_score.join(" \u2013 ")}`;
      line = `deal ends: ${body.score.join(" \u2013 ")} (match ${body.match_score.join(" \u2013 ")})`;
    } else if (kind === "strike_given") {
      line = `strike to seat ${body.seat}: ${body.reason}`;
    }
    log.append(el("li", { "data-kind": kind, text: line }));
    log.scrollTop = log.scrollHeight;
  });
  source.addEventListener("result", (message) => {
    const result = JSON.parse(message.data).result;
    status.textContent = `Over: ${result.totals.join(" \u2013 ")}, ` +
      (result.winner === undefined || result.winner === null ? "a draw" : `team ${result.winner} won`) + ` (${result.reason})`;
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
    const seats = seatBoxes(m.players);
    seats.forEach((box, seat) => {
      const hand = el("div", { class: "hand", "data-seat": seat },
        ...record.hands[seat].filter((c) => !gone.has(c)).map((c) => card(c)));
      box.querySelector(".current").replaceChildren(hand);
      if (shown) {
        const played = shown.cards[(seat - shown.leader + 4) % 4];
        box.append(el("div", { class: "trick-card" }, "played ", card(played, seat === shown.winner ? "won" : "")));
      }
    });
    const centre = el("div", { class: "center" },
      el("div", { text: `bids: ${(record.bids || []).join(", ")}` }),
      el("div", { text: outcome.contract ? `contract ${outcome.contract} (team ${outcome.takers})` : `trump ${outcome.trump}, takers team ${outcome.takers}` }),
      shown ? el("div", { id: "trick-winner", text: `trick ${state.trick} to seat ${shown.winner}` }) : "",
      state.trick === tricks.length ? el("div", { text: `deal score ${outcome.score.join(" \u2013 ")}` }) : "");
    board.replaceChildren(el("div", { class: "table" }, ...seats, centre));
  };
  prev.addEventListener("click", () => { state.trick = Math.max(0, state.trick - 1); draw(); });
  next.addEventListener("click", () => { state.trick = Math.min(deals[state.deal].outcome.tricks.length, state.trick + 1); draw(); });
  dealSelect.addEventListener("change", () => { state.deal = Number(dealSelect.value); state.trick = 0; draw(); });
  show(el("h1", { text: `Replay of ${id}` }),
       el("p", {}, `${m.players[0]} & ${m.players[2]} (team 0) vs ${m.players[1]} & ${m.players[3]} (team 1): `,
          `${m.totals.join(" \u2013 ")}, seed `, el("code", { text: m.seed })),
       deals.length ? el("div", { class: "controls" }, dealSelect, prev, label, next) : el("p", { text: "No deal to show." }),
       board);
  if (deals.length) draw();
}

// ------------------------------------------------------------------- start
const PAGES = { leaderboard: leaderboardPage, bots: botsPage, bot: botPage, tournaments: tournamentsPage,
                tournament: tournamentPage, live: livePage, replay: replayPage };

document.addEventListener("DOMContentLoaded", () => {
  const page = PAGES[document.body.dataset.page];
  if (page) page().catch(showError);
});
