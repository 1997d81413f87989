// Belote Arena's pages: a bot's own history and statistics, on its page (bots.js draws the page and
// calls drawBotHistory): its statistics, its head-to-head against each opponent, its matches with
// filters and pages (GET /bots/NAME/stats and /bots/NAME/matches, docs/web.md), and the chart of its
// Bradley-Terry rating as it was fitted (GET /bots/NAME/history?method=bt).
"use strict";

const HISTORY_PAGE = 20;
const RESULT_WORDS = { win: "won", draw: "drawn", loss: "lost" };
// the filters a reader sets, kept in the page's URL (a link to a bot's losses against one opponent)
const HISTORY_FILTERS = ["opponent", "result", "pool", "tournament", "since", "until"];

// "95.2 (80.1 – 110.3)": a mean per deal and its 95% interval, or "–" with no deal
function meanText(m, signed) {
  if (!m || !m.n) return "\u2013";
  const f = (v) => (signed && v > 0 ? "+" : "") + fixed(v, 1);
  return `${f(m.mean)} (${f(m.low)} \u2013 ${f(m.high)})`;
}

function ratio(made, taken) { return taken ? `${made} / ${taken} (${Math.round((100 * made) / taken)}%)` : "0"; }

function facts(id, pairs) {
  const list = el("dl", { class: "facts", id });
  for (const [term, value] of pairs) list.append(el("dt", { text: term }), el("dd", {}, value));
  return list;
}

function statisticsSection(report) {
  const s = report.statistics;
  const c = s.contracts;
  if (!s.matches) {
    return [empty("no-statistics", "No statistics yet: they count every match it plays from now on, once its " +
                  "result is written (a duplicate table once every table dealing its cards is over).")];
  }
  const out = [facts("statistics", [
    ["matches", `${s.matches}: ${s.wins} won, ${s.draws} drawn, ${s.losses} lost` +
                (s.forfeits ? `, ${s.forfeits} forfeited` : "")],
    ["deals", `${s.deals} played` + (s.thrown_in ? `, ${s.thrown_in} thrown in` : "")],
    ["contracts made / taken", ratio(c.made, c.taken)],
    ["coinches", `${s.coinches.said} said, ${s.coinches.against} against its contracts, ` +
                 `${s.coinches.surcoinches} surcoinched`],
    ["capots", `${s.capots.made} made, ${s.capots.against} against`],
    ["points per deal as taker", meanText(s.points_per_deal.taker)],
    ["points per deal in defence", meanText(s.points_per_deal.defence)],
    ["declarations", `${s.declarations.points} points in ${s.declarations.deals} deals`],
    ["belote", String(s.belotes)],
    ["strikes", `${s.strikes.late} late, ${s.strikes.illegal} illegal, ${s.strikes.no_action} no action` +
                (s.fallbacks ? ` (${s.fallbacks} fallbacks played)` : "")],
    ["decision time", s.decision_ms.decisions ?
      `p50 ${s.decision_ms.p50} ms, p99 ${s.decision_ms.p99} ms (${s.decision_ms.decisions} decisions)` : "\u2013"],
  ])];
  if (c.by_level.length) {
    out.push(el("div", { class: "contract-tables" },
      scroll(table([["level", "name"], ["made / taken"]], c.by_level.map((r) => el("tr", { "data-level": r.level },
        el("td", { class: "name", text: r.level }), el("td", { text: ratio(r.made, r.taken) }))), { id: "by-level" })),
      scroll(table([["trump", "name"], ["made / taken"]], c.by_trump.map((r) => el("tr", { "data-trump": r.trump },
        el("td", { class: "name" }, suit(r.trump)), el("td", { text: ratio(r.made, r.taken) }))), { id: "by-trump" }))));
  }
  out.push(el("p", { class: "muted", id: "accuracy-over-time" }, ...(s.accuracy.length ?
    ["Accuracy in its latest analysed matches, oldest first: ",
     ...s.accuracy.flatMap((a, i) => [i ? ", " : "", matchLink(a.match_id, fixed(a.accuracy, 1))])] :
    ["Accuracy over time: no match of it analysed yet."])));
  return out;
}

