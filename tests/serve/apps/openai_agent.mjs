// A small agent loop on the openai package's Chat Completions (OPENAI_BASE_URL and OPENAI_API_KEY from the
// environment): one streamed turn, each tool call run, the results sent back, the answer printed. The twin of
// openai_agent.py: without --bug the fixed agent (each fragment's call found by its id, then its index, then
// the call last opened; ids and names never concatenated; calls run once the choice finished with
// "tool_calls" or "stop"); --bug start-placeholder | index-keyed | parse-each-fragment | first-parse makes it
// the buggy agent of that name.
import { answered, options, parsed, results, run, sdk, tryParse, untilBroken } from "./common.mjs";

const OpenAI = await sdk("openai");

const BUGS = ["start-placeholder", "index-keyed", "parse-each-fragment", "first-parse"];

// each tool_calls entry of the first choice, and the choice's finish_reason (with a null entry)
async function* fragments(chunks) {
  for await (const chunk of chunks) {
    for (const choice of chunk.choices ?? []) {
      if (choice.index !== 0) continue;
      for (const entry of choice.delta?.tool_calls ?? []) yield [entry, null];
      if (choice.finish_reason) yield [null, choice.finish_reason];
    }
  }
}

async function fixed(chunks) {
  const calls = [];
  const byIndex = new Map();
  let finish = null;
  for await (const [entry, finishReason] of fragments(chunks)) {
    if (entry === null) {
      finish = finishReason;
      continue;
    }
    const name = entry.function?.name || null;
    let call = entry.id ? calls.find((c) => c.id === entry.id) : undefined;
    if (!call && entry.index !== undefined && byIndex.has(entry.index) && !(entry.id && byIndex.get(entry.index).id)) {
      call = byIndex.get(entry.index);
    }
    if (!call && (entry.id || name || calls.length === 0)) calls.push((call = { id: null, name: null, text: "" }));
    call ??= calls.at(-1);
    if (entry.index !== undefined) byIndex.set(entry.index, call);
    call.id ||= entry.id || null;
    call.name ||= name;
    call.text += entry.function?.arguments ?? "";
  }
  if (finish !== "tool_calls" && finish !== "stop") return [];
  return calls.map((c) => run({ id: c.id, name: c.name, input: parsed(c.text) }));
}

const BUGGY = {
  // runs a call with {} when its first fragment (its id and name) arrives
  async "start-placeholder"(chunks) {
    const calls = [];
    for await (const [entry] of fragments(chunks)) {
      if (entry?.id) calls.push(run({ id: entry.id, name: entry.function?.name, input: {} }));
    }
    return calls;
  },
  // keys calls by index alone, concatenating fragments, and answers with ids of its own
  async "index-keyed"(chunks) {
    const names = new Map();
    const buffers = new Map();
    for await (const [entry] of fragments(chunks)) {
      if (entry === null) continue;
      const index = entry.index ?? 0;
      if (!names.has(index)) names.set(index, entry.function?.name);
      buffers.set(index, (buffers.get(index) ?? "") + (entry.function?.arguments ?? ""));
    }
    return [...buffers].map(([index, text]) => run({ id: `call_${index}`, name: names.get(index), input: parsed(text) }));
  },
  // parses each arguments fragment alone and keeps the last that parsed (else {})
  async "parse-each-fragment"(chunks) {
    const open = new Map();
    for await (const [entry] of fragments(chunks)) {
      if (entry === null) continue;
      const index = entry.index ?? 0;
      if (!open.has(index)) open.set(index, { id: entry.id, name: entry.function?.name, input: {} });
      const one = tryParse(entry.function?.arguments ?? "");
      if (one) open.get(index).input = one.value;
    }
    return [...open.values()].map(run);
  },
  // runs a call as soon as its buffer parses, before the choice finished
  async "first-parse"(chunks) {
    const heads = new Map();
    const done = new Set();
    const calls = [];
    for await (const [entry] of fragments(untilBroken(chunks))) {
      const index = entry?.index ?? 0;
      if (entry === null || done.has(index)) continue;
      if (!heads.has(index)) heads.set(index, { id: entry.id, name: entry.function?.name, buffer: "" });
      const head = heads.get(index);
      head.buffer += entry.function?.arguments ?? "";
      const whole = tryParse(head.buffer);
      if (whole) {
        done.add(index);
        calls.push(run({ id: head.id, name: head.name, input: whole.value }));
      }
    }
    return calls;
  },
};

const args = options(BUGS, "gpt-4o");
const client = new OpenAI({ maxRetries: 0 });
const tools = args.tool.map((name) => ({ type: "function", function: { name, parameters: { type: "object" } } }));
const messages = [{ role: "user", content: args.prompt }];
const request = { model: args.model, messages, tools, stream: true };
const calls = await (args.bug === undefined ? fixed : BUGGY[args.bug])(await client.chat.completions.create(request));
if (calls.length === 0) answered("");
messages.push({
  role: "assistant",
  content: null,
  tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.input) } })),
});
for (const c of calls) messages.push({ role: "tool", tool_call_id: c.id, content: results.get(c.id) });
let answer = "";
for await (const chunk of await client.chat.completions.create(request)) answer += chunk.choices[0]?.delta?.content ?? "";
answered(answer);
