// "Allow always" on a session's tool approval: the rule offered for the call (`POST /rule-offers`,
// the same offer the REPL's `a` makes), its one line edited by the person, saved (`POST /rules`) in
// the session's project, else for the person the session is for, else, by an admin, everywhere;
// then the call itself approved once. The rule decides every later call it covers, in any channel.

import { post, who } from "./api.js";
import { el } from "./render.js";

// Where a rule made from this session applies, or null when the caller may make none that would.
export function ruleScope(live) {
  if (live.project) return { scope: "project", project: live.project, text: `in project ${live.project}` };
  if (live.user) return { scope: "user", user: live.user, text: `in ${live.user}'s sessions` };
  if (who.may("admin")) return { scope: "global", text: "in every session" };
  return null;
}

// The "Allow always" button and the box it opens; `decide(body, button)` sends the approval.
export function allowAlways(tool, args, where, { status, decide }) {
  const line = el("input", { type: "text", name: "rule-line", spellcheck: "false", autocomplete: "off",
    oninput: () => { if (status.className === "error") { status.textContent = ""; status.className = "muted"; } } });
  const label = el("span", {}, "Rule");
  const note = el("p", { class: "muted" });
  const fail = (message) => { status.textContent = message; status.className = "error"; };
  const save = el("button", { type: "button", class: "primary", onclick: async (e) => {
    const button = e.target;
    button.disabled = true;
    try {
      const edited = await post("/rule-offers", { tool, arguments: args, line: line.value });
      const saved = await post("/rules", {
        tool, match: edited.match, decision: "allow", scope: where.scope,
        project: where.project, user: where.user,
        reason: `allowed always by ${who.me || "someone"} in the console`,
      });
      status.className = "muted";
      status.textContent = `Saved ${saved.rule_id}.`;
      await decide({ approved: true }, button);
    } catch (err) {
      fail(`The rule was not saved: ${err.message}`);
      button.disabled = false;
      line.focus();
    }
  } }, "Save rule and approve");
  const box = el("div", { hidden: true, class: "always" }, el("label", {}, label, line), note, save);
  const open = el("button", { type: "button", "aria-expanded": "false", onclick: async () => {
    if (!box.hidden) { box.hidden = true; open.setAttribute("aria-expanded", "false"); return; }
    try {
      const offer = await post("/rule-offers", { tool, arguments: args });
      label.textContent = `${offer.label[0].toUpperCase()}${offer.label.slice(1)}`;
      line.value = offer.line;
      note.textContent = `Allow ${tool} calls with this ${offer.label} ${where.text}, without asking.`;
      box.hidden = false;
      open.setAttribute("aria-expanded", "true");
      line.focus();
    } catch (err) {
      fail(`No rule to offer: ${err.message}`);
    }
  } }, "Allow always…");
  return [open, box];
}
