// Belote Arena's pages: the schedules page (common.js has the helpers; app.js starts the page).
"use strict";

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
