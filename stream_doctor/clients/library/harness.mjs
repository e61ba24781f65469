// Replays a capture's bytes through the real TypeScript client libraries the stream-doctor
// profiles model, and answers what each hands to the tool and when, as JSON.
//
// A long-lived process (`node harness.mjs NODE_MODULES`: --client's run, clients/library/node.py, and the
// tests' tests/clients/node_harness.py): stdin carries one request per line, stdout
// answers each with one line, in order, until stdin closes.
// request: {"client": "anthropic-typescript" | "openai-node" | "vercel-ai", "provider": "anthropic" | "openai",
//           "chunks": [[frame number | null, base64 bytes], ...], "tools": [names], "ids": [ids the capture sent]}
// answer:  {"seen": [{"at", "id", "name", "value", "runs"}], "error": class name | null, "error_at": frame | null,
//           "error_message": text | null} (or {"harness_error": text} when the run itself broke)
//
// The library gets a fake fetch whose response body enqueues the given chunks one per read (one SSE
// event each, or pieces cut at arbitrary bytes), after all the work the previous one set off has
// settled, so `at` is the frame the library had last read when it handed a call (null: after the
// body ended). Nothing leaves the process: every request is answered by the fake fetch.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

// the packages come from the node_modules folder named by the first argument (--node-modules, or the
// project's tests/clients/node), not from where this file lies: package data of stream-doctor
const NODE_MODULES = process.argv[2];
const loaded = new Map();

// The package's ES module entry (its exports' "import" or "default", as `import` picks it), loaded once.
async function load(name) {
  if (!loaded.has(name)) {
    const manifest = JSON.parse(readFileSync(join(NODE_MODULES, name, "package.json"), "utf8"));
    let entry = manifest.exports?.["."] ?? manifest.exports;
    entry = typeof entry === "object" && entry !== null ? entry.import ?? entry.default : entry;
    entry = typeof entry === "object" && entry !== null ? entry.default : entry;
    const path = typeof entry === "string"
      ? join(NODE_MODULES, name, entry)
      : createRequire(join(NODE_MODULES, "noop.js")).resolve(name);
    loaded.set(name, import(pathToFileURL(path).href));
  }
  return loaded.get(name);
}

globalThis.AI_SDK_LOG_WARNINGS = false; // the model name "replay" is unknown to it: a warning on stderr each run
let input = null; // the run under way
let chunks = [];
let position = null; // the frame being read
let current = 0; // the run under way's number: a body left unread by an earlier run must not move `position`

function fakeFetch() {
  const mine = chunks;
  const run = current;
  let next = 0;
  const body = new ReadableStream({
    async pull(controller) {
      // let everything the previous chunk set off settle (the AI SDK's transform streams read ahead
      // otherwise), so that a call handed now was handed on the chunk given last
      await new Promise((resolve) => setImmediate(resolve));
      if (next < mine.length) {
        const [number, bytes] = mine[next++];
        if (run === current) position = number;
        controller.enqueue(new Uint8Array(bytes));
      } else {
        if (run === current) position = null;
        controller.close();
      }
    },
  }, { highWaterMark: 0 });
  return Promise.resolve(new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } }));
}

let seen = [];
let error = null;
let errorAt = null;
let errorMessage = null; // not compared: for whoever reads a disagreement

function failed(exc) {
  error = exc?.constructor?.name ?? String(exc);
  errorMessage = String(exc?.message ?? exc).slice(0, 200);
  errorAt = position;
}

async function anthropicTypescript() {
  const { default: Anthropic } = await load("@anthropic-ai/sdk");
  const client = new Anthropic({ apiKey: "test", baseURL: "http://capture.invalid", maxRetries: 0, fetch: fakeFetch });
  const stream = client.messages.stream({ model: "replay", max_tokens: 1, messages: [{ role: "user", content: "replay" }] });
  const handed = new Set();
  stream.on("contentBlock", (block) => {
    if (block.type === "tool_use") {
      handed.add(block);
      seen.push({ at: position, id: block.id ?? null, name: block.name ?? null, value: block.input, runs: true });
    }
  });
  stream.on("error", () => {}); // the rejection of finalMessage() reports it
  try {
    const message = await stream.finalMessage();
    for (const block of message.content) {
      if (block.type === "tool_use" && !handed.has(block)) { // never stopped: read from the final message
        seen.push({ at: null, id: block.id ?? null, name: block.name ?? null, value: block.input, runs: true });
      }
    }
  } catch (exc) {
    failed(exc);
  }
}

