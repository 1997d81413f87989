// Belote Arena's pages: a match's analysis as the replay draws it (replay.js): the marks on the cards, the
// better card on hover or tap, each bot's accuracy, each deal's luck and skill, the worst decisions.
//
// The analysis is GET /api/v1/matches/ID/analysis (docs/web.md#the-replay), asked only when the node
// serves it (the shell's data-serves names it): {"state": "pending", "position"} (a 202) while it is
// made, then the analysis: {"note", "settings": {"labels"}, "bots": [...], "teams": [...], "worst": [...],
// "deals": [{"index", "luck", "skill", "accuracy", "bidding", "cards": [{"i", "trick", "seat", "card",
// "value", "best_value", "best", "loss", "label", "second_opinion"}]}]}. A field it lacks is left out.
"use strict";

const MARKS = { inaccuracy: "?!", mistake: "?", blunder: "??" };
const MARK_WORDS = { inaccuracy: "an inaccuracy", mistake: "a mistake", blunder: "a blunder" };
// what double-dummy analysis cannot see, said with its marks when the analysis says nothing of it
const DOUBLE_DUMMY_NOTE = "Double-dummy values suppose every player sees every card: a card marked here " +
  "may still have been right on what its bot knew.";
// while the analysis is being made, the page asks again this often, this many times at most
const ANALYSIS_POLL_MS = 5000, ANALYSIS_POLLS = 120;
// no analysis: what the page draws from (nothing)
const NO_ANALYSIS = { marks: new Map(), deals: new Map(), whole: null };

// The analysis indexed for drawing: its cards by "deal:i" (i: the card's place in its deal's play,
// from 0), its deals by index.
function analysisIndex(analysis) {
  const marks = new Map(), deals = new Map();
  for (const d of analysis.deals || []) {
    if (!Number.isInteger(d.index)) continue;
    deals.set(d.index, d);
    for (const c of d.cards || []) if (Number.isInteger(c.i)) marks.set(`${d.index}:${c.i}`, c);
  }
  return { marks, deals, whole: analysis };
}

// The cards of a list of action texts ("QH belote" is QH).
function cardsOf(actions) { return [].concat(actions || []).map((t) => String(t).split(/\s+/)[0].toUpperCase()); }

function points(n) { return `${n} point${n === 1 ? "" : "s"}`; }

// A double-dummy value: the deal's score of the side that played less the other side's ("+40", "−270").
function margin(n) { return n > 0 ? `+${n}` : n < 0 ? `\u2212${-n}` : "0"; }

// What a card's mark says: "" for none (no choice, the best card, a loss under the labels, a card the
// referee played for a struck bot), else its label.
function markLabel(mark) { return mark && !mark.fallback && MARKS[mark.label] ? mark.label : ""; }

// The better cards than the one played (none when it was among the best).
function betterCards(play, mark) {
  if (!mark || !(mark.loss > 0)) return [];
  return cardsOf(mark.best).filter((c) => c !== play.card);
}

// A card played, with its mark: the glyph (?! ? ??) and, on hover or focus, the better card.
function markedCard(play, mark, extra) {
  const chip = card(play.card, extra);
  const label = markLabel(mark);
  if (!mark || mark.loss === undefined) return chip;
  const node = el("span", { class: `marked${label ? ` mark-${label}` : ""}`, "data-label": label, title: markTitle(play, mark) }, chip);
  if (!label) return node;
  node.append(el("sup", { class: "glyph", text: MARKS[label] }));
  const better = betterCards(play, mark);
  if (better.length) node.append(el("span", { class: "better", role: "tooltip" }, "better: ", ...better.map((c) => card(c)), ` (${points(mark.loss)} more)`));
  return node;
}

function markTitle(play, mark) {
  const better = betterCards(play, mark);
  if (!better.length) return `${play.card}: a best card (double-dummy margin ${margin(mark.value)})`;
  const word = MARK_WORDS[markLabel(mark)];
  return `${play.card}${word ? `: ${word}` : ""}, ${points(mark.loss)} lost; better ${better.join(" or ")} ` +
    `(double-dummy margin ${margin(mark.best_value)} against ${margin(mark.value)})`;
}

