// Belote Arena's pages: a finished match's replay, to study (common.js has the helpers, matches.js the
// seats, analysis.js the analysis's marks; app.js starts the page). docs/web.md#the-replay says what
// it shows, its URL and its keys.
//
// Where the reader is: a deal, and a step in it: step 0 is the deal before its first card (its hands
// as the card play starts, its bids), step k the deal once k cards are played. The URL says it
// (?deal=D&trick=T&card=C, all counted from 1: card C of trick T is step 4(T-1)+C) and a URL opens
// there. Stepping within a deal replaces the history entry; going to another deal adds one, so the
// browser's back returns to the deal before, where the reader left it.
"use strict";

// ------------------------------------------------------------------ the deals
// A deal as the replay steps through it: its hands as the card play starts, its bids and plays each
// with its seat (docs/records.md#decision-index), its tricks, its outcome (null for a deal the match's
// end stopped, or one the record does not replay to), and its strikes by decision.
function replayDeal(record, index, outcome, stopped, strikes) {
  const first = (record.dealer + 1) % 4;
  const bids = (record.bids || []).map((text, i) => ({ seat: (record.dealer + 1 + i) % 4, text, decision: i }));
  const tricks = outcome && outcome.tricks ? outcome.tricks : stopped ? stopped.tricks : [];
  const plays = [];
  for (const [k, text] of (outcome || stopped ? record.plays || [] : []).entries()) {
    const trick = Math.floor(k / 4), pos = k % 4;
    const leader = trick === 0 ? first : tricks[trick - 1] ? tricks[trick - 1].winner : null;
    if (leader === null) break;  // a trick the record does not replay to
    plays.push({ seat: (leader + pos) % 4, text, card: String(text).split(/\s+/)[0].toUpperCase(),
                 trick, pos, k, decision: bids.length + k });
  }
  const struck = new Map(strikes.filter((s) => s.deal === index).map((s) => [s.decision, s]));
  return { index, record, outcome: outcome || null, stopped: Boolean(stopped), bids, plays, tricks, struck,
           thrownIn: Boolean(outcome && outcome.thrown_in), contract: contractOf(bids, record.retourne) };
}

function replayDeals(m) {
  const strikes = m.record.strikes || [];
  const deals = m.record.deals.map((d, i) => replayDeal(d, i, (m.replay || [])[i], null, strikes));
  if (m.record.unfinished_deal) {
    deals.push(replayDeal(m.record.unfinished_deal, deals.length, null, m.unfinished || { tricks: [] }, strikes));
  }
  return deals;
}

// The place ?deal=&trick=&card= names (the first deal's start when they say nothing), within the match.
function positionOf(deals, params) {
  const whole = (name) => { const n = Number.parseInt(params.get(name) || "", 10); return Number.isNaN(n) ? null : n; };
  const deal = Math.min(Math.max((whole("deal") || 1) - 1, 0), deals.length - 1);
  const trick = whole("trick"), card = whole("card");
  const step = !trick || trick < 1 ? 0 : 4 * (trick - 1) + (card === null ? 4 : Math.min(Math.max(card, 1), 4));
  return { deal, step: Math.min(step, deals[deal].plays.length) };
}

function positionQuery(deal, step) {
  const at = [`deal=${deal + 1}`];
  if (step > 0) at.push(`trick=${Math.floor((step - 1) / 4) + 1}`, `card=${(step - 1) % 4 + 1}`);
  return `?${at.join("&")}`;
}

// A link to a deal and a step in it, which the page follows without loading again.
function positionLink(deal, step, ...children) {
  return el("a", { class: "pos", href: positionQuery(deal, step), "data-deal": deal, "data-step": step }, ...children);
}

