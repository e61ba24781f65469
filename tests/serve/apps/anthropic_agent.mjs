// A small agent loop on @anthropic-ai/sdk (ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY from the environment):
// one streamed turn, each tool call run, the results sent back, the answer printed. The twin of
// anthropic_agent.py: without --bug the fixed agent (messages.stream(), calls run once the message ended with
// stop_reason "tool_use"); --bug start-placeholder | index-keyed | parse-each-fragment | first-parse makes it
// the buggy agent of that name, reading the raw events (messages.create({stream: true})).
import { answered, options, parsed, results, run, sdk, tryParse, untilBroken } from "./common.mjs";

const Anthropic = await sdk("@anthropic-ai/sdk");

const BUGS = ["start-placeholder", "index-keyed", "parse-each-fragment", "first-parse"];
const isToolStart = (e) => e.type === "content_block_start" && e.content_block.type === "tool_use";
const isFragment = (e) => e.type === "content_block_delta" && e.delta.type === "input_json_delta";

async function fixed(client, request) {
  const message = await client.messages.stream(request).finalMessage();
  if (message.stop_reason !== "tool_use") return [];
  return message.content.filter((b) => b.type === "tool_use").map((b) => run({ id: b.id, name: b.name, input: b.input }));
}

const BUGGY = {
  // runs the tool at content_block_start with the block's input: {}
  async "start-placeholder"(events) {
    const calls = [];
    for await (const e of events) {
      if (isToolStart(e)) calls.push(run({ id: e.content_block.id, name: e.content_block.name, input: e.content_block.input }));
    }
    return calls;
  },
  // keys calls by block index, concatenating fragments, and answers with ids of its own
  async "index-keyed"(events) {
    const names = new Map();
    const buffers = new Map();
    for await (const e of events) {
      if (isToolStart(e) && !names.has(e.index)) names.set(e.index, e.content_block.name);
      if (isToolStart(e) && !buffers.has(e.index)) buffers.set(e.index, "");
      if (isFragment(e)) buffers.set(e.index, (buffers.get(e.index) ?? "") + e.delta.partial_json);
    }
    return [...buffers].map(([index, text]) => run({ id: `call_${index}`, name: names.get(index), input: parsed(text) }));
  },
  // parses each partial_json alone and keeps the last that parsed (else {})
  async "parse-each-fragment"(events) {
    const open = new Map();
    const calls = [];
    for await (const e of events) {
      if (isToolStart(e)) open.set(e.index, { id: e.content_block.id, name: e.content_block.name, input: {} });
      if (isFragment(e) && open.has(e.index)) {
        const one = tryParse(e.delta.partial_json);
        if (one) open.get(e.index).input = one.value;
      }
      if (e.type === "content_block_stop" && open.has(e.index)) {
        calls.push(run(open.get(e.index)));
        open.delete(e.index);
      }
    }
    return calls;
  },
  // runs a call as soon as its buffer parses, before its content_block_stop
  async "first-parse"(events) {
    const heads = new Map();
    const calls = [];
    for await (const e of untilBroken(events)) {
      if (isToolStart(e)) heads.set(e.index, { id: e.content_block.id, name: e.content_block.name, buffer: "" });
      if (isFragment(e) && heads.has(e.index)) {
        const head = heads.get(e.index);
        head.buffer += e.delta.partial_json;
        const whole = tryParse(head.buffer);
        if (whole) {
          calls.push(run({ id: head.id, name: head.name, input: whole.value }));
          heads.delete(e.index);
        }
      }
    }
    return calls;
  },
};

const args = options(BUGS, "claude-haiku-4-5");
const client = new Anthropic({ maxRetries: 0 });
const tools = args.tool.map((name) => ({ name, description: name, input_schema: { type: "object" } }));
const messages = [{ role: "user", content: args.prompt }];
const request = { model: args.model, max_tokens: 1024, messages, tools };
const calls = args.bug === undefined
  ? await fixed(client, request)
  : await BUGGY[args.bug](await client.messages.create({ ...request, stream: true }));
if (calls.length === 0) answered("");
messages.push({ role: "assistant", content: calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.input })) });
messages.push({ role: "user", content: calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: results.get(c.id) })) });
const answer = await client.messages.stream(request).finalText();
answered(answer);
