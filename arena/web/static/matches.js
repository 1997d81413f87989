// Belote Arena's pages: a match's pages: live, and its replay (common.js has the helpers; app.js starts the page).
"use strict";

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
