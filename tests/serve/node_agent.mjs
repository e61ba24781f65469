// An agent loop on the TypeScript SDKs, run by tests/serve/test_node.py against `stream-doctor serve`.
// Usage: node node_agent.mjs NODE_MODULES anthropic|openai buggy|fixed REQUEST_JSON
// The base URL and key come from ANTHROPIC_BASE_URL / OPENAI_BASE_URL and the API key variables, as
// for any application. It prints one JSON line: the calls it ran, [name, input] each.
// "buggy" runs each call at its start event with what that event carried ({} / ""); "fixed" uses the
// SDK's stream helper (finalMessage / finalChatCompletion).
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, sdk, mode, requestJson] = process.argv.slice(2);
const load = async (name) => import(pathToFileURL(createRequire(join(nodeModules, "noop.js")).resolve(name)).href);
const request = JSON.parse(requestJson);
delete request.stream;
const ran = [];

async function anthropicTurn(client, body) {
  if (mode === "fixed") {
    const message = await client.messages.stream(body).finalMessage();
    return message.content.map((block) => ({ ...block }));
  }
  const content = [];
  for await (const event of await client.messages.create({ ...body, stream: true })) {
    if (event.type === "content_block_start") content.push({ ...event.content_block });
    else if (event.type === "content_block_delta" && event.delta.type === "text_delta") content[event.index].text += event.delta.text;
  }
  return content;
}

async function anthropicLoop() {
  const { default: Anthropic } = await load("@anthropic-ai/sdk");
  const client = new Anthropic({ maxRetries: 0 });
  const body = { ...request };
  for (let turn = 0; turn < 4; turn++) {
    let content;
    try {
      content = await anthropicTurn(client, body);
    } catch (error) {
      if (error instanceof Anthropic.APIError) break;
      throw error;
    }
    const calls = content.filter((block) => block.type === "tool_use");
    for (const call of calls) ran.push([call.name, call.input]);
    if (calls.length === 0) break;
    const results = calls.map((call) => ({ type: "tool_result", tool_use_id: call.id, content: "done" }));
    body.messages = [...body.messages, { role: "assistant", content }, { role: "user", content: results }];
  }
}

async function openaiTurn(client, body) {
  if (mode === "fixed") {
    const completion = await client.chat.completions.stream(body).finalChatCompletion();
    return (completion.choices[0].message.tool_calls ?? []).map((c) => [c.id, c.function.name, c.function.arguments]);
  }
  const calls = new Map();
  for await (const chunk of await client.chat.completions.create({ ...body, stream: true })) {
    for (const delta of chunk.choices[0]?.delta?.tool_calls ?? []) {
      if (!calls.has(delta.index)) calls.set(delta.index, [delta.id, delta.function?.name ?? "", delta.function?.arguments || "{}"]);
    }
  }
  return [...calls.values()];
}

async function openaiLoop() {
  const { default: OpenAI } = await load("openai");
  const client = new OpenAI({ maxRetries: 0 });
  const body = { ...request };
  for (let turn = 0; turn < 4; turn++) {
    let calls;
    try {
      calls = await openaiTurn(client, body);
    } catch (error) {
      if (error instanceof OpenAI.APIError) break;
      throw error;
    }
    for (const [, name, args] of calls) ran.push([name, JSON.parse(args)]);
    if (calls.length === 0) break;
    const sent = calls.map(([id, name, args]) => ({ id, type: "function", function: { name, arguments: args } }));
    const results = calls.map(([id]) => ({ role: "tool", tool_call_id: id, content: "done" }));
    body.messages = [...body.messages, { role: "assistant", content: null, tool_calls: sent }, ...results];
  }
}

await (sdk === "anthropic" ? anthropicLoop() : openaiLoop());
console.log(JSON.stringify(ran));
