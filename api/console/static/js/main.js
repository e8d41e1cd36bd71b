// The console's entry: the "who you are" form (name and key, kept in sessionStorage), what the key
// may do (`GET /me`), and the pages by location hash: #/sessions, #/sessions/<key>, #/graphs,
// #/graphs/<id>.

import { get, who } from "./api.js";
import { graphPage } from "./graph.js";
import { graphsPage } from "./graphs.js";
import { el } from "./render.js";
import { sessionPage } from "./session.js";
import { sessionsPage } from "./sessions.js";

const main = document.getElementById("main");
const connection = document.getElementById("connection"); // the live stream: Live, Reconnecting…
const whoami = document.getElementById("whoami"); // the key's principal and role
let leave = null;

const keyField = document.getElementById("api-key-field"); // shown only when the API asks for keys

async function learnWho() {
  try {
    const me = await get("/me");
    who.role = me.role;
    who.keyPrincipal = me.principal;
    const projects = me.projects ? ` · ${me.projects.join(", ")}` : ""; // a key scoped to projects
    whoami.textContent = me.keys_required ? `${me.principal} (${me.role}${projects})` : "";
    keyField.hidden = !me.keys_required && !who.key;
  } catch (err) {
    who.role = "viewer";
    who.keyPrincipal = null;
    whoami.textContent = `Key not accepted: ${err.message}`;
    keyField.hidden = false;
  }
}

async function route() {
  if (leave) { leave(); leave = null; }
  connection.textContent = ""; // what it said was of the page left
  const [path, query] = (location.hash.slice(1) || "/sessions").split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean);
  if (parts[0] === "sessions" && parts[1]) {
    leave = sessionPage(main, decodeURIComponent(parts[1]), params, (text) => { connection.textContent = text; });
  } else if (parts[0] === "graphs" && parts[1]) {
    leave = graphPage(main, decodeURIComponent(parts[1]), params, (text) => { connection.textContent = text; });
  } else if (parts[0] === "graphs") {
    await graphsPage(main);
  } else if (parts[0] === "sessions" || !parts.length) {
    await sessionsPage(main, params);
  } else {
    main.replaceChildren(el("h1", {}, "Not found"), el("p", {}, el("a", { href: "#/sessions" }, "Sessions")));
  }
}

document.getElementById("principal").value = who.principal;
document.getElementById("api-key").value = who.key;
document.getElementById("who").addEventListener("submit", async (event) => {
  event.preventDefault();
  who.set(document.getElementById("api-key").value.trim(), document.getElementById("principal").value.trim());
  await learnWho();
  route();
});
// "Skip to content" moves the focus; followed as a link, its `#main` would be taken for a page.
document.querySelector(".skip").addEventListener("click", (event) => { event.preventDefault(); main.focus(); });
window.addEventListener("hashchange", route);
learnWho().then(route);
