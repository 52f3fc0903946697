// pi-coding-agent.mjs against the real pi-coding-agent: truncation, sizes, message conversion,
// transcripts, frontmatter, language names, theme adapters, key hints and the border/loader
// components give the same results; built-in tool factories go through a stand-in
// `globalThis.__piHost.tools`.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { both, check, finish, ours, real, same } from "./harness.mjs";

const theirs = await real("@mariozechner/pi-coding-agent/dist/index.js");
const themeModule = await real("@mariozechner/pi-coding-agent/dist/modes/interactive/theme/theme.js");
themeModule.initTheme("dark");
globalThis.__piHost = { theme: () => themeModule.theme, version: "9.9.9", agentDir: "/tmp/agent-dir" };
const mine = await ours("pi-coding-agent.mjs");

// Truncation and sizes.
const texts = {
  empty: "",
  short: "one\ntwo\nthree",
  manyLines: Array.from({ length: 3000 }, (_, i) => `line ${i}`).join("\n"),
  bigLine: "x".repeat(60000),
  bigLast: `a\nb\n${"é".repeat(40000)}`,
  wide: Array.from({ length: 500 }, () => "中文字符".repeat(10)).join("\n"),
  trailingNewline: "a\nb\n",
};
for (const [name, text] of Object.entries(texts)) {
  for (const options of [undefined, { maxLines: 2 }, { maxBytes: 10 }, { maxLines: 100, maxBytes: 1000 }, { maxBytes: 3 }]) {
    both(`truncateHead ${name} ${JSON.stringify(options)}`, (m) => m.truncateHead(text, options), mine, theirs);
    both(`truncateTail ${name} ${JSON.stringify(options)}`, (m) => m.truncateTail(text, options), mine, theirs);
  }
  both(`truncateLine ${name}`, (m) => [m.truncateLine(text), m.truncateLine(text, 5)], mine, theirs);
}
for (const n of [0, 1, 1023, 1024, 1536, 1048575, 1048576, 5e9]) both(`formatSize ${n}`, (m) => m.formatSize(n), mine, theirs);
both("limits", (m) => [m.DEFAULT_MAX_BYTES, m.DEFAULT_MAX_LINES], mine, theirs);

// Messages.
const messages = [
  { role: "user", content: "plain string", timestamp: 1 },
  { role: "user", content: [{ type: "text", text: "block " }, { type: "image", data: "x", mimeType: "image/png" }, { type: "text", text: "text" }], timestamp: 2 },
  { role: "assistant", content: [{ type: "thinking", thinking: "hmm" }, { type: "text", text: "answer" }, { type: "toolCall", id: "1", name: "bash", arguments: { command: "ls -la", timeout: 5 } }, { type: "toolCall", id: "2", name: "read", arguments: {} }], timestamp: 3 },
  { role: "toolResult", toolCallId: "1", toolName: "bash", content: [{ type: "text", text: "y".repeat(2500) }], isError: false, timestamp: 4 },
  { role: "toolResult", toolCallId: "2", toolName: "read", content: [], isError: true, timestamp: 5 },
  { role: "bashExecution", command: "make", output: "built", exitCode: 2, cancelled: false, truncated: true, fullOutputPath: "/tmp/out", timestamp: 6 },
  { role: "bashExecution", command: "sleep", output: "", exitCode: null, cancelled: true, timestamp: 7 },
  { role: "bashExecution", command: "secret", output: "x", exitCode: 0, excludeFromContext: true, timestamp: 8 },
  { role: "custom", customType: "note", content: "custom text", display: true, timestamp: 9 },
  { role: "custom", customType: "note", content: [{ type: "text", text: "blocks" }], display: false, timestamp: 10 },
  { role: "branchSummary", summary: "branch work", fromId: "x", timestamp: 11 },
  { role: "compactionSummary", summary: "earlier work", tokensBefore: 100, timestamp: 12 },
  { role: "unknown", timestamp: 13 },
];
both("convertToLlm", (m) => m.convertToLlm(messages), mine, theirs);
both("serializeConversation", (m) => m.serializeConversation(m.convertToLlm(messages)), mine, theirs);

// Frontmatter (subagent's agent files and the shapes skills use).
const docs = {
  none: "# Title\nbody",
  agent: "---\nname: scout\ndescription: Fast recon agent\ntools: read, grep, find, ls\nmodel: claude-haiku-4-5\n---\n\nYou are a scout.\n",
  typed: "---\ncount: 3\nratio: 0.5\nenabled: true\noff: false\nnothing: null\ntilde: ~\nquoted: \"a: b\"\nsingle: 'it''s'\ninline: [a, b, 3]\nempty: []\n---\nbody",
  nested: "---\nmeta:\n  author: me\n  tags:\n    - x\n    - y\nlist:\n- one\n- two\n---\nbody text\n",
  block: "---\ndescription: |\n  line one\n  line two\nfolded: >\n  folded one\n  folded two\n---\n",
  crlf: "---\r\nname: win\r\n---\r\nbody\r\n",
  unterminated: "---\nname: x\nbody",
  emptyFront: "---\n---\nbody",
  comment: "---\n# a comment\nname: c # trailing\n---\n",
};
for (const [name, doc] of Object.entries(docs)) {
  both(`parseFrontmatter ${name}`, (m) => m.parseFrontmatter(doc), mine, theirs);
  both(`stripFrontmatter ${name}`, (m) => m.stripFrontmatter(doc), mine, theirs);
}

