// One graph: its diagram with live task statuses, the gates and tool approvals waiting in it,
// pause / resume / cancel, a task's versions with their inputs and outputs, a rollback with new
// input (checked before it is sent), and who did what. Refreshed on every event of its stream,
// followed until the graph ends (the page says so; a rollback that reopens it follows it again).

import { connectionText, follow, get, post, who } from "./api.js";
import { focusLinked, showCards } from "./cards.js";
import { diagram } from "./diagram.js";
import { el, outputView } from "./render.js";

const ASSIGNEE = /^(Agent|Group|Human):[A-Za-z0-9_.\-]+$/;

// What is wrong with a rollback before it is sent (the contract's rules), or null.
export function rollbackProblem(inputText, assignee, comment) {
  let input;
  try { input = JSON.parse(inputText); } catch (err) { return `new input: not JSON (${err.message})`; }
  if (input === null || typeof input !== "object" || Array.isArray(input)) return "new input: must be a JSON object";
  if (assignee && !ASSIGNEE.test(assignee)) return "new assignee: expected Agent:<name>, Group:<name> or Human:<name>";
  if (!comment.trim()) return "comment: say why (it is recorded in the audit)";
  return null;
}

const PHONE = window.matchMedia("(max-width: 600px)"); // the diagram then runs top to bottom
const WIDE_ONLY = new Set(["Version", "Assignee"]); // a phone shows them in the task's details


// What a sent intervention did, in words.
function interventionSaid(body, task) {
  if (body.intervention_type === "ROLLBACK_AND_MODIFY") {
    const next = Math.max(0, ...task.versions.map((v) => v.version)) + 1;
    return `Rollback sent: task ${task.task_id} runs again with the new input, as version ${next}; what follows it runs again after it.`;
  }
  if (body.intervention_type === "PAUSE") return `Task ${task.task_id} paused: nothing after it starts until it is resumed.`;
  if (body.intervention_type === "RESUME") return `Task ${task.task_id} resumed.`;
  return `${body.intervention_type.toLowerCase().replaceAll("_", " ")} sent.`;
}

