// "Allow always" on a session's tool approval: the rule offered for the call (`POST /rule-offers`,
// the same offer the REPL's `a` makes), its one line edited by the person, and where it applies,
// said in words before anything is saved. By default the narrowest place that exists: the
// session's project, else the person the session is for, else this session only, which is no rule
// (the call is approved with a grant). "This session only" can always be picked instead; "every
// session" (a global rule) only by an admin who picks it. The rule is saved (`POST /rules`, the
// name typed in as its maker when keys are off), then the call itself approved once; the rule
// decides every later call it covers, in any channel.

import { post, who } from "./api.js";
import { el } from "./render.js";

const SESSION_ONLY = { scope: "session", text: "in this session only" };
const EVERY_SESSION = { scope: "global", text: "in every session" };

// Where a rule made from this session applies unless the person picks otherwise: the narrowest
// place that exists.
export function ruleScope(live) {
  if (live.project) return { scope: "project", project: live.project, text: `in project ${live.project}` };
  if (live.user) return { scope: "user", user: live.user, text: `in ${live.user}'s sessions` };
  return SESSION_ONLY;
}

// The places a person may pick: the narrowest first, this session only, every session for admins.
function choices(where) {
  const found = [where];
  if (where.scope !== SESSION_ONLY.scope) found.push(SESSION_ONLY);
  if (who.may("admin")) found.push(EVERY_SESSION);
  return found;
}

// The "Allow always" button and the box it opens; `decide(body, button)` sends the approval;
// `grants`: the grants the request offers (`ask.grants`), for "this session only".
export function allowAlways(tool, args, where, { status, decide, grants = [] }) {
  const places = choices(where);
  const line = el("input", { type: "text", name: "rule-line", spellcheck: "false", autocomplete: "off",
    oninput: () => { if (status.className === "error") { status.textContent = ""; status.className = "muted"; } } });
  const label = el("span", {}, "Rule");
  const lineBox = el("label", {}, label, line);
  const pick = el("select", { name: "rule-where" },
    ...places.map((place, i) => el("option", { value: String(i) }, place.text.replace(/^in /, ""))));
  const note = el("p", { class: "muted", "data-role": "rule-wording" });
  const fail = (message) => { status.textContent = message; status.className = "error"; };
  let offer = null;
  const chosen = () => places[Number(pick.value) || 0];
  const save = el("button", { type: "button", class: "primary", onclick: async (e) => {
    const button = e.target;
    const place = chosen();
    if (place.scope === SESSION_ONLY.scope) {
      const grant = grants.includes("session_prefix") ? "session_prefix" : "session";
      await decide({ approved: true, response_data: { grant } }, button);
      return;
    }
    button.disabled = true;
    try {
      // The line is checked first; the rule is saved only once this call's approval was taken (a
      // refused approval saves nothing).
      const edited = await post("/rule-offers", { tool, arguments: args, line: line.value });
      if (!(await decide({ approved: true }, button))) { button.disabled = false; return; }
      const saved = await post("/rules", {
        tool, match: edited.match, decision: "allow", scope: place.scope,
        project: place.project, user: place.user, created_by: who.me || undefined,
        reason: `allowed always by ${who.me || "someone"} in the console`,
      });
      status.className = "muted";
      status.textContent = `Approved; saved ${saved.rule_id}.`;
    } catch (err) {
      fail(`The rule was not saved: ${err.message}`);
      button.disabled = false;
      line.focus();
    }
  } }, "Save rule and approve");
  const show = () => {
    const place = chosen();
    const session = place.scope === SESSION_ONLY.scope;
    lineBox.style.display = session ? "none" : ""; // not `hidden`: the console's labels set `display`
    save.textContent = session ? "Approve in this session only" : "Save rule and approve";
    if (offer) note.textContent = `Allow ${tool} calls with this ${offer.label} ${place.text}, without asking.`;
  };
  pick.addEventListener("change", show);
  const box = el("div", { hidden: true, class: "always" }, lineBox, el("label", {}, "Where", pick), note, save);
  const open = el("button", { type: "button", "aria-expanded": "false", onclick: async () => {
    if (!box.hidden) { box.hidden = true; open.setAttribute("aria-expanded", "false"); return; }
    try {
      offer = await post("/rule-offers", { tool, arguments: args });
      label.textContent = `${offer.label[0].toUpperCase()}${offer.label.slice(1)}`;
      line.value = offer.line;
      show();
      box.hidden = false;
      open.setAttribute("aria-expanded", "true");
      (chosen().scope === SESSION_ONLY.scope ? pick : line).focus();
    } catch (err) {
      fail(`No rule to offer: ${err.message}`);
    }
  } }, "Allow always…");
  return [open, box];
}
