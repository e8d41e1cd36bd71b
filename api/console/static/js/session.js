// One session: its conversation streamed live (answers, tool calls and results, a running
// command's output with its colours, thinking, decisions), a card per pending request, a message
// box, its grants (revocable) and who decided what. Followed by SSE from the start of the stream,
// resumed after a drop, until the session ends (the page says so; a message that starts it again
// follows its new stream); the cards, grants and audit are read again whenever a chunk may change
// them. A card that a message sent from here opens is scrolled into view.

import { ruleScope } from "./always.js";
import { connectionText, del, follow, get, post, who } from "./api.js";
import { focusLinked, showCards } from "./cards.js";
import { isFamily } from "./events.js";
import { ansi, chunkLine, el, visible } from "./render.js";

const REFRESHING = new Set(["tool_approval_request", "user_input_request", "progress", "tool_use", "complete", "cancelled", "error"]);
// A session in one of these runs no more; a cancelled one takes no more messages either.
const ENDED = new Set(["cancelled", "completed", "failed", "terminated", "timed_out"]);

export function sessionPage(main, key, params, setConnection) {
  const path = `/sessions/${encodeURIComponent(key)}`;
  const controller = new AbortController();
  const status = el("p", { class: "muted", id: "session-status" });
  const ending = el("p", { class: "line-note", id: "session-ended", role: "status", hidden: true });
  const cards = el("section", { class: "cards", "aria-label": "Requests waiting for a decision" });
  const conversation = el("ol", { class: "conversation", "aria-label": "Conversation", "aria-live": "polite" });
  const input = el("textarea", { id: "message", rows: 2, name: "message" });
  const sendStatus = el("span", { class: "muted", role: "status" });
  const form = el("form", { class: "send", id: "send", "aria-label": "Send a message" },
    el("label", { for: "message", class: "muted" }, "Message"), input,
    el("button", { class: "primary", type: "submit" }, "Send"), sendStatus);
  const grants = el("ul");
  const audit = el("ul");
  const notify = el("button", { type: "button", onclick: askToNotify }, "Notify me when something waits");
  main.replaceChildren(
    el("h1", {}, `Session ${key}`), status, ending,
    el("div", { class: "layout" },
      el("div", {}, cards, conversation, who.may("operator") ? form : el("p", { class: "muted" }, "Your key may read this session; sending needs the operator role.")),
      el("aside", {},
        el("section", { "aria-labelledby": "grants-h" }, el("h2", { id: "grants-h" }, "Grants"), grants),
        el("section", { "aria-labelledby": "audit-h" }, el("h2", { id: "audit-h" }, "Who decided what"), audit),
        "Notification" in window && Notification.permission !== "granted" ? notify : "")));

  let terminal = null; // the <pre> of the command whose output is arriving
  let following = false; // the stream is followed (false once it ended)
  let sent = false; // a message was sent from here: the card it opens is brought into view
  const seen = new Set(); // requests already announced (a browser notification once each)
  let timer = null;
  const refreshSoon = () => { clearTimeout(timer); timer = setTimeout(refresh, 150); };

  async function refresh() {
    try {
      const live = await get(path);
      status.textContent = `${live.status} · ${live.agent_id} · from ${live.channel}` + (live.pending_interactions.length ? ` · ${live.pending_interactions.length} waiting` : "") + (live.reason ? ` · ${live.reason}` : "");
      showEnded(live);
      const canApprove = who.may("approver");
      showCards(cards, path, live.pending_interactions, { canApprove, onDecided: refreshSoon, rules: ruleScope(live) });
      const fresh = live.pending_interactions.filter((request) => !seen.has(request.interaction_id));
      for (const request of live.pending_interactions) announce(request);
      if (sent && fresh.length) {
        sent = false;
        cards.querySelector(`[data-interaction="${CSS.escape(fresh[0].interaction_id)}"]`)?.scrollIntoView({ block: "center" });
      }
      focusLinked(cards, params);
      const [grantList, trail] = await Promise.all([get(`${path}/grants`), get(`${path}/audit`)]);
      grants.replaceChildren(...(grantList.grants.length ? grantList.grants.map(grantItem) : [el("li", { class: "muted" }, "none")]));
      audit.replaceChildren(...trail.entries.slice(-30).map((e) => el("li", {},
        `${new Date(e.at).toLocaleTimeString()} ${e.kind} by ${e.principal} (${e.channel})${e.interaction_id ? ` ${e.interaction_id}` : ""}${e.comment ? `: ${e.comment}` : ""}`)));
    } catch (err) {
      status.textContent = `Could not read the session: ${err.message}`;
      status.className = "error";
    }
  }

  // An ended session says so where the message box was: a cancelled one takes no more messages;
  // one that ended otherwise is started again, as a new conversation, by the next message.
  function showEnded(live) {
    const over = ENDED.has(live.status) && !following;
    ending.hidden = !over;
    form.hidden = live.status === "cancelled";
    if (!over) return;
    ending.textContent = live.status === "cancelled"
      ? "This session was cancelled: it takes no more messages."
      : `This session has ended (${live.status.replace("_", " ")}). A message starts it again as a new conversation.`;
  }

  function grantItem(grant) {
    const item = el("li", {}, `${grant.grant_id}: ${grant.tool_id} ${visible(grant.head ?? grant.summary)} by ${grant.granted_by}`);
    if (grant.revoked_by) item.append(el("span", { class: "muted" }, ` (revoked by ${grant.revoked_by})`));
    else if (who.may("approver")) {
      item.append(" ", el("button", { type: "button", class: "danger", "aria-label": `Revoke ${grant.grant_id}`, onclick: async (e) => {
        e.target.disabled = true;
        try { await del(`${path}/grants/${encodeURIComponent(grant.grant_id)}${who.me ? `?principal=${encodeURIComponent(who.me)}` : ""}`); }
        catch (err) { item.append(el("span", { class: "error" }, ` ${err.message}`)); }
        refreshSoon();
      } }, "Revoke"));
    }
    return item;
  }

  function announce(request) {
    if (seen.has(request.interaction_id)) return;
    seen.add(request.interaction_id);
    if (!("Notification" in window) || Notification.permission !== "granted" || !document.hidden) return;
    if (request.approvers.length && !request.approvers.includes(who.me)) return;
    new Notification(`Synapse: ${key} waits for you`, { body: `${request.interaction_id}: ${request.interaction_type}`, tag: request.interaction_id });
  }

  function onChunk(chunk) {
    const event = chunk.content;
    if (isFamily(chunk, "output") && event.event !== "command_ended") {
      if (!terminal) {
        terminal = el("pre", { class: "terminal", role: "log", "aria-label": "Command output" });
        conversation.append(el("li", {}, terminal));
      }
      terminal.append(ansi(event.styled ?? event.text)); // `styled`: the same text with its colours
      return;
    }
    terminal = null;
    if (event.event === "turn_completed") sent = false; // the turn ended without asking anything
    const line = chunkLine(chunk);
    if (line) conversation.append(line);
    if (REFRESHING.has(chunk.chunk_type) || chunk.is_final) refreshSoon();
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const content = input.value.trim();
    if (!content) return;
    sendStatus.textContent = "sending…";
    try {
      await post(`${path}/messages`, { content, principal: who.me || undefined });
      input.value = "";
      sendStatus.textContent = "";
      sent = true;
      if (!following) listen(); // the session had ended: this message started it again
    } catch (err) {
      sendStatus.textContent = `Not sent: ${err.message}`;
    }
  });

  // Follow the session's stream from its start (a run started again has a stream of its own).
  function listen() {
    following = true;
    follow(`${path}/events`, -1, onChunk, (state, detail) => {
      setConnection(connectionText("Session", state, detail));
      if (state === "closed" || state === "ended") following = false;
      if (state !== "live") refreshSoon();
    }, controller.signal);
  }

  refresh();
  listen();
  return () => controller.abort();
}

function askToNotify(event) {
  Notification.requestPermission().then((answer) => { if (answer === "granted") event.target.remove(); });
}