// ------------------------------------------------------------------ the page
async function replayPage() {
  const id = pathPart(2);
  const m = await getJSON(`/matches/${encodeURIComponent(id)}`);
  const players = m.players;
  document.title = `Replay of ${id} \u2013 Belote Arena`;
  if (!m.record) { showNoReplay(id, m); return; }
  const deals = replayDeals(m);
  const view = { deal: 0, step: 0, an: NO_ANALYSIS, row: null };
  const status = el("p", { id: "analysis-status", class: "muted" });
  const dealSelect = el("select", { id: "deal", "aria-label": "deal" },
    ...deals.map((d) => el("option", { value: d.index, text: dealName(d) })));
  const buttons = {};
  const button = (key, text, title) => { buttons[key] = el("button", { type: "button", id: key, title, text }); };
  const label = el("span", { id: "trick-label" });
  const link = el("a", { id: "position-link", class: "pos", text: "link" });
  const board = el("div", { id: "board" });
  const summary = el("div", { id: "analysis-summary" });
  const scores = el("div", { class: "scroll" }, scoresTable(deals, players, view.an));

  const go = (deal, step, how) => {
    const d = Math.min(Math.max(deal, 0), deals.length - 1);
    const s = Math.min(Math.max(step, 0), deals[d].plays.length);
    const url = `${location.pathname}${positionQuery(d, s)}`;
    if (how === "push" && d !== view.deal) history.pushState(null, "", url);
    else if (how !== "none") history.replaceState(null, "", url);
    view.deal = d; view.step = s;
    draw();
  };
  // a card or a trick on, or back: past a deal's end to the next deal's start, and back
  const move = (delta, trick) => {
    const d = deals[view.deal], s = view.step, end = d.plays.length;
    if (delta > 0) {
      if (s >= end) { if (view.deal + 1 < deals.length) go(view.deal + 1, 0, "push"); return; }
      go(view.deal, trick ? Math.min(end, 4 * Math.floor(s / 4) + 4) : s + 1);
    } else {
      if (s <= 0) { if (view.deal > 0) go(view.deal - 1, deals[view.deal - 1].plays.length, "push"); return; }
      go(view.deal, trick ? 4 * Math.floor((s - 1) / 4) : s - 1);
    }
  };
  const actions = {
    "start": () => go(view.deal, 0), "end": () => go(view.deal, deals[view.deal].plays.length),
    "prev-card": () => move(-1, false), "next-card": () => move(1, false),
    "prev-trick": () => move(-1, true), "next-trick": () => move(1, true),
    "prev-deal": () => go(view.deal - 1, 0, "push"), "next-deal": () => go(view.deal + 1, 0, "push"),
  };
  const draw = () => {
    const d = deals[view.deal];
    dealSelect.value = String(d.index);
    const first = view.deal === 0 && view.step === 0;
    const last = view.deal === deals.length - 1 && view.step === d.plays.length;
    buttons["prev-card"].disabled = buttons["prev-trick"].disabled = first;
    buttons["next-card"].disabled = buttons["next-trick"].disabled = last;
    buttons.start.disabled = view.step === 0;
    buttons.end.disabled = view.step === d.plays.length;
    buttons["prev-deal"].disabled = view.deal === 0;
    buttons["next-deal"].disabled = view.deal === deals.length - 1;
    label.textContent = stepLabel(d, view.step);
    link.href = positionQuery(view.deal, view.step);
    link.dataset.deal = view.deal; link.dataset.step = view.step;
    board.replaceChildren(...drawDeal(d, view.step, players, view.an));
    if (view.row) view.row.classList.remove("current");
    view.row = scores.querySelector(`tbody tr[data-deal="${d.index}"]`);
    view.row.classList.add("current");
  };

  button("prev-deal", "\u2039 deal", "previous deal (Page Up, p)");
  button("next-deal", "deal \u203a", "next deal (Page Down, n)");
  button("start", "\u00ab start", "the deal's start (Home)");
  button("prev-trick", "\u2039 trick", "previous trick (\u2191)");
  button("prev-card", "\u2039 card", "previous card (\u2190)");
  button("next-card", "card \u203a", "next card (\u2192)");
  button("next-trick", "trick \u203a", "next trick (\u2193)");
  button("end", "end \u00bb", "the deal's end (End)");
  for (const [key, act] of Object.entries(actions)) buttons[key].addEventListener("click", act);
  dealSelect.addEventListener("change", () => { go(Number(dealSelect.value), 0, "push"); dealSelect.blur(); });
  // a link to a place in the replay is followed here; a new tab, or a link pasted, loads the page there
  main().addEventListener("click", (event) => {
    const a = event.target.closest("a.pos");
    if (!a || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    go(Number(a.dataset.deal), Number(a.dataset.step), "push");
  });
  document.addEventListener("keydown", (event) => {
    const key = shortcut(event);
    if (key) { event.preventDefault(); actions[key](); }
  });
  window.addEventListener("popstate", () => {
    const at = positionOf(deals, new URLSearchParams(location.search));
    go(at.deal, at.step, "none");
  });

  const result = m.result || {};
  const key = (text) => el("kbd", { text });
  show(el("h1", { text: `Replay of ${id}` }),
       el("p", { class: "teams" }, sideOf(players, 0), " vs ", sideOf(players, 1), `: ${m.totals.join(" \u2013 ")}`,
          result.reason && result.reason !== "finished" ? ` (${result.reason}${result.detail ? `: ${result.detail}` : ""})` : ""),
       el("p", { class: "muted", id: "match-facts" }, "Seed ", el("code", { text: m.seed }), " \u00b7 ",
          el("a", { id: "download", href: `${API}/matches/${encodeURIComponent(id)}/record`, download: `${id}.json`,
                    text: "download the record (JSON)" }),
          " \u00b7 ", el("a", { href: `/matches/${encodeURIComponent(id)}`, text: "its events" })),
       status,
       el("div", { class: "controls", id: "deal-controls" }, buttons["prev-deal"], dealSelect, buttons["next-deal"]),
       el("div", { class: "controls", id: "step-controls" }, buttons.start, buttons["prev-trick"], buttons["prev-card"],
          buttons["next-card"], buttons["next-trick"], buttons.end),
       el("p", { id: "position", "aria-live": "polite" }, label, " \u00b7 ", link),
       el("p", { id: "shortcuts", class: "muted" }, "Keys: ", key("\u2190"), " ", key("\u2192"), " a card, ",
          key("\u2191"), " ", key("\u2193"), " a trick, ", key("Page Up"), " ", key("Page Down"), " or ", key("p"), " ",
          key("n"), " a deal, ", key("Home"), " ", key("End"), " the deal's start and end."),
       board, el("h2", { text: "Deal scores" }), scores, summary);
  const at = positionOf(deals, new URLSearchParams(location.search));
  go(at.deal, at.step, "replace");
  loadAnalysis(id, status, (an) => {
    view.an = an;
    view.row = null;
    scores.replaceChildren(scoresTable(deals, players, an));
    summary.replaceChildren(...analysisSummary(an, players));
    draw();
  });
}

// Why there is no replay to show: the match runs, is a sealed table of duplicate play, or was aborted.
function showNoReplay(id, m) {
  const running = m.state === "running";
  const sealed = "a table of duplicate play: its replay, hands and seed are shown once every table dealing its cards is over";
  const why = running ? `The match is being played: its replay is shown once it is over${m.sealed ? `, and as ${sealed}` : ""}.`
    : m.sealed ? `This table is sealed: ${sealed}.`
    : m.state === "aborted" ? "The match was aborted: no record of it is kept, so it has no replay."
    : "The replay is shown once the match is over.";
  show(el("h1", { text: `Replay of ${id}` }), el("p", { id: "not-yet", text: why }),
       running && !m.sealed ? el("p", {}, el("a", { href: `/matches/${encodeURIComponent(id)}`, text: "Watch it live" })) : "");
}

// The key's action, or "" for a key the page leaves alone (one typed in a field, or with a modifier).
function shortcut(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return "";
  const t = event.target;
  if (t && (t.isContentEditable || ["INPUT", "SELECT", "TEXTAREA"].includes(t.tagName))) return "";
  return {
    ArrowLeft: event.shiftKey ? "prev-trick" : "prev-card", ArrowRight: event.shiftKey ? "next-trick" : "next-card",
    ArrowUp: "prev-trick", ArrowDown: "next-trick", PageUp: "prev-deal", PageDown: "next-deal",
    p: "prev-deal", n: "next-deal", Home: "start", End: "end",
  }[event.key] || "";
}

function dealName(d) {
  const what = d.thrownIn ? " (thrown in)" : d.stopped ? " (unfinished)" : !d.outcome ? " (not replayed)" : "";
  return `deal ${d.index + 1}${what}`;
}

function stepLabel(d, step) {
  if (d.thrownIn) return "thrown in: no card played";
  if (!d.plays.length) return d.stopped ? "the match ended in the bidding" : "no card to show";
  if (step === 0) return `before trick 1 (${d.plays.length} cards to play)`;
  return `trick ${Math.floor((step - 1) / 4) + 1} of 8, card ${(step - 1) % 4 + 1} of 4`;
}

// ------------------------------------------------------------------ one step drawn
function drawDeal(d, step, players, an) {
  const played = d.plays.slice(0, step);
  const gone = new Set(played.map((p) => p.card));
  const current = step > 0 ? d.plays[step - 1] : null;
  // the trick at this step: the cards of its trick played so far (a whole trick once its 4th is)
  const inTrick = current ? played.filter((p) => p.trick === current.trick) : [];
  const trick = current && inTrick.length === 4 ? d.tricks[current.trick] : null;
  const next = d.plays[step];
  const mark = current ? an.marks.get(`${d.index}:${current.k}`) : null;
  const better = new Set(current ? betterCards(current, mark) : []);
  const seats = seatBoxes(players);
  seats.forEach((box, seat) => {
    const accuracy = seatAccuracy(an, d.index, seat);
    if (accuracy) box.querySelector(".seat-of").append(` \u00b7 ${accuracy}`);
    const hand = d.record.hands[seat] || [];
    box.querySelector(".current").replaceChildren(el("div", { class: "hand", "data-seat": seat },
      ...hand.filter((c) => !gone.has(c)).map((c) => card(c, current && current.seat === seat && better.has(c) ? "better" : ""))));
    const own = inTrick.find((p) => p.seat === seat);
    if (own) {
      box.append(el("div", { class: `trick-card${own === current ? " just" : ""}` }, "played ",
                    markedCard(own, an.marks.get(`${d.index}:${own.k}`), trick && trick.winner === seat ? "won" : "")));
    }
    if (next && next.seat === seat) box.classList.add("to-play");
  });
  const dealt = el("div", { id: "dealt", class: "muted" }, `dealt by ${seatName(players, d.record.dealer)}`,
                   d.record.retourne ? el("span", {}, ", turned up ", card(d.record.retourne)) : "");
  const centre = el("div", { class: "center" }, el("div", { id: "replay-contract" }, ...contractWords(d, players)), dealt,
    trick ? el("div", { id: "trick-winner", text: `trick ${current.trick + 1} to seat ${trick.winner}` }) : "",
    d.outcome && !d.thrownIn && step === d.plays.length ? el("div", { id: "deal-score", text: `deal score ${d.outcome.score.join(" \u2013 ")}` }) : "",
    d.stopped && step === d.plays.length ? el("div", { text: "the match ended here" }) : "");
  return [el("div", { class: "table" }, ...seats, centre),
          cardNote(d, current, mark, players),
          el("h2", { text: "Bids" }), bidList(d, players), biddingNote(an, d.index),
          d.plays.length ? el("h2", { text: "Tricks" }) : "", d.plays.length ? trickList(d, step, an) : ""];
}

function contractWords(d, players) {
  if (d.thrownIn) return ["thrown in: nobody took"];
  const o = d.outcome, c = d.contract;
  if (!c && !o) return [d.stopped ? "no contract: the match ended in the bidding" : "no contract"];
  const what = o ? (o.contract ? action(o.contract) : el("span", {}, "trump ", suit(o.trump)))
    : c.value ? action(`${c.value}${c.trump}${c.doubled ? ` ${c.doubled}` : ""}`) : el("span", {}, "trump ", suit(c.trump));
  const team = o ? o.takers : c.seat % 2;
  return [what, c ? `, taken by ${seatName(players, c.seat)}, team ${team}` : `, taken by team ${team}`];
}

// What the card at this step was: who played it, a strike if the referee played it, its analysis.
function cardNote(d, current, mark, players) {
  const note = el("p", { id: "card-note" });
  if (!current) {
    note.append(d.thrownIn ? "Nobody took: the deal was thrown in, and the next one dealt." :
                d.plays.length ? `${seatName(players, d.plays[0].seat)} leads the first trick.` : "");
    return note;
  }
  note.append(`${seatName(players, current.seat)} played `, action(current.text));
  const strike = d.struck.get(current.decision);
  if (strike) note.append(el("span", { class: "strike", text: ` (struck, ${strike.kind}: ${strike.reason}; the referee played it)` }));
  note.append(...markNote(current, mark));
  return note;
}

function bidList(d, players) {
  return el("ol", { class: "bids", id: "replay-bids" }, ...d.bids.map((b) => {
    const strike = d.struck.get(b.decision);
    return el("li", { "data-seat": b.seat }, `${seatName(players, b.seat)}: `, action(b.text),
              strike ? el("span", { class: "strike", title: strike.reason, text: ` (struck: ${strike.kind})` }) : "");
  }));
}

// The deal's tricks, each card a link to its step, marked by the analysis; the current card outlined,
// the cards still to come faded.
function trickList(d, step, an) {
  const items = [];
  for (let t = 0; t * 4 < d.plays.length; t++) {
    const done = d.tricks[t];
    items.push(el("li", { "data-trick": t + 1, class: step > 4 * t && step <= 4 * t + 4 ? "current" : "" },
      el("span", { class: "n muted", text: `${t + 1}.` }),
      ...d.plays.slice(4 * t, 4 * t + 4).map((p) => {
        const at = p.k + 1 === step ? "at" : p.k + 1 > step ? "ahead" : "";
        const strike = d.struck.get(p.decision);
        return positionLink(d.index, p.k + 1,
          markedCard(p, an.marks.get(`${d.index}:${p.k}`), `${done && done.winner === p.seat ? "won " : ""}${at}`.trim()),
          strike ? el("span", { class: "strike", title: `struck: ${strike.reason}`, text: "!" }) : "");
      }),
      done ? el("span", { class: "muted", text: ` \u2192 seat ${done.winner}` }) : ""));
  }
  return el("ol", { class: "tricks", id: "tricks" }, ...items);
}

// ------------------------------------------------------------------ the deals' scores
// Every deal, thrown in or unfinished too: its contract, takers, result, points, score and the running
// total; with an analysis, its luck, skill and marks.
function scoresTable(deals, players, an) {
  const pair = (p) => (p ? `${p[0]} \u2013 ${p[1]}` : "");
  const total = [0, 0];
  const rows = deals.map((d) => {
    const o = d.outcome;
    if (o && o.score) { total[0] += o.score[0]; total[1] += o.score[1]; }
    const cells = [el("td", { class: "name deal" }, positionLink(d.index, 0, `deal ${d.index + 1}`))];
    if (d.thrownIn || !o) {
      const why = d.thrownIn ? "thrown in: nobody took" : d.stopped ? "unfinished: the match ended" : "not replayed";
      cells.push(el("td", { class: "name why-none", colspan: 8, text: why }));
    } else {
      const taker = d.contract ? ` (${players[d.contract.seat] || `seat ${d.contract.seat}`})` : "";
      cells.push(el("td", { class: "name contract" }, o.contract ? action(o.contract) : el("span", {}, "trump ", suit(o.trump))),
                 el("td", { class: "name takers", text: `team ${o.takers}${taker}` }),
                 el("td", { class: "name made", text: madeText(o) }),
                 el("td", { class: "points", text: pair(o.card_points) }),
                 el("td", { class: "belote", text: o.belote === null || o.belote === undefined ? "" : `team ${o.belote}` }),
                 el("td", { class: "declarations", text: pair(o.declarations) }),
                 el("td", { class: "capot", text: o.capot === undefined ? "" : `team ${o.capot}` }),
                 el("td", { class: "score", text: pair(o.score) }));
    }
    cells.push(el("td", { class: "total", text: o ? pair(total) : "" }));
    if (an.whole) cells.push(...dealAnalysisCells(an, d));
    return el("tr", { "data-deal": d.index }, ...cells);
  });
  return table([["deal", "name"], ["contract", "name"], ["takers", "name"], ["result", "name"], ["card points"], ["belote"],
                ["declarations"], ["capot"], ["score"], ["total"], ...(an.whole ? ANALYSIS_COLUMNS : [])], rows, { id: "scores" });
}

function madeText(o) {
  const held = o.held_for_next_deal ? `, ${o.held_for_next_deal} held for the next deal` : "";
  const got = o.held_received ? `, with ${o.held_received[0] + o.held_received[1]} held before` : "";
  return `${o.made === true ? "made" : o.made === false ? "down" : "litige"}${held}${got}`;
}
