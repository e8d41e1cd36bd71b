// Drives a Synapse AG-UI endpoint with the real @ag-ui/client (tests/api/agui/test_client.py).
// CommonJS on purpose: `require` honours NODE_PATH (the client is installed outside the checkout),
// ESM `import` does not.
// env: AGUI_URL (the endpoint), AGUI_RESUME_URL (optional: resume on another API process),
//      AGUI_KEY, AGUI_RESUME_KEY (optional API keys), AGUI_THREAD (the thread id)
// argv: <user message> [resume answer JSON, e.g. {"status":"resolved","payload":{"approved":true}}]
// stdout: one JSON object per line: {"event":TYPE,...}, {"finished":OUTCOME,"interrupts":[...]},
//         {"error":MSG,"code":C}, {"thrown":MSG,"status":N}, {"run":N,"ended":BOOL}, last {"messages":[...]}.
const { HttpAgent, buildResumeArray } = require("@ag-ui/client");

const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const bearer = (key) => (key ? { Authorization: `Bearer ${key}` } : {});
const threadId = process.env.AGUI_THREAD;

async function run(agent, n, params) {
  let ended = false;
  try {
    await agent.runAgent(params, {
      onEvent: ({ event }) => out({ event: event.type, ...event }),
      onRunFinishedEvent: (p) => {
        ended = true;
        out({ finished: p.outcome, interrupts: p.interrupts || [] });
      },
      onRunErrorEvent: ({ event }) => {
        ended = true;
        out({ error: event.message, code: event.code });
      },
    });
  } catch (e) {
    out({ thrown: String(e.message || e), status: e.status });
  }
  out({ run: n, ended }); // the client takes a stream cut before RUN_FINISHED silently: say so
}

(async () => {
  const [text, response] = process.argv.slice(2);
  const first = new HttpAgent({ url: process.env.AGUI_URL, threadId, headers: bearer(process.env.AGUI_KEY) });
  first.addMessage({ id: `u-${Date.now()}`, role: "user", content: text });
  await run(first, 1, {});
  const open = first.pendingInterrupts;
  if (!response || open.length === 0) return out({ messages: first.messages });
  // Another process resumes with a fresh agent: nothing of the first run is kept but the thread id.
  const second = new HttpAgent({
    url: process.env.AGUI_RESUME_URL || process.env.AGUI_URL,
    threadId,
    headers: bearer(process.env.AGUI_RESUME_KEY || process.env.AGUI_KEY),
  });
  const answer = JSON.parse(response);
  const resume = buildResumeArray(open, Object.fromEntries(open.map((i) => [i.id, answer])));
  await run(second, 2, { resume });
  out({ messages: second.messages });
})().catch((e) => {
  out({ thrown: String(e.message || e) });
  process.exitCode = 1;
});
