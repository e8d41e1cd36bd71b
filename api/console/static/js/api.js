// The console's client of the Synapse API: the caller's key kept for this browser session only,
// JSON calls whose errors carry the API's `detail`, and SSE streams read with fetch (EventSource
// cannot send the key) and resumed after a drop with `?after=` the last id seen.

const KEY = "synapse.key";
const PRINCIPAL = "synapse.principal";
const ROLES = ["viewer", "operator", "approver", "admin"];

// Who the caller is: the key and the name typed in, and what `GET /me` says of the key (`role`;
// `me` is the key's principal when keys are on, else the name typed in).
export const who = {
  role: "admin",
  keyPrincipal: null,
  get key() { return sessionStorage.getItem(KEY) || ""; },
  get principal() { return sessionStorage.getItem(PRINCIPAL) || ""; },
  get me() { return this.keyPrincipal || this.principal; },
  may(role) { return ROLES.indexOf(this.role) >= ROLES.indexOf(role); },
  set(key, principal) {
    sessionStorage.setItem(KEY, key);
    sessionStorage.setItem(PRINCIPAL, principal);
  },
};

export class ApiError extends Error {
  constructor(status, detail) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.status = status;
  }
}

function headers(extra = {}) {
  const found = { ...extra };
  if (who.key) found.Authorization = `Bearer ${who.key}`;
  return found;
}

export async function call(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) throw new ApiError(response.status, data && data.detail !== undefined ? data.detail : text);
  return data;
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body);
export const del = (path) => call("DELETE", path);

// Follow `path` (an SSE endpoint) from after `after`, calling onChunk(chunk) for each event and
// onState("live" | "reconnecting" | "closed" | "ended", detail) as the connection changes. Stops
// when `signal` aborts, when the stream is complete ("closed": the server's last `end` event, sent
// once the session or graph has ended, or a 204 when nothing is missing), or when the server
// refuses it ("ended": 404, 401, 403).
export async function follow(path, after, onChunk, onState, signal) {
  let last = after;
  let wait = 500;
  while (!signal.aborted) {
    try {
      const response = await fetch(`${path}?after=${last}`, { headers: headers(), signal });
      if (response.status === 204) { // complete, and nothing is missing: the session or graph ended
        onState("closed");
        return;
      }
      if (response.status === 404 || response.status === 401 || response.status === 403) {
        onState("ended", (await response.json()).detail);
        return;
      }
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      onState("live");
      wait = 500;
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = parseFrame(frame);
          if (!event) continue;
          if (event.type === "end") {
            onState("closed", event.data.detail);
            return;
          }
          if (event.type === "reconnect" || event.type === "error") {
            last = event.data.last_event_id ?? last;
            continue;
          }
          last = event.id ?? last;
          onChunk(event.data);
        }
      }
    } catch (err) {
      if (signal.aborted) return;
    }
    if (signal.aborted) return;
    onState("reconnecting");
    await new Promise((resolve) => setTimeout(resolve, wait));
    wait = Math.min(wait * 2, 8000);
  }
}

// What the header says of a page's stream: Live, Reconnecting…, or that the session or graph ended.
export function connectionText(what, state, detail) {
  if (state === "live") return "Live";
  if (state === "reconnecting") return "Reconnecting…";
  if (state === "closed") return `${what} ended`;
  return `Stream ended${detail ? `: ${detail}` : ""}`;
}

function parseFrame(frame) {
  let id = null, type = "message", data = "";
  for (const line of frame.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") id = Number(value);
    else if (field === "event") type = value;
    else if (field === "data") data += (data ? "\n" : "") + value;
  }
  if (!data) return null;
  return { id, type, data: JSON.parse(data) };
}