async function openaiNode() {
  const { default: OpenAI } = await load("openai");
  const client = new OpenAI({ apiKey: "test", baseURL: "http://capture.invalid/v1", maxRetries: 0, fetch: fakeFetch });
  const stream = client.chat.completions.stream({ model: "replay", messages: [{ role: "user", content: "replay" }] });
  stream.on("tool_calls.function.arguments.done", (event) => {
    // the event names no choice: the id is the snapshot entry's at that index whose text matches
    const ids = [];
    for (const choice of stream.currentChatCompletionSnapshot?.choices ?? []) {
      const entry = (choice.message.tool_calls ?? [])[event.index];
      if (entry && entry.function?.arguments === event.arguments && entry.function?.name === event.name) {
        ids.push(entry.id);
      }
    }
    seen.push({ at: position, id: ids.length === 1 ? ids[0] ?? null : null, name: event.name, value: event.arguments, runs: true });
  });
  stream.on("error", () => {});
  try {
    const completion = await stream.finalChatCompletion();
    for (const choice of completion.choices) { // the legacy function_call has no done event
      const legacy = choice.message.function_call;
      if (legacy) seen.push({ at: null, id: null, name: legacy.name, value: legacy.arguments, runs: true });
    }
  } catch (exc) {
    failed(exc);
  }
}

async function vercelAi() {
  const { jsonSchema, streamText, tool } = await load("ai");
  const { createAnthropic } = await load("@ai-sdk/anthropic");
  const { createOpenAICompatible } = await load("@ai-sdk/openai-compatible");
  const model = input.provider === "anthropic"
    ? createAnthropic({ apiKey: "test", baseURL: "http://capture.invalid/v1", fetch: fakeFetch })("replay")
    : createOpenAICompatible({ name: "replay", apiKey: "test", baseURL: "http://capture.invalid/v1", fetch: fakeFetch })("replay");
  const executed = []; // [toolCallId, input] in the order the tools ran (two calls may share an id)
  const tools = {};
  for (const name of input.tools) {
    tools[name] = tool({
      inputSchema: jsonSchema({}),
      execute: async (value, { toolCallId }) => {
        executed.push([toolCallId, value]);
        return "ok";
      },
    });
  }
  const calls = [];
  try {
    const result = streamText({ model, prompt: "replay", tools, maxRetries: 0, onError: () => {} });
    for await (const part of result.fullStream) {
      if (part.type === "tool-call" && !part.providerExecuted) { // a server tool is the provider's to run
        calls.push({ at: position, id: part.toolCallId ?? null, name: part.toolName, input: part.input, invalid: Boolean(part.invalid) });
      } else if (part.type === "error" && errorMessage === null) {
        // an error part is not thrown: the stream goes on and the step ends with "error", so no
        // tool runs (the profile's "not run"); kept for whoever reads a disagreement, not compared
        errorMessage = `error part: ${part.error?.constructor?.name}: ${String(part.error?.message ?? part.error).slice(0, 200)}`;
      }
    }
  } catch (exc) {
    failed(exc);
  }
  for (const call of calls) {
    const ran = executed.findIndex(([id]) => id === call.id);
    // an id the capture never sent was generated (at random): null, as the profile has it
    if (input.ids && !input.ids.includes(call.id)) call.id = null;
    const runs = ran >= 0;
    const value = runs ? executed.splice(ran, 1)[0][1] : null;
    seen.push({ at: call.at, id: call.id, name: call.name, value, runs });
  }
}

const clients = { "anthropic-typescript": anthropicTypescript, "openai-node": openaiNode, "vercel-ai": vercelAi };
// a rejection nobody awaits (a library's background promise) must not end the process
process.on("unhandledRejection", () => {});

async function answer(line) {
  const run = JSON.parse(line);
  current += 1;
  input = run;
  chunks = run.chunks.map(([number, data]) => [number, Buffer.from(data, "base64")]);
  position = null;
  seen = [];
  error = null;
  errorAt = null;
  errorMessage = null;
  await clients[run.client]();
  return { seen, error, error_at: errorAt, error_message: errorMessage };
}

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (!line.trim()) continue;
  let result;
  try {
    result = await answer(line);
  } catch (exc) {
    result = { harness_error: String(exc?.stack ?? exc).slice(0, 2000) };
  }
  process.stdout.write(JSON.stringify(result) + "\n");
}
// stdin closed: a library's pending timer (a request timeout) must not keep the process alive
process.exit(0);