// What the analysis says of the card at this step, for the note under the table.
function markNote(play, mark) {
  if (!mark || mark.loss === undefined) return mark && mark.choices === 1 ? [". Its only legal card."] : [];
  if (mark.fallback) return [". The referee played it: it is no decision of the bot's."];
  const better = betterCards(play, mark);
  const out = [];
  if (better.length) {
    const word = MARK_WORDS[markLabel(mark)];
    out.push(el("span", { class: `analysis${markLabel(mark) ? ` mark-${markLabel(mark)}` : ""}` },
      `. ${word ? `${word[0].toUpperCase()}${word.slice(1)}: ` : ""}double-dummy, its side's margin (its deal score ` +
      `less the other's) is ${margin(mark.value)} with it, ${margin(mark.best_value)} with `,
      ...better.flatMap((c, i) => (i ? [" or ", card(c)] : [card(c)])), ` (${points(mark.loss)} lost).`));
  } else {
    out.push(el("span", { class: "analysis" }, `. A best card: double-dummy, its side's margin is ${margin(mark.value)}.`));
  }
  const second = mark.second_opinion;
  if (second && second.best) {
    const theirs = cardsOf(second.best).filter((c) => c !== play.card);
    out.push(el("span", { class: "second-opinion" }, " Seeing only what the bot saw, the search bot ",
      ...(theirs.length ? ["prefers ", ...theirs.flatMap((c, i) => (i ? [" or ", card(c)] : [card(c)])), ` (${second.loss} lost).`]
        : ["plays it too."])));
  }
  return out;
}

// A seat's accuracy over the deal, for its box ("" without one).
function seatAccuracy(an, deal, seat) {
  const d = an.deals.get(deal);
  const a = d && d.accuracy ? d.accuracy[seat] : null;
  return a === null || a === undefined ? "" : `accuracy ${a}`;
}

// What the analysis says of a deal's bidding: the contract reached, the par, what each side lost by it.
function biddingNote(an, deal) {
  const d = an.deals.get(deal);
  const b = d && d.bidding;
  if (!b || !b.par) return "";
  const contract = (c) => (c ? [action(c.text), ` by team ${c.takers}`] : ["all pass"]);
  const lost = (b.bidding_loss || [0, 0]).map((x, team) => (x > 0 ? `team ${team} lost ${points(x)} by it` : "")).filter(Boolean);
  return el("p", { id: "bidding-note", class: "analysis" }, "Par (the contract both sides reach bidding with every card seen): ",
            ...contract(b.par.contract), lost.length ? `; ${lost.join(", ")}.` : ": the bidding lost nothing.");
}

// The deal's marks, luck and skill for its row of the scores' table (team 0's luck and skill: team
// 1's are their opposites).
function dealAnalysisCells(an, d) {
  const a = an.deals.get(d.index);
  const counts = {};
  for (const p of d.plays) {
    const label = markLabel(an.marks.get(`${d.index}:${p.k}`));
    if (label) counts[label] = (counts[label] || 0) + 1;
  }
  return [el("td", { class: "luck", text: a && a.luck ? margin(a.luck[0]) : "" }),
          el("td", { class: "skill", text: a && a.skill ? margin(a.skill[0]) : "" }),
          el("td", { class: "name marks" }, ...Object.keys(MARKS).filter((l) => counts[l])
            .map((l) => el("span", { class: `mark-${l}`, text: `${counts[l]}\u00d7${MARKS[l]} ` })))];
}
const ANALYSIS_COLUMNS = [["luck"], ["skill"], ["marks", "name"]];

// A contract as the analysis writes it ("100H by team 0", "all pass"), its bid drawn as everywhere else.
function contractText(text) {
  const found = /^(\S+)( by team [01])$/.exec(String(text));
  return found ? [action(found[1]), found[2]] : [String(text)];
}

