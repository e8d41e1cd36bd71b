// The sessions page: every session newest first, with its status, pending requests, agent and
// channel (not on a phone: the table fits its width); "waiting for me" keeps those with a request the
// person named in the header may answer.

import { get, post, who } from "./api.js";
import { el, shortTime, statusWords } from "./render.js";

const WIDE_ONLY = new Set(["Agent", "Channel"]); // a phone shows them on the session's page

export async function sessionsPage(main, params) {
  const mine = params.get("waiting") === "me";
  const heading = el("h1", {}, "Sessions");
  const filter = el("input", { type: "checkbox", id: "waiting-for-me", checked: mine });
  filter.addEventListener("change", () => {
    location.hash = filter.checked ? "#/sessions?waiting=me" : "#/sessions";
  });
  const body = el("tbody");
  const table = el("table", {},
    el("caption", { class: "muted" }, mine ? `Sessions waiting for ${who.me || "a person"}` : "All sessions, newest first"),
    el("thead", {}, el("tr", {}, ["Session", "Status", "Pending", "Agent", "Channel", "Started"].map((h) => el("th", { scope: "col", class: WIDE_ONLY.has(h) ? "wide-only" : undefined }, h)))),
    body);
  const newKey = el("input", { id: "new-key", name: "session_key", placeholder: "optional", size: 16 });
  const started = el("span", { role: "status", class: "muted" });
  const start = el("form", { class: "filters", "aria-label": "Start a session" },
    el("label", { for: "new-key" }, "New session key"), newKey,
    el("button", { type: "submit" }, "Start a session"), started);
  start.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const live = await post("/sessions", newKey.value.trim() ? { session_key: newKey.value.trim() } : {});
      location.hash = `#/sessions/${encodeURIComponent(live.session_id)}`;
    } catch (err) {
      started.textContent = `Not started: ${err.message}`;
      started.className = "error";
    }
  });
  main.replaceChildren(heading, who.may("operator") ? start : "",
    el("div", { class: "filters" }, el("label", { for: "waiting-for-me" }, filter, " Waiting for me")),
    table);
  const query = new URLSearchParams({ limit: "100" });
  if (mine && who.me) query.set("waiting_for", who.me);
  else if (mine) query.set("waiting", "true");
  body.append(el("tr", {}, el("td", { colspan: 6, class: "muted" }, "Loading…")));
  try {
    const sessions = await get(`/sessions?${query}`);
    body.replaceChildren();
    if (!sessions.length) body.append(el("tr", {}, el("td", { colspan: 6, class: "muted" }, "No sessions yet.")));
    for (const s of sessions) {
      body.append(el("tr", {},
        el("td", {}, el("a", { href: `#/sessions/${encodeURIComponent(s.session_key)}` }, s.session_key)),
        el("td", {}, el("span", { class: "status" }, statusWords(s)), s.reason ? el("div", { class: "muted" }, s.reason) : ""),
        el("td", {}, String(s.pending)),
        el("td", { class: "wide-only" }, s.agent_id ?? ""),
        el("td", { class: "wide-only" }, s.channel ?? ""),
        el("td", {}, s.started_at ? shortTime(s.started_at) : "")));
    }
  } catch (err) {
    body.append(el("tr", {}, el("td", { colspan: 6, class: "error" }, `Could not list sessions: ${err.message}`)));
  }
}
