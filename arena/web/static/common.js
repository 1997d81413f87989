// Belote Arena's pages, drawn from the JSON API (/api/v1/). No build step, no dependency: page.html
// loads these scripts in order (common.js first, app.js last), sharing one global scope.
// This one: what every page uses.
// Everything a user supplies (bot names, versions, ids) goes into the page as text:
// elements are made with createElement and filled with textContent, never parsed as HTML.
"use strict";

const API = "/api/v1";
const PAGE_SIZE = 50;
const METHOD_NAMES = { bt: "Bradley-Terry", elo: "Elo (online)", openskill: "openskill (mixed partners)" };
const SUIT_SYMBOL = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
const SVG_NS = "http://www.w3.org/2000/svg";
// what a reader of an empty or young node does next (the docs site: how-to/run-a-referee.md, how-to/tournaments.md)
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
          el("td", { class: "rating" }, fixed(e.rating, 0),
             e.provisional ? el("span", { class: "provisional", title: "provisional: too few games, or too wide an interval, for its rank to be settled", text: "?" }) : ""),
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
