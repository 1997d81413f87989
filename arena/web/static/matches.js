// Belote Arena's pages: a match as it is played, and the seats its replay (replay.js) draws too (common.js has
// the helpers; app.js starts the page).
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
