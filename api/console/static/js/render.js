// Turning the API's data into DOM: small Markdown (answers), ANSI colours (terminal output), and
// one conversation line per stream chunk (its event in the API's words). Everything shown is text
// set through textContent or escaped first: nothing an agent or a tool says can become markup.

import { isFamily } from "./events.js";

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// Characters that print nothing: controls (a newline and a tab aside), format characters (direction
// overrides, zero-width spaces, the byte-order mark), surrogates, private use, unassigned, line and
// paragraph separators, and the other default-ignorable ones (Hangul fillers, variation selectors).
const UNSEEN = /(?![\n\t])[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0\u180b-\u180f\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/gu;
const hex = (code, digits) => code.toString(16).padStart(digits, "0");

// `text` with every character a person cannot see written as an escape, `\x9b`, `\u202e`, as the
// Python renderers write it (core/visible.py): a command or an argument on a card reads as it will
// run. `json`: as JSON escapes (`\u009b`, surrogate pairs), for JSON a person edits and sends back.
export function visible(text, json = false) {
  return String(text).replace(UNSEEN, (char) => {
    if (json) return [...Array(char.length).keys()].map((i) => `\\u${hex(char.charCodeAt(i), 4)}`).join("");
    const code = char.codePointAt(0);
    return code < 0x100 ? `\\x${hex(code, 2)}` : code < 0x10000 ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`;
  });
}

const escapeHtml = (text) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

function inline(text) {
  return escapeHtml(text)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
}

// Markdown as agents write it: fenced code, headings, lists, paragraphs with their line breaks.
export function markdown(text) {
  const out = [];
  let fence = null, list = null, para = [];
  const flush = () => {
    if (para.length) out.push(`<p>${para.map(inline).join("<br>")}</p>`);
    para = [];
    if (list) { out.push(`<ul>${list.map((item) => `<li>${inline(item)}</li>`).join("")}</ul>`); list = null; }
  };
  for (const line of String(text).split("\n")) {
    if (fence !== null) {
      if (line.trim().startsWith("```")) { out.push(`<pre><code>${escapeHtml(fence.join("\n"))}</code></pre>`); fence = null; }
      else fence.push(line);
    } else if (line.trim().startsWith("```")) { flush(); fence = []; }
    else if (/^#{1,6} /.test(line)) { flush(); out.push(`<p><strong>${inline(line.replace(/^#+ /, ""))}</strong></p>`); }
    else if (/^\s*[-*] /.test(line)) { if (para.length) { const keep = list; list = null; flush(); list = keep; } (list ||= []).push(line.replace(/^\s*[-*] /, "")); }
    else if (!line.trim()) flush();
    else { if (list) flush(); para.push(line); }
  }
  if (fence !== null) out.push(`<pre><code>${escapeHtml(fence.join("\n"))}</code></pre>`);
  flush();
  const node = el("div", { class: "answer" });
  node.innerHTML = out.join("");
  return node;
}

// Terminal output with its colours: SGR codes become classes, every other escape is dropped.
export function ansi(text) {
  const node = document.createDocumentFragment();
  let classes = [];
  const parts = String(text).split(/(\x1b\[[0-9;?]*[A-Za-z])/);
  for (const part of parts) {
    const sgr = /^\x1b\[([0-9;]*)m$/.exec(part);
    if (sgr) {
      const codes = sgr[1] ? sgr[1].split(";").map(Number) : [0];
      for (const code of codes) {
        if (code === 0) classes = [];
        else if (code === 1 || (code >= 30 && code <= 37) || (code >= 90 && code <= 97)) classes.push(`ansi-${code}`);
      }
    } else if (part && !part.startsWith("\x1b")) {
      const clean = part.replace(/\r(?!\n)/g, "").replace(/[\x00-\x08\x0b-\x1f\x7f]/g, "");
      node.append(classes.length ? el("span", { class: classes.join(" ") }, clean) : document.createTextNode(clean));
    }
  }
  return node;
}

// An output (a task's, a turn's answer) as a person reads it: text as text, not as a JSON string
// with its quotes and `\n` escapes; an object as its fields, each value shown the same way; any
// other value as indented JSON.
export function outputView(value) {
  if (typeof value === "string") return el("pre", { class: "output" }, value);
  if (value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length) {
    return el("dl", { class: "output" }, Object.entries(value).flatMap(([name, field]) => [
      el("dt", {}, name),
      el("dd", {}, el("pre", {}, typeof field === "string" ? field : JSON.stringify(field, null, 2))),
    ]));
  }
  return el("pre", { class: "output" }, JSON.stringify(value, null, 2));
}

// A listed session's or graph's status in words that wrap on a phone: `waiting approval (closed)`.
export const statusWords = (item) => `${item.status.replaceAll("_", " ")}${item.closed ? " (closed)" : ""}`;

// When something started, short enough for a list on a phone: `11/29/26, 10:08 AM`.
export const shortTime = (iso) => new Date(iso).toLocaleString([], { dateStyle: "short", timeStyle: "short" });

// The class of a line of each tone: the API sends every event with its sentence (`text`) and tone,
// worded once for every client (core/wording).
const TONES = { ok: "line-ok", bad: "line-bad", note: "line-note", call: "line-call", graph: "line-note", thinking: "thinking" };

// One chunk as a conversation line, or null for chunks shown elsewhere (requests: the cards; a
// running command's output: its block).
export function chunkLine(chunk) {
  const event = chunk.content;
  if (isFamily(chunk, "request")) return null;
  switch (event.event) {
    case "turn_started":
      return event.from ? el("li", {}, el("span", { class: "from-user" }, `${event.from}: `), String(event.message ?? "")) : null;
    case "turn_answered":
      return el("li", {}, typeof event.answer === "string" ? markdown(event.answer) : outputView(event.answer));
    case "turn_completed":
      return null;
    case "command_ended":
      return el("li", { class: "muted" }, chunk.text);
    default:
      if (isFamily(chunk, "output")) return null;
      return el("li", { class: TONES[chunk.tone] }, chunk.text);
  }
}
