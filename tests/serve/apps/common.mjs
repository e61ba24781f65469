// What the Node demo agents share (as common.py does for the Python ones): their command line, the one tool
// they run and the line each run prints: {"ran": name, "id": id, "input": input} when a tool runs, and
// {"answer": text} once the model answered the results.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

// The SDK package `name`'s default export, imported as any Node project imports it (a node_modules beside the
// agent or above it); an agent run in place, in tests/serve/apps, has none: there it is the project's Node
// harness's (tests/clients/node), so `node tests/serve/apps/anthropic_agent.mjs` runs as the Python twin does.
export async function sdk(name) {
  try {
    return (await import(name)).default;
  } catch (error) {
    if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
  }
  const harness = createRequire(new URL("../../clients/node/package.json", import.meta.url));
  return (await import(pathToFileURL(harness.resolve(name)).href)).default;
}

export function options(bugs, model) {
  const { values } = parseArgs({
    options: {
      bug: { type: "string" },
      tool: { type: "string", multiple: true, default: [] },
      model: { type: "string", default: model },
      prompt: { type: "string", default: "Use the tools you need." },
    },
  });
  if (values.bug !== undefined && !bugs.includes(values.bug)) {
    console.error(`--bug must be one of ${bugs.join(", ")}`);
    process.exit(2);
  }
  return values;
}

export const results = new Map();

// Run the tool (it only says what it got), printing the record of the run.
export function run(call) {
  console.log(JSON.stringify({ ran: call.name ?? null, id: call.id ?? null, input: call.input }));
  results.set(call.id, JSON.stringify({ ok: true }));
  return call;
}

export function answered(text) {
  console.log(JSON.stringify({ answer: text }));
  process.exit(0);
}

// The arguments as JSON, {} for none (as the providers mean an empty buffer).
export function parsed(text) {
  return text.trim() ? JSON.parse(text) : {};
}

// The events until the stream breaks, then none: the loop goes on with the calls it already ran (as the
// first-parse bug report's agent did, and common.py's until_broken), so the server sees their results sent
// back for a stream that was cut. What broke is printed, never silent.
export async function* untilBroken(events) {
  try {
    yield* events;
  } catch (error) {
    console.log(JSON.stringify({ "stream broke": error?.name ?? String(error) }));
  }
}

export function tryParse(text) {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return null;
  }
}
