// The graphs page: every graph newest first, by its title (its first task, or the session that
// started it) with its id under it, its status and what waits in it (on a phone, not its channel).

import { get } from "./api.js";
import { el, shortTime, statusWords } from "./render.js";

export async function graphsPage(main) {
  const body = el("tbody");
  main.replaceChildren(el("h1", {}, "Graphs"),
    el("table", {},
      el("caption", { class: "muted" }, "Task graphs, newest first"),
      el("thead", {}, el("tr", {}, ["Graph", "Status", "Pending", "Channel", "Started"].map((h) => el("th", { scope: "col", class: h === "Channel" ? "wide-only" : undefined }, h)))),
      body));
  try {
    const graphs = await get("/graphs?limit=100");
    if (!graphs.length) body.append(el("tr", {}, el("td", { colspan: 5, class: "muted" }, "No graphs yet.")));
    for (const g of graphs) {
      body.append(el("tr", {},
        el("td", {}, el("a", { href: `#/graphs/${g.graph_id}` }, g.title ?? g.graph_id),
          g.title ? el("div", { class: "muted id" }, g.graph_id) : ""),
        el("td", {}, el("span", { class: "status" }, statusWords(g)), g.reason ? el("div", { class: "muted" }, g.reason) : ""),
        el("td", {}, String(g.pending)),
        el("td", { class: "wide-only" }, g.channel ?? ""),
        el("td", {}, g.started_at ? shortTime(g.started_at) : "")));
    }
  } catch (err) {
    body.append(el("tr", {}, el("td", { colspan: 5, class: "error" }, `Could not list graphs: ${err.message}`)));
  }
}
