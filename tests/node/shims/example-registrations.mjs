// Loads each of pi's example extensions twice, with jiti from the reference install (the loader
// pi itself uses; a test tool here, not part of pi-rs): once with pi's module names pointing to
// our modules, once to the real packages. Each extension's factory runs against a recording
// stand-in for `pi`; what it registers must be the same both times: tool names, descriptions
// and the exact JSON of their parameter schemas, commands, flags, shortcuts, event handlers.
// This is where typebox/StringEnum output reaches a tool definition exactly as an extension
// builds it.
import { readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { check, finish, same } from "./harness.mjs";

const reference = process.env.PI_REFERENCE_NODE_MODULES;
const shims = process.env.PI_SHIMS_DIR;
const require = createRequire(join(reference, "jiti/package.json"));
const { createJiti } = require("jiti");
const themeModule = await import(join(reference, "@mariozechner/pi-coding-agent/dist/modes/interactive/theme/theme.js"));
themeModule.initTheme("dark");
const theme = themeModule.theme;
const examplesDir = join(reference, "@mariozechner/pi-coding-agent/examples/extensions");

const ourAliases = {
  typebox: join(shims, "typebox.mjs"),
  "@sinclair/typebox": join(shims, "typebox.mjs"),
  "@mariozechner/pi-ai": join(shims, "pi-ai.mjs"),
  "@mariozechner/pi-tui": join(shims, "pi-tui.mjs"),
  "@mariozechner/pi-coding-agent": join(shims, "pi-coding-agent.mjs"),
};
const realAliases = {
  typebox: join(reference, "typebox/build/index.mjs"),
  "@sinclair/typebox": join(reference, "typebox/build/index.mjs"),
  "@mariozechner/pi-ai": join(reference, "@mariozechner/pi-ai/dist/index.js"),
  "@mariozechner/pi-tui": join(reference, "@mariozechner/pi-tui/dist/index.js"),
  "@mariozechner/pi-coding-agent": join(reference, "@mariozechner/pi-coding-agent/dist/index.js"),
};

/** A `pi` that records registrations; every other member is a no-op. */
function recordingPi(log) {
  const record = (kind) => (...args) => {
    log.push([kind, ...args.map(describe)]);
  };
  const known = {
    registerTool: (tool) => log.push(["tool", tool.name, tool.label, tool.description, JSON.stringify(tool.parameters), typeof tool.execute, ...renders(tool)]),
    registerCommand: (name, options) => log.push(["command", name, options?.description]),
    registerFlag: (name, options) => log.push(["flag", name, JSON.stringify(options)]),
    registerShortcut: (key, options) => log.push(["shortcut", String(key), options?.description]),
    on: (event) => log.push(["on", event]),
    registerMessageRenderer: record("renderer"),
    registerProvider: (name) => log.push(["provider", name]),
    getFlag: () => undefined,
    events: { on: () => () => {}, emit: () => {} },
  };
  return new Proxy(known, { get: (target, key) => (key in target ? target[key] : () => undefined) });
}

/** A value of the schema's shape: every property, the first enum value, one array item. */
function sampleOf(schema) {
  if (!schema || typeof schema !== "object") return "sample";
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.anyOf)) return sampleOf(schema.anyOf[0]);
  switch (schema.type) {
    case "object":
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, sampleOf(v)]));
    case "array":
      return [sampleOf(schema.items)];
    case "number":
    case "integer":
      return 3;
    case "boolean":
      return true;
    default:
      return "sample text that is long enough to need wrapping in a narrow terminal";
  }
}

/** The lines a tool's renderCall / renderResult components give at two widths (or the error). */
function renders(tool) {
  const out = [];
  const args = sampleOf(tool.parameters);
  const context = { args, toolCallId: "call-1", invalidate() {}, lastComponent: undefined, state: {}, cwd: "/work", executionStarted: true, argsComplete: true, isError: false };
  const attempt = (label, build) => {
    try {
      const component = build();
      out.push([label, component ? [40, 100].map((w) => component.render(w)) : null]);
    } catch (e) {
      out.push([label, `throws: ${String(e?.message ?? e).split("\n")[0]}`]);
    }
  };
  if (tool.renderCall) attempt("renderCall", () => tool.renderCall(args, theme, context));
  if (tool.renderResult) {
    const result = { content: [{ type: "text", text: "first result line\nsecond line" }], details: {} };
    for (const options of [{ expanded: false, isPartial: false }, { expanded: true, isPartial: false }, { expanded: false, isPartial: true }]) {
      attempt(`renderResult ${JSON.stringify(options)}`, () => tool.renderResult(result, options, theme, context));
    }
  }
  return out;
}

function describe(value) {
  if (typeof value === "function") return "fn";
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

async function registrations(entry, aliases) {
  const jiti = createJiti(import.meta.url, { alias: aliases, moduleCache: false, fsCache: false });
  const log = [];
  try {
    const mod = await jiti.import(entry, { default: true });
    const factory = typeof mod === "function" ? mod : mod?.default;
    if (typeof factory !== "function") return { error: "no factory" };
    await factory(recordingPi(log));
    return { log };
  } catch (e) {
    return { error: String(e?.message ?? e).split("\n")[0], log };
  }
}

const entries = [];
for (const name of readdirSync(examplesDir).sort()) {
  const path = join(examplesDir, name);
  if (statSync(path).isDirectory()) {
    const index = join(path, "index.ts");
    try {
      statSync(index);
      entries.push([name, index]);
    } catch {}
  } else if (name.endsWith(".ts")) {
    entries.push([name, path]);
  }
}

// pi-rs hands the host its built-in tools' definitions; stand in with pi's own (pi-rs's are
// checked to be pi's elsewhere), so the create*Tool factories have something to return.
const realAgent = await import(realAliases["@mariozechner/pi-coding-agent"]);
const realFactories = { read: realAgent.createReadTool, bash: realAgent.createBashTool, edit: realAgent.createEditTool, write: realAgent.createWriteTool, grep: realAgent.createGrepTool, find: realAgent.createFindTool, ls: realAgent.createLsTool };
globalThis.__piHost = {
  theme: () => theme,
  tools: {
    definition: (name) => {
      const tool = realFactories[name]?.(process.cwd());
      return tool && { name: tool.name, label: tool.label, description: tool.description, parameters: tool.parameters };
    },
    execute: async () => ({ content: [], details: {} }),
  },
};


let identical = 0;
let toolCount = 0;
let renderCount = 0;
const failing = [];
for (const [name, entry] of entries) {
  const a = await registrations(entry, ourAliases);
  const b = await registrations(entry, realAliases);
  same(`registrations of ${name}`, a, b);
  if (JSON.stringify(a) === JSON.stringify(b)) identical++;
  if (a.error) failing.push(`${name} (${a.error})`);
  const tools = (a.log ?? []).filter((r) => r[0] === "tool");
  toolCount += tools.length;
  renderCount += tools.reduce((n, t) => n + t.slice(6).filter((r) => typeof r[1] !== "string").length, 0);
}
console.log(`${identical} of ${entries.length} examples behave the same with our modules as with pi's: the same tools, commands, flags and handlers, or the same load failure (${toolCount} tools, ${renderCount} renderCall/renderResult components rendered and compared line by line)`);
if (failing.length > 0) console.log(`factories that throw with both module sets: ${failing.join("; ")}`);
check("examples were found", entries.length > 60, String(entries.length));

finish("example registrations");
