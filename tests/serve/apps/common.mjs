// What the Node demo agents share (as common.py does for the Python ones): their command line, the one tool
// they run and the line each run prints: {"ran": name, "id": id, "input": input} when a tool runs, and
// {"answer": text} once the model answered the results.
import { parseArgs } from "node:util";

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

export function tryParse(text) {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return null;
  }
}