export function graphPage(main, graphId, params, setConnection) {
  const path = `/graphs/${encodeURIComponent(graphId)}`;
  const controller = new AbortController();
  const status = el("p", { class: "muted" });
  const controls = el("div", { class: "filters", role: "group", "aria-label": "Whole graph" });
  const cards = el("section", { class: "cards", "aria-label": "Requests waiting for a decision" });
  const picture = el("div", { class: "diagram-box", tabindex: 0, role: "region", "aria-label": "Diagram" });
  const table = el("tbody");
  const detail = el("section", { "aria-labelledby": "task-h", hidden: true });
  const audit = el("ul");
  main.replaceChildren(el("h1", {}, `Graph ${graphId}`), status, controls, cards, picture,
    el("h2", {}, "Tasks"),
    el("table", {}, el("thead", {}, el("tr", {}, ["Task", "Status", "Version", "Assignee", "Why", ""].map((h) => el("th", { scope: "col", class: WIDE_ONLY.has(h) ? "wide-only" : undefined }, h)))), table),
    detail,
    el("section", { "aria-labelledby": "graph-audit-h" }, el("h2", { id: "graph-audit-h" }, "Who did what"), audit));

  let picked = params.get("task");
  let lastSaid = ["", ""]; // the last intervention's outcome, kept across refreshes
  let timer = null;
  const refreshSoon = () => { clearTimeout(timer); timer = setTimeout(refresh, 150); };

  async function refresh() {
    try {
      const view = await get(`${path}?limit=1000`);
      status.textContent = `${view.status} · requested by ${view.requested_by} · ${Object.entries(view.counts).map(([s, n]) => `${n} ${s}`).join(", ")}${view.reason ? ` · ${view.reason}` : ""}`;
      showControls(view);
      showCards(cards, path, view.pending_interactions, { canApprove: who.may("approver"), onDecided: reopened });
      focusLinked(cards, params);
      picture.replaceChildren(diagram(view, (t) => pick(t.task_uuid), PHONE.matches));
      table.replaceChildren(...view.tasks.map((t) => el("tr", { "data-task": t.task_id },
        el("td", {}, t.task_id), el("td", {}, t.paused ? `${t.status} (paused)` : t.status), el("td", { class: "wide-only" }, String(t.version)),
        el("td", { class: "wide-only" }, t.assignee_id), el("td", {}, t.reason ?? ""),
        el("td", {}, el("button", { type: "button", "aria-label": `Details of ${t.task_id}`, onclick: () => pick(t.task_uuid) }, "Details")))));
      if (picked) await showTask(picked, view.tasks.find((t) => t.task_uuid === picked || t.task_id === picked));
      const trail = await get(`${path}/audit`);
      audit.replaceChildren(...trail.entries.slice(-30).map((e) => el("li", {},
        `${new Date(e.at).toLocaleTimeString()} ${e.kind} by ${e.principal} (${e.channel})${e.interaction_id ? ` ${e.interaction_id}` : ""}${e.comment ? `: ${e.comment}` : ""}`)));
    } catch (err) {
      status.textContent = `Could not read the graph: ${err.message}`;
      status.className = "error";
    }
  }

  function showControls(view) {
    if (!who.may("operator")) { controls.replaceChildren(); return; }
    const act = (name) => async () => {
      try { await post(`${path}/${name}`, { principal: who.me || undefined }); } catch (err) { status.textContent = `${name}: ${err.message}`; }
      reopened();
    };
    const open = view.status === "running" || view.status === "paused";
    controls.replaceChildren(
      open && view.status !== "paused" ? el("button", { type: "button", onclick: act("pause") }, "Pause graph") : "",
      view.status === "paused" ? el("button", { type: "button", onclick: act("resume") }, "Resume graph") : "",
      open ? el("button", { type: "button", class: "danger", onclick: act("cancel") }, "Cancel graph") : "");
  }

  function pick(taskUuid) {
    picked = taskUuid;
    refreshSoon();
  }

  async function showTask(taskUuid, row) {
    if (!row) return;
    const task = await get(`${path}/tasks/${row.task_uuid}`);
    const latest = task.versions[task.versions.length - 1];
    detail.hidden = false;
    const focused = detail.contains(document.activeElement) ? document.activeElement.name : null;
    const kept = Object.fromEntries([...detail.querySelectorAll("textarea, input")].map((f) => [f.name, f.value]));
    const input = el("textarea", { name: "new_input", rows: 5, spellcheck: "false" });
    input.value = kept.new_input ?? JSON.stringify(latest ? latest.input_data : task.definition.input_data ?? {}, null, 2);
    const assignee = el("input", { name: "new_assignee", placeholder: task.definition.assignee_id, value: kept.new_assignee ?? "" });
    const comment = el("input", { name: "comment", value: kept.comment ?? "" });
    const said = el("p", { role: "status", class: lastSaid[1] }, lastSaid[0]);
    const say = (text, cls) => { lastSaid = [text, cls]; said.textContent = text; said.className = cls; };
    const intervene = async (body) => {
      try {
        await post(`${path}/interventions`, { ...body, target_task_id: task.task_uuid, principal: who.me || undefined });
        say(interventionSaid(body, task), "line-ok");
        comment.value = "";
      } catch (err) { say(`Refused: ${err.message}`, "error"); }
      reopened();
    };
    const rollback = async () => {
      const problem = rollbackProblem(input.value, assignee.value.trim(), comment.value);
      if (problem) { say(problem, "error"); return; }
      const body = { intervention_type: "ROLLBACK_AND_MODIFY", new_input_data: JSON.parse(input.value), comment: comment.value.trim() };
      if (assignee.value.trim()) body.new_assignee_id = assignee.value.trim();
      await intervene(body);
    };
    const versions = el("tbody", {}, task.versions.map((v) => el("tr", { "data-version": v.version },
      el("td", {}, `v${v.version}${v.superseded ? " (superseded)" : ""}`), el("td", {}, v.status),
      el("td", {}, el("pre", {}, JSON.stringify(v.input_data, null, 2))),
      el("td", {}, v.error ? el("pre", {}, v.error) : outputView(v.output)))));
    detail.replaceChildren(el("h2", { id: "task-h" }, `Task ${task.task_id}`),
      el("p", { class: "muted" }, `${task.status}${task.paused ? " (paused)" : ""} · ${task.definition.assignee_id}${task.reason ? ` · ${task.reason}` : ""}`),
      el("table", {}, el("thead", {}, el("tr", {}, ["Version", "Status", "Input", "Output"].map((h) => el("th", { scope: "col" }, h)))), versions));
    if (who.may("operator")) {
      detail.append(
        el("div", { class: "filters" },
          el("button", { type: "button", onclick: () => { if (comment.value.trim()) intervene({ intervention_type: task.paused ? "RESUME" : "PAUSE", comment: comment.value.trim() }); else say("comment: say why (it is recorded in the audit)", "error"); } }, task.paused ? "Resume task" : "Pause task")),
        el("h3", {}, "Roll back with new input"),
        el("label", {}, "New input (JSON object)", input),
        el("label", {}, "New assignee (optional)", assignee),
        el("label", {}, "Comment", comment),
        el("div", { class: "filters" }, el("button", { type: "button", class: "primary", onclick: rollback }, "Roll back")),
        said);
    }
    if (focused) { const again = detail.querySelector(`[name="${focused}"]`); if (again) again.focus(); }
  }

  let following = false; // the graph's stream is followed (false once it ended)
  function listen() {
    following = true;
    follow(`${path}/events`, -1, () => refreshSoon(), (state, detailText) => {
      setConnection(connectionText("Graph", state, detailText));
      if (state === "closed" || state === "ended") following = false;
    }, controller.signal);
  }
  // After an action that may reopen an ended graph (a rollback): read it, and follow it again.
  function reopened() {
    refreshSoon();
    if (!following) listen();
  }

  refresh();
  listen();
  return () => controller.abort();
}