// Each bot's figures and each team's luck and skill over the match, and its worst decisions, each a link
// to where it was made.
function analysisSummary(an, players) {
  const a = an.whole;
  if (!a) return [];
  const out = [];
  const bots = a.bots || [];
  if (bots.length) {
    out.push(el("h2", { text: "Analysis" }), scroll(table(
      [["bot", "name"], ["accuracy"], ["decisions"], ["?!"], ["?"], ["??"], ["loss / decision"], ["second opinion's", "wide"]],
      bots.map((b) => el("tr", { "data-bot": b.bot }, el("td", { class: "name", text: b.bot }),
        el("td", { class: "accuracy", text: b.accuracy === null || b.accuracy === undefined ? "" : b.accuracy }),
        el("td", { text: b.decisions }), el("td", { text: b.inaccuracies ?? b.inaccuracys ?? "" }),
        el("td", { text: b.mistakes ?? "" }), el("td", { text: b.blunders ?? "" }),
        el("td", { text: b.loss_per_decision ?? "" }),
        el("td", { class: "wide", text: (b.second_opinion || {}).loss_per_decision ?? "" }))),
      { id: "analysis-bots" })));
  }
  const teams = a.teams || [];
  if (teams.length) {
    out.push(el("ul", { class: "inline", id: "luck-skill" }, ...teams.map((t) => el("li", { "data-team": t.team },
      `team ${t.team} (${t.name}): result ${t.result} = luck ${t.luck} + skill ${t.skill}`))),
      el("p", { class: "muted note", text: "A result is a team's points less the other's. Luck is what the reference " +
        "bots make of the same cards, skill the rest; the deal scores' luck and skill are team 0's (team 1's are their opposites)." }));
  }
  const worst = (a.worst || []).slice(0, 5);
  if (worst.length) {
    out.push(el("h2", { text: "Worst decisions" }), el("ol", { id: "worst", class: "worst" }, ...worst.map((w) => {
      const label = MARKS[w.label] ? el("span", { class: `mark-${w.label}`, text: ` ${MARKS[w.label]}` }) : "";
      if (w.kind === "bidding") {
        return el("li", { "data-kind": "bidding", "data-deal": w.deal + 1 }, positionLink(w.deal, 0, `deal ${w.deal + 1}, the bidding`),
                  `: ${w.bot} reached `, ...contractText(w.played), "; better ",
                  ...[].concat(w.better).flatMap((b, i) => (i ? [" or ", ...contractText(b)] : contractText(b))),
                  `: ${points(w.loss)} lost`, label);
      }
      const played = { card: cardsOf(w.played)[0] };
      return el("li", { "data-kind": "card", "data-deal": w.deal + 1, "data-card": played.card },
        positionLink(w.deal, w.i + 1, `deal ${w.deal + 1}, trick ${w.trick + 1}`), `: ${w.bot} played `, card(played.card),
        label, ", better ", ...cardsOf(w.better).flatMap((c, i) => (i ? [" or ", card(c)] : [card(c)])), `: ${points(w.loss)} lost`);
    })));
  }
  return out;
}

// Read the analysis if the node serves one (none asked for otherwise: no failed request, no console
// error), and say what there is: marks, being made, or none. ``drawn`` gets it, indexed, once ready.
async function loadAnalysis(id, status, drawn) {
  const serves = (document.body.dataset.serves || "").split(/\s+/);
  if (!serves.includes("analysis")) {
    status.textContent = "This node does not analyse matches: no marks on the cards.";
    return;
  }
  for (let poll = 0; poll < ANALYSIS_POLLS; poll++) {
    let analysis;
    try {
      analysis = await getJSON(`/matches/${encodeURIComponent(id)}/analysis`);
    } catch (error) {
      status.textContent = `No analysis of this match: ${error.message}`;
      return;
    }
    if (Array.isArray(analysis.deals)) {
      status.replaceChildren("Marks: ", ...Object.entries(MARKS).flatMap(([l, g]) => [el("span", { class: `mark-${l}`, text: g }), ` ${l}, `]),
        "by the double-dummy points a card lost (hover or tap a card for the better one). ",
        el("span", { id: "analysis-note", text: analysis.note || DOUBLE_DUMMY_NOTE }));
      drawn(analysisIndex(analysis));
      return;
    }
    if (analysis.state !== "pending") {
      status.textContent = `No analysis of this match${analysis.why ? `: ${analysis.why}` : "."}`;
      return;
    }
    const queue = analysis.position > 0 ? ` (number ${analysis.position} in the queue)` : "";
    status.textContent = `The analysis of this match is being made${queue}: its marks show here once it is ready.`;
    await new Promise((done) => setTimeout(done, ANALYSIS_POLL_MS));
  }
}
