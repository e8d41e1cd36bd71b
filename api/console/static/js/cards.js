// An approval card for one pending request: what is asked (the tool and its arguments, a question,
// a graph task's gate), the two-person progress and the escalation deadline, and the decisions a
// person may take: approve once, allow for this session, allow always (a rule: `always.js`), edit
// the arguments, deny with a reason, or answer. Viewers see the card without its buttons. What the
// call would do (summary, arguments, folder, reason) shows its non-printing characters escaped.

import { allowAlways } from "./always.js";
import { post, who } from "./api.js";
import { el, visible } from "./render.js";

const time = (iso) => (iso ? new Date(iso).toLocaleTimeString() : "");

// What the request asks (its typed `ask`: `kind` tool_approval, question or gate) on one line, and
// the data shown under it: a call's arguments, a gate's input.
function asked(ask) {
  if (ask.kind === "question") return [`Question: ${ask.question}`, null];
  if (ask.kind === "gate") return [`Graph task ${ask.task_id} waits: ${ask.prompt}`, ask.input_data];
  return [`${ask.tool} wants approval`, ask.arguments];
}

// `owner` is where decisions go: `/sessions/<key>` or `/graphs/<id>`; `rules`: where "allow
// always" applies by default (`ruleScope`: a project, a person, or this session only), absent where
// none is offered.
export function card(owner, request, { canApprove, onDecided, rules }) {
  const id = request.interaction_id;
  const ask = request.ask;
  const [title, shown] = asked(ask);
  const headingId = `card-${id}`;
  const status = el("p", { class: "muted", role: "status", "aria-live": "polite" });
  const node = el("article", { class: "card", "aria-labelledby": headingId, "data-interaction": id },
    el("h3", { id: headingId }, `${id} · ${title}`));
  if (ask.summary) node.append(el("p", {}, visible(ask.summary)));
  if (shown && Object.keys(shown).length) node.append(el("pre", {}, visible(JSON.stringify(shown, null, 2))));
  if (ask.context && ask.context.cwd) node.append(el("p", { class: "muted" }, visible(`in ${ask.context.cwd}`)));
  if (ask.reason) node.append(el("p", { class: "muted" }, visible(`why it asks: ${ask.reason}`)));
  if (request.approvals_required > 1) {
    const got = request.approved_by.length;
    node.append(el("p", { class: "line-note" }, `${got}/${request.approvals_required} approvals${got ? ` (${request.approved_by.join(", ")})` : ""}`));
  }
  if (request.escalate_at && !request.escalated) node.append(el("p", { class: "muted" }, `escalates to ${request.escalate_to.join(", ")} at ${time(request.escalate_at)}`));
  if (request.expires_at) node.append(el("p", { class: "muted" }, `denied by timeout at ${time(request.expires_at)} unless answered`));
  if (request.approvers && request.approvers.length) node.append(el("p", { class: "muted" }, `may answer: ${request.approvers.join(", ")}`));
  if (!canApprove) {
    node.append(el("p", { class: "muted" }, "Your key may view this request; deciding needs the approver role."));
    return node;
  }

  const decide = async (body, button) => {
    const buttons = node.querySelectorAll("button");
    buttons.forEach((b) => { b.disabled = true; });
    status.textContent = `${button.textContent}…`;
    try {
      await post(`${owner}/interactions/${encodeURIComponent(id)}`,
        { ...body, principal: who.me || undefined, channel: "console" });
      status.textContent = "Sent.";
      onDecided();
      return true;
    } catch (err) {
      status.textContent = `Not sent: ${err.message}`;
      status.className = "error";
      buttons.forEach((b) => { b.disabled = false; });
      return false;
    }
  };

  if (request.interaction_type === "user_input") {
    const answer = el("textarea", { rows: 2, name: "answer" });
    node.append(el("label", {}, "Your answer", answer));
    const actions = el("div", { class: "actions" });
    actions.append(el("button", { class: "primary", type: "button", onclick: (e) => decide({ approved: true, response_data: { text: answer.value } }, e.target) }, "Answer"));
    actions.append(el("button", { class: "danger", type: "button", onclick: (e) => decide({ approved: false, user_message: "declined" }, e.target) }, "Decline"));
    node.append(actions, status);
    return node;
  }

  const reason = el("textarea", { rows: 2, name: "reason" });
  const actions = el("div", { class: "actions" });
  actions.append(el("button", { class: "primary", type: "button", onclick: (e) => decide({ approved: true }, e.target) }, "Approve once"));
  const grants = ask.grants || [];
  if (grants.length) {
    const grant = grants.includes("session_prefix") ? "session_prefix" : "session";
    actions.append(el("button", { type: "button", onclick: (e) => decide({ approved: true, response_data: { grant } }, e.target) }, "Allow for this session"));
  }
  if (request.interaction_type === "tool_approval") {
    // What is wrong with the edited arguments shows at the box, not below the card's other buttons.
    const problem = el("p", { class: "error", role: "alert", id: `args-problem-${id}` });
    const editor = el("textarea", { rows: 6, name: "arguments", spellcheck: "false", "aria-describedby": problem.id,
      oninput: () => { problem.textContent = ""; editor.removeAttribute("aria-invalid"); } });
    editor.value = visible(JSON.stringify(shown, null, 2), true);
    const editBox = el("div", { hidden: true },
      el("label", {}, "Arguments (JSON)", editor), problem,
      el("button", { type: "button", onclick: (e) => {
        let args;
        try { args = JSON.parse(editor.value); } catch (err) {
          problem.textContent = `The arguments are not JSON: ${err.message}`;
          editor.setAttribute("aria-invalid", "true");
          editor.focus();
          return;
        }
        decide({ approved: true, response_data: { arguments: args } }, e.target);
      } }, "Approve with these arguments"));
    actions.append(el("button", { type: "button", "aria-expanded": "false", onclick: (e) => {
      editBox.hidden = !editBox.hidden;
      e.target.setAttribute("aria-expanded", String(!editBox.hidden));
      if (!editBox.hidden) editor.focus();
    } }, "Edit arguments"));
    const boxes = [editBox];
    if (rules) {
      const [always, ruleBox] = allowAlways(ask.tool, shown, rules, { status, decide, grants });
      actions.append(always);
      boxes.push(ruleBox);
    }
    node.append(actions, ...boxes);
  } else node.append(actions);
  // A reason is optional, as on every other door (HTTP, chat, the REPL): the agent is told it when given.
  node.append(el("label", {}, "Reason (optional, sent to the agent when you deny)", reason));
  node.append(el("div", { class: "actions" }, el("button", { class: "danger", type: "button", onclick: (e) =>
    decide({ approved: false, user_message: reason.value.trim() || undefined }, e.target) }, "Deny")));
  node.append(status);
  return node;
}