// Small helpers.
for (const path of ["a.ts", "B.PY", "Makefile", "x.tar.gz", "noext", "dir.d/file.rs", "x.hcl", ".bashrc"]) {
  both(`getLanguageFromPath ${path}`, (m) => m.getLanguageFromPath(path), mine, theirs);
}
const tool = { name: "t", execute() {} };
same("defineTool", mine.defineTool(tool) === tool, theirs.defineTool(tool) === tool);
for (const event of [{ toolName: "bash" }, { toolName: "read" }, { toolName: "x" }]) {
  both(`type guards ${event.toolName}`, (m) => [m.isToolCallEventType("bash", event), m.isBashToolResult(event), m.isReadToolResult(event), m.isEditToolResult(event), m.isWriteToolResult(event), m.isGrepToolResult(event), m.isFindToolResult(event), m.isLsToolResult(event)], mine, theirs);
}
same("VERSION from the host", mine.VERSION, "9.9.9");
same("getAgentDir from the host", mine.getAgentDir(), "/tmp/agent-dir");
delete globalThis.__piHost.agentDir;
process.env.PI_CODING_AGENT_DIR = "~/custom-agent";
same("getAgentDir from the environment", mine.getAgentDir(), theirs.getAgentDir());
delete process.env.PI_CODING_AGENT_DIR;
same("getAgentDir default", mine.getAgentDir(), theirs.getAgentDir());

// withFileMutationQueue: same-file mutations in order, other files in parallel.
const dir = mkdtempSync(join(tmpdir(), "pi-shims-"));
const file = join(dir, "f.txt");
writeFileSync(file, "");
const order = [];
const slow = (tag, ms) => () => new Promise((r) => setTimeout(() => { order.push(tag); writeFileSync(file, readFileSync(file, "utf8") + tag); r(tag); }, ms));
const results = await Promise.all([
  mine.withFileMutationQueue(file, slow("a", 30)),
  mine.withFileMutationQueue(join(dir, ".", "f.txt"), slow("b", 1)),
  mine.withFileMutationQueue(join(dir, "other.txt"), async () => { order.push("other"); return "o"; }),
  mine.withFileMutationQueue(file, async () => { throw new Error("boom"); }).catch((e) => e.message),
  mine.withFileMutationQueue(file, slow("c", 1)),
]);
same("withFileMutationQueue results", results, ["a", "b", "o", "boom", "c"]);
same("withFileMutationQueue order", [order, readFileSync(file, "utf8")], [["other", "a", "b", "c"], "abc"]);

// Theme adapters, key hints and components with pi's dark theme.
const sample = (t) => Object.fromEntries(Object.entries(t).map(([k, v]) => [k, typeof v === "function" ? v("sample", true) + v("sample", false) : v]));
both("getSelectListTheme", (m) => sample(m.getSelectListTheme()), mine, theirs);
both("getSettingsListTheme", (m) => sample(m.getSettingsListTheme()), mine, theirs);
both("getMarkdownTheme", (m) => { const t = m.getMarkdownTheme(); delete t.highlightCode; return sample(t); }, mine, theirs);
same("getMarkdownTheme code without language", mine.getMarkdownTheme().highlightCode("a\nb"), theirs.getMarkdownTheme().highlightCode("a\nb"));
same("highlightCode without language", mine.highlightCode("x = 1\ny", undefined), theirs.highlightCode("x = 1\ny", undefined));
for (const action of ["tui.select.cancel", "tui.select.confirm", "tui.editor.cursorWordLeft", "nope"]) {
  both(`keyHint ${action}`, (m) => [m.keyHint(action, "does it"), m.keyText(action), m.rawKeyHint("ctrl+x", "raw")], mine, theirs);
}
for (const w of [1, 5, 40]) {
  both(`DynamicBorder ${w}`, (m) => [new m.DynamicBorder().render(w), new m.DynamicBorder((s) => `<${s}>`).render(w)], mine, theirs);
}
const tui = { requestRender() {}, terminal: { rows: 30, columns: 80 } };
for (const cancellable of [true, false]) {
  const a = new mine.BorderedLoader(tui, themeModule.theme, "Summarizing...", { cancellable });
  const b = new theirs.BorderedLoader(tui, themeModule.theme, "Summarizing...", { cancellable });
  for (const w of [10, 40, 80]) same(`BorderedLoader ${cancellable} @${w}`, a.render(w), b.render(w));
  let abortedA = 0;
  let abortedB = 0;
  a.onAbort = () => abortedA++;
  b.onAbort = () => abortedB++;
  a.handleInput("\x1b");
  b.handleInput("\x1b");
  same(`BorderedLoader ${cancellable} escape`, [abortedA, a.signal.aborted], [abortedB, b.signal.aborted]);
  a.dispose();
  b.dispose();
}

