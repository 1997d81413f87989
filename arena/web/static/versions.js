// Belote Arena's pages: a bot's versions page: its versions, their ratings, the latest SPRT (common.js has the helpers; app.js starts the page).
"use strict";

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