// Show `requests` in `container`, one card each, keeping the cards already there for requests that
// have not changed: what a person is typing (a reason, edited arguments) and where their focus is
// survive the refreshes every event of the stream brings.
export function showCards(container, owner, requests, options) {
  const shown = new Map([...container.children].map((node) => [node.dataset.interaction, node]));
  const cards = requests.map((request) => {
    const state = `${request.approved_by.length}/${request.approvals_required}/${request.escalated}/${options.canApprove}/${options.rules?.text}`;
    const kept = shown.get(request.interaction_id);
    if (kept && kept.dataset.state === state) return kept;
    const made = card(owner, request, options);
    made.dataset.state = state;
    return made;
  });
  const same = cards.length === container.children.length && cards.every((node, i) => container.children[i] === node);
  if (!same) container.replaceChildren(...cards);
}

// A deep link's request (`?interaction=<id>`, from a notification or a chat card): once its card is
// shown, scrolled to and focused (its first button), once.
export function focusLinked(container, params) {
  const wanted = params.get("interaction");
  if (!wanted) return;
  const target = container.querySelector(`[data-interaction="${CSS.escape(wanted)}"]`);
  if (target) { target.scrollIntoView({ block: "center" }); (target.querySelector("button") || target).focus(); params.delete("interaction"); }
}
