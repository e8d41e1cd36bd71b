// A task graph drawn as SVG: tasks in columns by depth (left to right; top to bottom on a phone,
// so it fits the screen's width), edges as curves with arrows, each task coloured and labelled by
// its status. An edge that skips over a depth (`count → report` beside `count → sum → report`)
// runs in a lane of its own outside the rows, never behind the tasks between. The task table
// beside it is the accessible form; the drawing is summarised by its label.

import { el } from "./render.js";

const SVG = "http://www.w3.org/2000/svg";
const W = 170, H = 48, PAD = 10, LANE = 16;
const GAPS = { across: [60, 18], down: [36, 16] }; // between depths, between tasks of one depth
export const STATUS_COLOURS = {
  pending: ["#eef1f4", "#545d68"], ready: ["#ddeaff", "#0a58ca"], running: ["#ddeaff", "#0a58ca"],
  waiting: ["#fff1cc", "#7a4d00"], completed: ["#dcf5e3", "#146c2e"], failed: ["#fde2e0", "#b42318"],
  skipped: ["#f6f8fa", "#6e7781"], cancelled: ["#e9ecef", "#3d444d"],
};

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

// Depth of each task: the longest path to it from a task nothing leads to.
export function depths(tasks, edges) {
  const into = new Map(tasks.map((t) => [t.task_uuid, []]));
  for (const e of edges) if (into.has(e.target) && into.has(e.source)) into.get(e.target).push(e.source);
  const depth = new Map();
  const visit = (id, path) => {
    if (depth.has(id)) return depth.get(id);
    if (path.has(id)) return 0; // a cycle never happens in a graph's edges; stay finite if it did
    path.add(id);
    const d = Math.max(-1, ...into.get(id).map((s) => visit(s, path))) + 1;
    path.delete(id);
    depth.set(id, d);
    return d;
  };
  tasks.forEach((t) => visit(t.task_uuid, new Set()));
  return depth;
}

// `down`: depths from top to bottom (a phone), else from left to right. Positions are worked out
// along the depth axis (`a`) and across it (`b`), then turned into x and y.
export function diagram(view, onPick, down = false) {
  const depth = depths(view.tasks, view.edges);
  const columns = [];
  for (const t of view.tasks) (columns[depth.get(t.task_uuid)] ||= []).push(t);
  const [A, B] = down ? [H, W] : [W, H]; // a task's size along and across the depths
  const [gapA, gapB] = down ? GAPS.down : GAPS.across;
  const xy = (a, b) => (down ? `${b} ${a}` : `${a} ${b}`);
  const skipping = view.edges.filter((e) => depth.get(e.target) - depth.get(e.source) > 1);
  const lanes = skipping.length * LANE; // room outside the rows for edges that skip a depth
  const at = new Map();
  columns.forEach((column, i) => column.forEach((t, j) => at.set(t.task_uuid, [PAD + i * (A + gapA), PAD + lanes + j * (B + gapB)])));
  const length = PAD * 2 + columns.length * (A + gapA) - gapA;
  const breadth = PAD * 2 + lanes + Math.max(1, ...columns.map((c) => c.length)) * (B + gapB) - gapB;
  const [width, height] = down ? [breadth, length] : [length, breadth];
  const counts = Object.entries(view.counts).map(([s, n]) => `${n} ${s}`).join(", ");
  const drawing = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": `Diagram of ${view.tasks.length} tasks: ${counts}` });
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#545d68" }));
  defs.append(marker);
  drawing.append(defs);
  for (const e of view.edges) {
    const from = at.get(e.source), to = at.get(e.target);
    if (!from || !to) continue;
    const [a1, b1] = [from[0] + A, from[1] + B / 2], [a2, b2] = [to[0], to[1] + B / 2];
    let d;
    const lane = skipping.indexOf(e);
    if (lane >= 0) { // out to its lane, along it past the depths between, back in to the target
      const b = PAD + lane * LANE + LANE / 2, bend = gapA / 4;
      d = `M ${xy(a1, b1)} C ${xy(a1 + bend, b1)}, ${xy(a1 + bend, b)}, ${xy(a1 + 2 * bend, b)} L ${xy(a2 - 2 * bend, b)} C ${xy(a2 - bend, b)}, ${xy(a2 - bend, b2)}, ${xy(a2, b2)}`;
    } else {
      const bend = Math.max(down ? 12 : 20, (a2 - a1) / 2);
      d = `M ${xy(a1, b1)} C ${xy(a1 + bend, b1)}, ${xy(a2 - bend, b2)}, ${xy(a2, b2)}`;
    }
    drawing.append(svg("path", { d, fill: "none", "data-edge": `${e.source_task_id}→${e.target_task_id}`,
      stroke: "#545d68", "stroke-width": 1.5, "stroke-dasharray": e.condition ? "5 4" : "none", "marker-end": "url(#arrow)" }));
  }
  for (const t of view.tasks) {
    const [a, b] = at.get(t.task_uuid);
    const [fill, ink] = STATUS_COLOURS[t.status] || STATUS_COLOURS.pending;
    const node = svg("g", { class: "task-node", "data-task": t.task_id, "data-status": t.status, transform: `translate(${xy(a, b)})` });
    node.append(svg("rect", { width: W, height: H, rx: 8, fill, stroke: ink, "stroke-width": t.paused ? 3 : 1.5, "stroke-dasharray": t.paused ? "4 3" : "none" }));
    node.append(svg("text", { x: 10, y: 19, "font-weight": 700, fill: "#1b1f24", "font-size": 14 }, t.task_id.length > 20 ? `${t.task_id.slice(0, 19)}…` : t.task_id));
    node.append(svg("text", { x: 10, y: 37, fill: ink, "font-size": 12 }, `${t.status}${t.version > 1 ? ` · v${t.version}` : ""}${t.paused ? " · paused" : ""}`));
    node.addEventListener("click", () => onPick(t));
    drawing.append(node);
  }
  return el("div", { class: down ? "diagram down" : "diagram" }, drawing);
}
