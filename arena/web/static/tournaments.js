// Belote Arena's pages: the tournaments' pages: the list and one tournament's (common.js has the helpers; app.js starts the page).
"use strict";

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

// The tournament's files: its standings as CSV, its records (every finished match's) as JSON Lines or a
// zip. A table of duplicate play still sealed is left out of the records until its twin is over.
function exportLinks(t) {
  const base = `${API}/tournaments/${encodeURIComponent(t.tournament_id)}`;
  const link = (id, file, text) => el("a", { id, href: `${base}/${file}`, download: `${t.tournament_id}-${file}`, text });
  return el("p", { id: "exports", class: "muted" }, "Download: ",
    link("export-standings", "standings.csv", "standings (CSV)"), " \u00b7 ",
    link("export-jsonl", "records.jsonl", "records (JSON Lines)"), " \u00b7 ",
    link("export-zip", "records.zip", "records (zip)"),
    t.duplicate_mode ? " \u00b7 a table still sealed is added once every table dealing its cards is over." : "");
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
       t.duplicate_scoring ? el("p", { id: "duplicate-scoring", class: "muted", text: t.duplicate_scoring }) : "",
       exportLinks(t),
       el("h2", { text: "Crosstable" }), cross,
       el("h2", { text: "Finished matches" }), finished.box);
  await finished.draw();
}