function headToHeadSection(report) {
  if (!report.head_to_head.length) return [];
  const rows = report.head_to_head.map((r) => el("tr", { "data-opponent": r.opponent },
    el("td", { class: "name" }, sideLinks(r.opponent)), el("td", { text: r.games }),
    el("td", { text: r.wins }), el("td", { text: r.draws }), el("td", { text: r.losses }),
    el("td", { class: "name", text: meanText(r.points_per_deal, true) })));
  return [el("h2", { text: "Head-to-head" }),
          el("p", { class: "muted note", text: "Points per deal: its side's points less the opponent's, each " +
                                               "deal played, with the 95% interval." }),
          scroll(table([["opponent", "name"], ["games"], ["won"], ["drawn"], ["lost"], ["points per deal", "name"]],
                       rows, { id: "head-to-head" }))];
}

function changeText(m) {
  const parts = Object.entries(m.rating_change || {}).map(([pool, d]) => `${d > 0 ? "+" : ""}${fixed(d, 1)} ${pool}`);
  return parts.length ? parts.join(", ") : "";
}

function historyRows(page) {
  return page.matches.map((m) => el("tr", { "data-match": m.match_id, class: m.sealed ? "sealed" : "" },
    el("td", { class: "name", text: new Date(m.at * 1000).toISOString().slice(0, 16).replace("T", " ") }),
    // a finished match opens on its replay (its analysis's marks where the node analyses), one click from a loss
    el("td", { class: "name" }, m.sealed ? matchLink(m.match_id) :
      el("a", { href: `/matches/${encodeURIComponent(m.match_id)}/replay`, text: m.match_id, title: `replay of ${m.match_id}` })),
    el("td", { class: "name" }, sideLinks(m.opponent), m.partner ? el("span", { class: "muted" }, " (with ", botLink(m.partner), ")") : ""),
    // a sealed table: another table deals its cards and is not over, so neither its result nor its score shows yet
    el("td", { class: "name result", text: m.sealed ? "sealed" : RESULT_WORDS[m.result] + (m.forfeit ? " (forfeit)" : "") }),
    el("td", { class: "score", text: m.sealed ? "" : `${m.totals[0]} \u2013 ${m.totals[1]}` }),
    el("td", { class: "name wide change", text: m.sealed ? "shown once every table dealing its cards is over" : changeText(m) }),
    el("td", { class: "wide accuracy", text: m.accuracy === null || m.accuracy === undefined ? "" : fixed(m.accuracy, 1) })));
}

function historyFilters(report, pools, onChange) {
  const choice = (key, label, values, current) => {
    const select = el("select", { id: `filter-${key}`, "aria-label": label },
      el("option", { value: "", text: "any" }), ...values.map((v) => el("option", { value: v, text: v })));
    select.value = values.includes(current) ? current : "";
    select.addEventListener("change", onChange);
    return el("label", {}, `${label} `, select);
  };
  const date = (key, label) => {
    const input = el("input", { id: `filter-${key}`, type: "date", "aria-label": label, value: query(key, "") });
    input.addEventListener("change", onChange);
    return el("label", {}, `${label} `, input);
  };
  const tournament = el("input", { id: "filter-tournament", type: "text", size: 14, "aria-label": "tournament",
                                   value: query("tournament", ""), placeholder: "id or ladder:pool" });
  tournament.addEventListener("change", onChange);
  return el("form", { class: "controls", id: "history-filters", onsubmit: (e) => { e.preventDefault(); onChange(); } },
    choice("opponent", "opponent", report.head_to_head.map((r) => r.opponent), query("opponent", "")),
    choice("result", "result", ["win", "draw", "loss"], query("result", "")),
    choice("pool", "pool", pools, query("pool", "")),
    el("label", {}, "tournament ", tournament), date("since", "from"), date("until", "before"));
}