// CustomEditor: app keys first, then the editor.
const tuiKb = await real("@mariozechner/pi-tui/dist/index.js");
const coreKb = await real("@mariozechner/pi-coding-agent/dist/core/keybindings.js");
const kb = new tuiKb.KeybindingsManager({ ...tuiKb.TUI_KEYBINDINGS, ...coreKb.KEYBINDINGS });
const editors = [mine, theirs].map((m) => {
  const e = new m.CustomEditor(tui, { borderColor: (s) => s, selectList: {} }, kb);
  e.log = [];
  e.onEscape = () => e.log.push("escape");
  e.onCtrlD = () => e.log.push("ctrl+d");
  e.onAction("app.model.select", () => e.log.push("model"));
  e.onExtensionShortcut = (d) => d === "\x1b[24~" && e.log.push("f12") > 0;
  return e;
});
for (const key of ["\x04", "h", "i", "\x0c", "\x1b", "\x04", "\x1b[24~", "\r"]) {
  for (const e of editors) e.handleInput(key);
  same(`CustomEditor ${JSON.stringify(key)}`, [editors[0].log, editors[0].getText(), editors[0].render(20)], [editors[1].log, editors[1].getText(), editors[1].render(20)]);
}

// Built-in tools through the host.
const calls = [];
globalThis.__piHost.tools = {
  definition: (name) => (name === "nope" ? undefined : { name, label: name, description: `the ${name} tool`, parameters: { type: "object", properties: {} } }),
  execute: async (name, cwd, params, signal, onUpdate, id) => {
    calls.push([name, cwd, params, id]);
    onUpdate?.({ content: [{ type: "text", text: "partial" }] });
    return { content: [{ type: "text", text: `${name} ran` }], details: {} };
  },
};
const bash = mine.createBashTool("/work");
same("createBashTool definition", [bash.name, bash.label, bash.description, bash.parameters], ["bash", "bash", "the bash tool", { type: "object", properties: {} }]);
const updates = [];
same("createBashTool execute", await bash.execute("call-1", { command: "ls" }, undefined, (u) => updates.push(u)), { content: [{ type: "text", text: "bash ran" }], details: {} });
same("execute reached the host", [calls, updates.length], [[["bash", "/work", { command: "ls" }, "call-1"]], 1]);
same("coding tools", mine.createCodingTools("/w").map((t) => t.name), ["read", "bash", "edit", "write"]);
same("read-only tools", mine.createReadOnlyTools("/w").map((t) => t.name), ["read", "grep", "find", "ls"]);
// With operations and a spawnHook the tool's logic runs here, through them.
const execs = [];
const hooked = mine.createBashTool("/w", {
  commandPrefix: "set -e",
  spawnHook: ({ command, cwd, env }) => ({ command: `${command}; true`, cwd: `${cwd}/sub`, env: { ...env, HOOKED: "1" } }),
  operations: {
    exec: async (command, cwd, { onData, env }) => {
      execs.push([command, cwd, env.HOOKED]);
      onData(Buffer.from("line\n"));
      return { exitCode: 0 };
    },
  },
});
same("bash through operations", await hooked.execute("c", { command: "ls" }), { content: [{ type: "text", text: "line\n" }], details: undefined });
same("spawnHook and commandPrefix applied", execs, [["set -e\nls; true", "/w/sub", "1"]]);
const failing = mine.createBashTool("/w", { operations: { exec: async (_c, _d, { onData }) => (onData(Buffer.from("bad")), { exitCode: 3 }) } });
let failure = "";
try {
  await failing.execute("c", { command: "x" });
} catch (e) {
  failure = e.message;
}
same("a failed command throws with its status", failure, "bad\n\nCommand exited with code 3");
const files = new Map([["/w/a.txt", "one\ntwo\n"]]);
const fileOps = {
  readFile: async (p) => Buffer.from(files.get(p) ?? ""),
  access: async (p) => {
    if (!files.has(p)) throw new Error("ENOENT");
  },
  writeFile: async (p, text) => void files.set(p, text),
  mkdir: async () => {},
};
const edited = await mine.createEditTool("/w", { operations: fileOps }).execute("c", { path: "a.txt", edits: [{ oldText: "two", newText: "2" }] });
same("edit through operations", [edited.content[0].text, files.get("/w/a.txt")], ["Successfully replaced 1 block(s) in a.txt.", "one\n2\n"]);
const read = await mine.createReadTool("/w", { operations: fileOps }).execute("c", { path: "a.txt", offset: 2, limit: 1 });
same("read through operations", read.content[0].text, "2\n\n[1 more lines in file. Use offset=3 to continue.]");
let refused = "";
try {
  mine.createGrepTool("/w", { operations: {} });
} catch (e) {
  refused = e.message;
}
check("grep operations are refused, not ignored", /operations/.test(refused), refused);
delete globalThis.__piHost.tools;
let missing = "";
try {
  mine.createReadTool("/w");
} catch (e) {
  missing = e.message;
}
check("without the host's tools the factory says why", /__piHost\.tools\.definition/.test(missing), missing);

finish("pi-coding-agent");