// The bot's statistics, head-to-head and history (its filters, and pages by cursor) into ``box``.
async function drawBotHistory(box, name, pools) {
  const base = `/bots/${encodeURIComponent(name)}`;
  const report = await getJSON(`${base}/stats`);
  const list = el("div", { id: "history-list" });
  const cursors = [""];
  const filters = () => {
    const out = {};
    for (const key of HISTORY_FILTERS) {
      const node = document.getElementById(`filter-${key}`);
      out[key] = node ? node.value.trim() : "";
    }
    return out;
  };
  let asked = 0;  // the latest page asked for: an answer to an earlier one (filters changed since) is dropped
  const drawPage = async () => {
    const f = filters();
    setQuery(f);
    const params = new URLSearchParams({ limit: String(HISTORY_PAGE) });
    for (const [k, v] of Object.entries(f)) if (v) params.set(k, v);
    const cursor = cursors[cursors.length - 1];
    if (cursor) params.set("cursor", cursor);
    const mine = ++asked;
    const page = await getJSON(`${base}/matches?${params}`);
    if (mine !== asked) return;
    if (!page.matches.length) {
      list.replaceChildren(el("p", { class: "muted", id: "no-history",
        text: page.kept ? "No match passes these filters." : "No match yet in its history." }));
      return;
    }
    const first = (cursors.length - 1) * HISTORY_PAGE + 1;
    const pager = el("div", { class: "pager", id: "history-pager" },
      el("button", { type: "button", class: "prev", disabled: cursors.length > 1 ? null : "",
                     onclick: () => { cursors.pop(); drawPage().catch(showError); } }, "\u2190 newer"),
      el("span", { class: "range", text: `${first}\u2013${first + page.matches.length - 1} of ${page.total}` }),
      el("button", { type: "button", class: "next", disabled: page.next_cursor ? null : "",
                     onclick: () => { cursors.push(page.next_cursor); drawPage().catch(showError); } }, "older \u2192"));
    list.replaceChildren(
      scroll(table([["when (UTC)", "name"], ["match", "name"], ["opponent", "name"], ["result", "name"], ["score"],
                    ["rating change", "name wide"], ["accuracy", "wide"]], historyRows(page), { id: "history-table" })),
      pager,
      page.kept >= page.kept_at_most ?
        el("p", { class: "muted note", text: `The history keeps its latest ${page.kept_at_most} matches; the ` +
                                             "statistics count every one." }) : "");
  };
  const onChange = () => { cursors.splice(1); drawPage().catch(showError); };
  box.replaceChildren(
    el("h2", { text: "Statistics" }), ...statisticsSection(report),
    ...headToHeadSection(report),
    el("h2", { text: "History" }), historyFilters(report, pools, onChange), list);
  await drawPage();
}

// The Bradley-Terry rating as the pool was fitted now and then: a point and its 95% interval each time,
// against the bot's games in the pool.
function btChart(h) {
  const points = h.history;
  if (!points.length) {
    return el("p", { class: "muted", id: "bt-history", text: "No Bradley-Terry point yet in this pool: one is " +
                                                               "kept as the pool is fitted (its leaderboard read)." });
  }
  const width = 480, height = 220, left = 52, right = 14, top = 12, bottom = 40;
  const xs = points.map((p) => p[1]), lows = points.map((p) => p[3]), highs = points.map((p) => p[4]);
  const xt = ticks(0, Math.max(...xs), 5);
  const yt = ticks(Math.min(...lows) - 5, Math.max(...highs) + 5, 4);
  const [x0, x1, y0, y1] = [xt[0], xt[xt.length - 1], yt[0], yt[yt.length - 1]];
  const sx = (v) => left + (x1 > x0 ? (v - x0) / (x1 - x0) : 0.5) * (width - left - right);
  const sy = (v) => height - bottom - (y1 > y0 ? (v - y0) / (y1 - y0) : 0.5) * (height - top - bottom);
  const last = points[points.length - 1];
  const chart = svg("svg", { class: "chart", id: "bt-history", viewBox: `0 0 ${width} ${height}`, role: "img",
                             "aria-label": `Bradley-Terry rating of ${h.bot} in ${h.pool}: ${fixed(last[2], 0)} after ${last[1]} games` });
  const axes = chartAxes(xt, yt, sx, sy, { width, height, left, right, top, bottom });
  axes.append(svg("text", { class: "axis-label", x: (left + width - right) / 2, y: height - 6, "text-anchor": "middle" },
                  `its games in ${h.pool}`),
              svg("text", { class: "axis-label", x: -(top + height - bottom) / 2, y: 14, transform: "rotate(-90)",
                            "text-anchor": "middle" }, "Bradley-Terry"));
  chart.append(axes);
  if (points.length > 1) chart.append(svg("polyline", { points: points.map((p) => `${sx(p[1])},${sy(p[2])}`).join(" ") }));
  for (const [, games, rating, low, high] of points) {
    chart.append(svg("line", { class: "whisker", x1: sx(games), x2: sx(games), y1: sy(low), y2: sy(high) }));
    const dot = svg("circle", { class: "point", cx: sx(games), cy: sy(rating), r: 3 });
    dot.append(svg("title", {}, `after ${games} games: ${fixed(rating, 0)} (${fixed(low, 0)} \u2013 ${fixed(high, 0)})`));
    chart.append(dot);
  }
  return chart;
}
