// pi-rs's own `@mariozechner/pi-coding-agent` module for pi extensions.
//
// Extensions import pi's types from here (they vanish when transpiled) and a set of runtime
// helpers, which this module provides with pi 0.73.1's behaviour:
//
// - tool helpers: defineTool, isToolCallEventType, is<Tool>ToolResult, withFileMutationQueue,
//   truncateHead / truncateTail / truncateLine / formatSize / DEFAULT_MAX_BYTES / DEFAULT_MAX_LINES;
// - the built-in tools as objects (createReadTool, createBashTool, … and the *ToolDefinition
//   forms): their name, description and parameters come from pi-rs and `execute` runs pi-rs's
//   tool (`__piHost.tools`, contract in host.mjs);
// - messages: convertToLlm, serializeConversation;
// - UI: DynamicBorder, BorderedLoader, CustomEditor, keyHint / keyText / rawKeyHint, and the
//   theme adapters getMarkdownTheme / getSelectListTheme / getSettingsListTheme over the
//   current theme (`__piHost.theme()`), highlightCode,
//   getLanguageFromPath;
// - config: VERSION, getAgentDir, CONFIG_DIR_NAME; parseFrontmatter / stripFrontmatter;
//   formatReadLineRange (pi 1.6).
//
// Not provided (see docs/extensions.md): pi's own classes for running an agent in-process
// (AgentSession, SessionManager, SettingsManager, ModelRegistry, createAgentSession, main, the
// interactive-mode components), because an extension reaches them through `pi` and `ctx`.

import { spawn } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { hostMember } from "./host.mjs";
import { Editor } from "./tui-editor.mjs";
import { CancellableLoader, Container, getKeybindings, Loader, Spacer, Text } from "./tui-components.mjs";

// --- Config ------------------------------------------------------------------------------------

/** The pi version pi-rs reports to extensions ("0.0.0" when it does not say, as pi does). */
export const VERSION = globalThis.__piHost?.version ?? "0.0.0";

// The name of pi's configuration folders (`~/.pi`, `<project>/.pi`).
export const CONFIG_DIR_NAME = ".pi";

function expandTilde(path) {
  if (path === "~") return homedir();
  if (path.startsWith("~/")) return homedir() + path.slice(1);
  return path;
}

/** pi's agent folder: the host's, else $PI_CODING_AGENT_DIR, else ~/.pi/agent. */
export function getAgentDir() {
  const fromHost = globalThis.__piHost?.agentDir;
  if (typeof fromHost === "string" && fromHost) return fromHost;
  const fromEnv = process.env.PI_CODING_AGENT_DIR;
  if (fromEnv) return expandTilde(fromEnv);
  return join(homedir(), CONFIG_DIR_NAME, "agent");
}

// --- Extension helpers -------------------------------------------------------------------------

/** Returns the tool as given (it exists for TypeScript's inference). */
export function defineTool(tool) {
  return tool;
}

export function isToolCallEventType(toolName, event) {
  return event.toolName === toolName;
}

const resultIs = (name) => (event) => event.toolName === name;
export const isBashToolResult = resultIs("bash");
export const isReadToolResult = resultIs("read");
export const isEditToolResult = resultIs("edit");
export const isWriteToolResult = resultIs("write");
export const isGrepToolResult = resultIs("grep");
export const isFindToolResult = resultIs("find");
export const isLsToolResult = resultIs("ls");

const mutationQueues = new Map();

function queueKey(path) {
  const absolute = resolve(path);
  try {
    return realpathSync.native(absolute);
  } catch {
    return absolute;
  }
}

/**
 * Runs `fn` after every earlier queued mutation of the same file (by real path) has finished;
 * mutations of different files run in parallel. The queue is the host process's: it orders an
 * extension's own writes, not writes by pi-rs's built-in tools.
 */
export async function withFileMutationQueue(filePath, fn) {
  const key = queueKey(filePath);
  const before = mutationQueues.get(key) ?? Promise.resolve();
  let release;
  const mine = new Promise((r) => {
    release = r;
  });
  const chained = before.then(() => mine);
  mutationQueues.set(key, chained);
  await before;
  try {
    return await fn();
  } finally {
    release();
    if (mutationQueues.get(key) === chained) mutationQueues.delete(key);
  }
}

// --- Truncation --------------------------------------------------------------------------------

export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;
const GREP_MAX_LINE_LENGTH = 500;

export function formatSize(bytes) {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

const byteLength = (text) => Buffer.byteLength(text, "utf-8");

function untouched(content, totalLines, totalBytes, maxLines, maxBytes) {
  return {
    content,
    truncated: false,
    truncatedBy: null,
    totalLines,
    totalBytes,
    outputLines: totalLines,
    outputBytes: totalBytes,
    lastLinePartial: false,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
}

/** Keeps the first lines of `content` within maxLines and maxBytes (whole lines only). */
export function truncateHead(content, options = {}) {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const totalBytes = byteLength(content);
  const lines = content.split("\n");
  const totalLines = lines.length;
  if (totalLines <= maxLines && totalBytes <= maxBytes) return untouched(content, totalLines, totalBytes, maxLines, maxBytes);
  if (byteLength(lines[0]) > maxBytes) {
    return {
      content: "",
      truncated: true,
      truncatedBy: "bytes",
      totalLines,
      totalBytes,
      outputLines: 0,
      outputBytes: 0,
      lastLinePartial: false,
      firstLineExceedsLimit: true,
      maxLines,
      maxBytes,
    };
  }
  const kept = [];
  let bytes = 0;
  let by = "lines";
  for (let i = 0; i < lines.length && i < maxLines; i++) {
    const size = byteLength(lines[i]) + (i > 0 ? 1 : 0);
    if (bytes + size > maxBytes) {
      by = "bytes";
      break;
    }
    kept.push(lines[i]);
    bytes += size;
  }
  if (kept.length >= maxLines && bytes <= maxBytes) by = "lines";
  const out = kept.join("\n");
  return {
    content: out,
    truncated: true,
    truncatedBy: by,
    totalLines,
    totalBytes,
    outputLines: kept.length,
    outputBytes: byteLength(out),
    lastLinePartial: false,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
}

/** The last `maxBytes` bytes of a string, starting on a character boundary. */
function tailBytes(text, maxBytes) {
  const buf = Buffer.from(text, "utf-8");
  if (buf.length <= maxBytes) return text;
  let start = buf.length - maxBytes;
  while (start < buf.length && (buf[start] & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString("utf-8");
}

/** Keeps the last lines of `content` within maxLines and maxBytes (a lone last line may be cut). */
export function truncateTail(content, options = {}) {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const totalBytes = byteLength(content);
  const lines = content.split("\n");
  const totalLines = lines.length;
  if (totalLines <= maxLines && totalBytes <= maxBytes) return untouched(content, totalLines, totalBytes, maxLines, maxBytes);
  const kept = [];
  let bytes = 0;
  let by = "lines";
  let partial = false;
  for (let i = lines.length - 1; i >= 0 && kept.length < maxLines; i--) {
    const size = byteLength(lines[i]) + (kept.length > 0 ? 1 : 0);
    if (bytes + size > maxBytes) {
      by = "bytes";
      if (kept.length === 0) {
        const cut = tailBytes(lines[i], maxBytes);
        kept.unshift(cut);
        bytes = byteLength(cut);
        partial = true;
      }
      break;
    }
    kept.unshift(lines[i]);
    bytes += size;
  }
  if (kept.length >= maxLines && bytes <= maxBytes) by = "lines";
  const out = kept.join("\n");
  return {
    content: out,
    truncated: true,
    truncatedBy: by,
    totalLines,
    totalBytes,
    outputLines: kept.length,
    outputBytes: byteLength(out),
    lastLinePartial: partial,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
}

export function truncateLine(line, maxChars = GREP_MAX_LINE_LENGTH) {
  if (line.length <= maxChars) return { text: line, wasTruncated: false };
  return { text: `${line.slice(0, maxChars)}... [truncated]`, wasTruncated: true };
}

// --- Messages ----------------------------------------------------------------------------------

const COMPACTION_SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const COMPACTION_SUMMARY_SUFFIX = "\n</summary>";
const BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
const BRANCH_SUMMARY_SUFFIX = "</summary>";

function bashExecutionText(message) {
  let text = `Ran \`${message.command}\`\n`;
  text += message.output ? `\`\`\`\n${message.output}\n\`\`\`` : "(no output)";
  if (message.cancelled) text += "\n\n(command cancelled)";
  else if (message.exitCode !== null && message.exitCode !== undefined && message.exitCode !== 0) {
    text += `\n\nCommand exited with code ${message.exitCode}`;
  }
  if (message.truncated && message.fullOutputPath) text += `\n\n[Output truncated. Full output: ${message.fullOutputPath}]`;
  return text;
}

const userText = (text, timestamp) => ({ role: "user", content: [{ type: "text", text }], timestamp });

/** Session messages → the messages the model sees (custom, summary and `!` messages as user turns). */
export function convertToLlm(messages) {
  const out = [];
  for (const m of messages) {
    switch (m.role) {
      case "bashExecution":
        if (!m.excludeFromContext) out.push(userText(bashExecutionText(m), m.timestamp));
        break;
      case "custom":
        out.push({ role: "user", content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content, timestamp: m.timestamp });
        break;
      case "branchSummary":
        out.push(userText(BRANCH_SUMMARY_PREFIX + m.summary + BRANCH_SUMMARY_SUFFIX, m.timestamp));
        break;
      case "compactionSummary":
        out.push(userText(COMPACTION_SUMMARY_PREFIX + m.summary + COMPACTION_SUMMARY_SUFFIX, m.timestamp));
        break;
      case "user":
      case "assistant":
      case "toolResult":
        out.push(m);
        break;
      default:
        break;
    }
  }
  return out;
}

const TOOL_RESULT_MAX_CHARS = 2000;

function clipForSummary(text) {
  if (text.length <= TOOL_RESULT_MAX_CHARS) return text;
  return `${text.slice(0, TOOL_RESULT_MAX_CHARS)}\n\n[... ${text.length - TOOL_RESULT_MAX_CHARS} more characters truncated]`;
}

const textOf = (content) =>
  content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("");

/** LLM messages as the "[User]: …" transcript pi's summaries are made from. */
export function serializeConversation(messages) {
  const parts = [];
  for (const m of messages) {
    if (m.role === "user") {
      const text = typeof m.content === "string" ? m.content : textOf(m.content);
      if (text) parts.push(`[User]: ${text}`);
    } else if (m.role === "assistant") {
      const texts = [];
      const thoughts = [];
      const calls = [];
      for (const block of m.content) {
        if (block.type === "text") texts.push(block.text);
        else if (block.type === "thinking") thoughts.push(block.thinking);
        else if (block.type === "toolCall") {
          const args = Object.entries(block.arguments)
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(", ");
          calls.push(`${block.name}(${args})`);
        }
      }
      if (thoughts.length > 0) parts.push(`[Assistant thinking]: ${thoughts.join("\n")}`);
      if (texts.length > 0) parts.push(`[Assistant]: ${texts.join("\n")}`);
      if (calls.length > 0) parts.push(`[Assistant tool calls]: ${calls.join("; ")}`);
    } else if (m.role === "toolResult") {
      const text = textOf(m.content);
      if (text) parts.push(`[Tool result]: ${clipForSummary(text)}`);
    }
  }
  return parts.join("\n\n");
}

// --- Frontmatter -------------------------------------------------------------------------------

/** A YAML scalar: quoted strings, numbers, booleans, null, inline [a, b] lists, else the text. */
function yamlScalar(raw) {
  const text = raw.trim();
  if (text === "" || text === "~" || text === "null") return null;
  if (text === "true") return true;
  if (text === "false") return false;
  if (/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:e[+-]?\d+)?$/i.test(text)) return Number(text);
  if (text.startsWith('"') && text.endsWith('"') && text.length >= 2) {
    try {
      return JSON.parse(text);
    } catch {
      return text.slice(1, -1);
    }
  }
  if (text.startsWith("'") && text.endsWith("'") && text.length >= 2) return text.slice(1, -1).replace(/''/g, "'");
  if (text.startsWith("[") && text.endsWith("]")) {
    const inner = text.slice(1, -1).trim();
    return inner === "" ? [] : inner.split(",").map((item) => yamlScalar(item));
  }
  return text.replace(/\s+#.*$/, "");
}

const indentOf = (line) => line.length - line.trimStart().length;

/**
 * Parses the block-style YAML of a frontmatter: nested `key: value` maps by indentation,
 * `- item` lists, `|` / `>` block text and the scalars of yamlScalar.
 */
function parseYamlBlock(lines, start, indent) {
  let i = start;
  while (i < lines.length && lines[i].trim() === "") i++;
  if (i < lines.length && lines[i].trimStart().startsWith("- ")) {
    const list = [];
    while (i < lines.length) {
      const line = lines[i];
      if (line.trim() === "" || line.trim().startsWith("#")) {
        i++;
        continue;
      }
      if (indentOf(line) < indent || !line.trimStart().startsWith("- ")) break;
      list.push(yamlScalar(line.trimStart().slice(2)));
      i++;
    }
    return { value: list, next: i };
  }
  const map = {};
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === "" || line.trim().startsWith("#")) {
      i++;
      continue;
    }
    const at = indentOf(line);
    if (at < indent) break;
    const m = line.trim().match(/^("[^"]*"|'[^']*'|[^:]+?)\s*:(?:\s+(.*))?$/);
    if (!m) {
      i++;
      continue;
    }
    const key = String(yamlScalar(m[1]));
    const rest = m[2] ?? "";
    i++;
    if (rest === "|" || rest === ">" || rest === "|-" || rest === ">-") {
      const body = [];
      while (i < lines.length && (lines[i].trim() === "" || indentOf(lines[i]) > at)) body.push(lines[i++]);
      const strip = Math.min(...body.filter((l) => l.trim() !== "").map(indentOf));
      const trimmed = body.map((l) => l.slice(Number.isFinite(strip) ? strip : 0));
      while (trimmed.length > 0 && trimmed[trimmed.length - 1].trim() === "") trimmed.pop();
      let text = rest.startsWith("|") ? trimmed.join("\n") : trimmed.join(" ").replace(/\s+\n?/g, " ");
      if (!rest.endsWith("-")) text += "\n";
      map[key] = text;
    } else if (rest.trim() === "") {
      let j = i;
      while (j < lines.length && lines[j].trim() === "") j++;
      const child = j < lines.length ? lines[j] : "";
      const nested = child && (indentOf(child) > at || (indentOf(child) === at && child.trimStart().startsWith("- ")));
      if (nested) {
        const parsed = parseYamlBlock(lines, j, indentOf(child));
        map[key] = parsed.value;
        i = parsed.next;
      } else {
        map[key] = null;
      }
    } else {
      map[key] = yamlScalar(rest);
    }
  }
  return { value: map, next: i };
}

/** Splits `---` YAML frontmatter from a markdown body: { frontmatter, body }. */
export function parseFrontmatter(content) {
  const text = content.replace(/\r\n/g, "\n").replace(/\r/g, "\n");
  if (!text.startsWith("---")) return { frontmatter: {}, body: text };
  const end = text.indexOf("\n---", 3);
  if (end === -1) return { frontmatter: {}, body: text };
  const yaml = text.slice(4, end);
  const body = text.slice(end + 4).trim();
  if (!yaml) return { frontmatter: {}, body };
  return { frontmatter: parseYamlBlock(yaml.split("\n"), 0, 0).value ?? {}, body };
}

export function stripFrontmatter(content) {
  return parseFrontmatter(content).body;
}

// --- Theme adapters ----------------------------------------------------------------------------

function currentTheme() {
  return hostMember("theme", "the pi-coding-agent theme helpers")();
}

const fg = (color) => (text) => currentTheme().fg(color, text);

const LANGUAGES = {
  ts: "typescript",
  tsx: "typescript",
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  py: "python",
  rb: "ruby",
  rs: "rust",
  go: "go",
  java: "java",
  kt: "kotlin",
  swift: "swift",
  c: "c",
  h: "c",
  cpp: "cpp",
  cc: "cpp",
  cxx: "cpp",
  hpp: "cpp",
  cs: "csharp",
  php: "php",
  sh: "bash",
  bash: "bash",
  zsh: "bash",
  fish: "fish",
  ps1: "powershell",
  sql: "sql",
  html: "html",
  htm: "html",
  css: "css",
  scss: "scss",
  sass: "sass",
  less: "less",
  json: "json",
  yaml: "yaml",
  yml: "yaml",
  toml: "toml",
  xml: "xml",
  md: "markdown",
  markdown: "markdown",
  dockerfile: "dockerfile",
  makefile: "makefile",
  cmake: "cmake",
  lua: "lua",
  perl: "perl",
  r: "r",
  scala: "scala",
  clj: "clojure",
  ex: "elixir",
  exs: "elixir",
  erl: "erlang",
  hs: "haskell",
  ml: "ocaml",
  vim: "vim",
  graphql: "graphql",
  proto: "protobuf",
  tf: "hcl",
  hcl: "hcl",
};

/** The highlighter language for a file name's extension, or undefined. */
export function getLanguageFromPath(filePath) {
  const ext = filePath.split(".").pop()?.toLowerCase();
  return ext ? LANGUAGES[ext] : undefined;
}

/**
 * Code as themed lines: pi-rs's highlighter when the host offers one
 * (`__piHost.highlightCode(code, lang)` → lines), else every line in the code-block color.
 */
export function highlightCode(code, lang) {
  const highlight = globalThis.__piHost?.highlightCode;
  if (typeof highlight === "function" && lang) {
    const lines = highlight(code, lang);
    if (Array.isArray(lines)) return lines;
  }
  return code.split("\n").map((line) => currentTheme().fg("mdCodeBlock", line));
}

export function getMarkdownTheme() {
  return {
    heading: fg("mdHeading"),
    link: fg("mdLink"),
    linkUrl: fg("mdLinkUrl"),
    code: fg("mdCode"),
    codeBlock: fg("mdCodeBlock"),
    codeBlockBorder: fg("mdCodeBlockBorder"),
    quote: fg("mdQuote"),
    quoteBorder: fg("mdQuoteBorder"),
    hr: fg("mdHr"),
    listBullet: fg("mdListBullet"),
    bold: (text) => currentTheme().bold(text),
    italic: (text) => currentTheme().italic(text),
    underline: (text) => currentTheme().underline(text),
    strikethrough: (text) => currentTheme().strikethrough(text),
    highlightCode: (code, lang) => highlightCode(code, lang),
  };
}

export function getSelectListTheme() {
  return {
    selectedPrefix: fg("accent"),
    selectedText: fg("accent"),
    description: fg("muted"),
    scrollInfo: fg("muted"),
    noMatch: fg("muted"),
  };
}

export function getSettingsListTheme() {
  return {
    label: (text, selected) => (selected ? currentTheme().fg("accent", text) : text),
    value: (text, selected) => currentTheme().fg(selected ? "accent" : "muted", text),
    description: fg("dim"),
    cursor: currentTheme().fg("accent", "→ "),
    hint: fg("dim"),
  };
}

// --- Key hints ---------------------------------------------------------------------------------

/** The keys bound to an action, joined with "/" (e.g. "escape/ctrl+c"). */
export function keyText(action) {
  return getKeybindings().getKeys(action).join("/");
}

export function keyHint(action, description) {
  const theme = currentTheme();
  return theme.fg("dim", keyText(action)) + theme.fg("muted", ` ${description}`);
}

export function rawKeyHint(key, description) {
  const theme = currentTheme();
  return theme.fg("dim", key) + theme.fg("muted", ` ${description}`);
}

// --- Components --------------------------------------------------------------------------------

/** A rule across the full width ("─", at least one), in the theme's border color by default. */
export class DynamicBorder {
  constructor(color = (text) => currentTheme().fg("border", text)) {
    this.color = color;
  }

  invalidate() {}

  render(width) {
    return [this.color("─".repeat(Math.max(1, width)))];
  }
}

/** A spinner with a message between two rules; Escape cancels it (its `signal` aborts). */
export class BorderedLoader extends Container {
  #loader;
  #controller;

  constructor(tui, theme, message, options) {
    super();
    this.cancellable = options?.cancellable ?? true;
    const border = (text) => theme.fg("border", text);
    const accent = (text) => theme.fg("accent", text);
    const muted = (text) => theme.fg("muted", text);
    this.addChild(new DynamicBorder(border));
    if (this.cancellable) {
      this.#loader = new CancellableLoader(tui, accent, muted, message);
    } else {
      this.#controller = new AbortController();
      this.#loader = new Loader(tui, accent, muted, message);
    }
    this.addChild(this.#loader);
    if (this.cancellable) {
      this.addChild(new Spacer(1));
      this.addChild(new Text(theme.fg("dim", keyText("tui.select.cancel")) + theme.fg("muted", " cancel"), 1, 0));
    }
    this.addChild(new Spacer(1));
    this.addChild(new DynamicBorder(border));
  }

  get signal() {
    if (this.cancellable) return this.#loader.signal;
    return this.#controller?.signal ?? new AbortController().signal;
  }

  set onAbort(fn) {
    if (this.cancellable) this.#loader.onAbort = fn;
  }

  handleInput(data) {
    if (this.cancellable) this.#loader.handleInput(data);
  }

  dispose() {
    if (typeof this.#loader.dispose === "function") this.#loader.dispose();
    else this.#loader.stop();
  }
}

/**
 * The prompt editor extensions subclass for `ctx.ui.setEditorComponent`: pi's app keys
 * (interrupt, exit on an empty editor, paste image, registered actions, extension shortcuts)
 * before the Editor's own handling.
 */
export class CustomEditor extends Editor {
  actionHandlers = new Map();
  onEscape;
  onCtrlD;
  onPasteImage;
  onExtensionShortcut;

  constructor(tui, theme, keybindings, options) {
    super(tui, theme, options);
    this.keybindings = keybindings;
  }

  onAction(action, handler) {
    this.actionHandlers.set(action, handler);
  }

  handleInput(data) {
    if (this.onExtensionShortcut?.(data)) return;
    const kb = this.keybindings;
    if (kb.matches(data, "app.clipboard.pasteImage")) {
      this.onPasteImage?.();
      return;
    }
    if (kb.matches(data, "app.interrupt")) {
      const handler = this.isShowingAutocomplete() ? undefined : (this.onEscape ?? this.actionHandlers.get("app.interrupt"));
      if (handler) handler();
      else super.handleInput(data);
      return;
    }
    if (kb.matches(data, "app.exit") && this.getText().length === 0) {
      (this.onCtrlD ?? this.actionHandlers.get("app.exit"))?.();
      return;
    }
    for (const [action, handler] of this.actionHandlers) {
      if (action !== "app.interrupt" && action !== "app.exit" && kb.matches(data, action)) {
        handler();
        return;
      }
    }
    super.handleInput(data);
  }
}

// --- Built-in tools ----------------------------------------------------------------------------

/**
 * pi's built-in tool `name` as an extension-usable definition: name, label, description and
 * parameters as pi-rs declares them. `execute` runs pi-rs's tool in `cwd`, unless pi's options
 * ask to run it another way: `operations` (pi's ReadOperations, WriteOperations,
 * EditOperations, BashOperations: the file or shell access the tool goes through, e.g. over
 * ssh), or for bash a `spawnHook` or `commandPrefix`. Then the tool's logic runs here and
 * calls those operations (local ones where the option gives none). grep, find and ls run only
 * as pi-rs's tools: their `operations` are refused rather than ignored.
 */
function builtInTool(name, cwd, options) {
  const definition = hostMember("tools.definition", `create${name[0].toUpperCase()}${name.slice(1)}Tool`)(name);
  if (!definition) throw new Error(`pi-rs has no built-in tool named ${name}`);
  const custom = customToolRunner(name, cwd, options ?? {});
  if (custom) return { ...definition, execute: custom };
  const run = hostMember("tools.execute", `the built-in ${name} tool`);
  return {
    ...definition,
    execute: (toolCallId, params, signal, onUpdate) => run(name, cwd, params, signal, onUpdate, toolCallId),
  };
}

/** `execute` for a built-in tool with custom operations, or undefined to use pi-rs's tool. */
function customToolRunner(name, cwd, options) {
  const ops = options.operations;
  switch (name) {
    case "bash":
      if (!ops && !options.spawnHook && !options.commandPrefix) return undefined;
      return (_id, params, signal, onUpdate) => runBash(cwd, options, params, signal, onUpdate);
    case "read":
      return ops ? (_id, params) => runRead(cwd, ops, params) : undefined;
    case "write":
      return ops ? (_id, params) => runWrite(cwd, ops, params) : undefined;
    case "edit":
      return ops ? (_id, params) => runEdit(cwd, ops, params) : undefined;
    default:
      for (const option of ["operations", "spawnHook", "commandPrefix"]) {
        if (options[option] !== undefined) {
          throw new Error(`pi-rs cannot run its built-in ${name} tool with a custom "${option}" option`);
        }
      }
      return undefined;
  }
}

/** A tool path as pi resolves it: `~` is the home folder, relative paths start at `cwd`. */
function toolPath(cwd, path) {
  const text = String(path ?? "").replace(/^@/, "");
  if (text === "~") return homedir();
  if (text.startsWith("~/")) return join(homedir(), text.slice(2));
  return resolve(cwd, text);
}

const textResult = (text, details) => ({ content: [{ type: "text", text }], details });

/** pi's local BashOperations: the command in `sh -c` (or $SHELL-independent bash) in its own process group. */
export function createLocalBashOperations(options = {}) {
  return {
    exec: (command, cwd, { onData, signal, timeout, env }) =>
      new Promise((resolvePromise, reject) => {
        const shell = options.shellPath ?? (existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh");
        const child = spawn(shell, ["-c", command], {
          cwd,
          env: env ?? process.env,
          stdio: ["ignore", "pipe", "pipe"],
          detached: true,
        });
        let timedOut = false;
        const kill = () => {
          try {
            process.kill(-child.pid, "SIGKILL");
          } catch {
            child.kill("SIGKILL");
          }
        };
        const timer = timeout > 0 ? setTimeout(() => ((timedOut = true), kill()), timeout * 1000) : undefined;
        const onAbort = () => kill();
        if (signal?.aborted) onAbort();
        signal?.addEventListener("abort", onAbort, { once: true });
        child.stdout.on("data", onData);
        child.stderr.on("data", onData);
        child.on("error", (err) => {
          if (timer) clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          reject(err);
        });
        child.on("close", (code) => {
          if (timer) clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          if (signal?.aborted) reject(new Error("aborted"));
          else if (timedOut) reject(new Error(`timeout:${timeout}`));
          else resolvePromise({ exitCode: code });
        });
      }),
  };
}

/** `text`, a blank line and the status; just the status when there is no text. */
const withStatus = (text, status) => (text ? `${text}\n\n${status}` : status);

/** pi's bash tool over BashOperations, with its spawnHook / commandPrefix options. */
async function runBash(cwd, options, params, signal, onUpdate) {
  let command = String(params.command ?? "");
  if (options.commandPrefix) command = `${options.commandPrefix}\n${command}`;
  let spawnContext = { command, cwd, env: { ...process.env } };
  if (options.spawnHook) spawnContext = { ...spawnContext, ...options.spawnHook(spawnContext) };
  const ops = options.operations ?? createLocalBashOperations();
  const chunks = [];
  const current = () => Buffer.concat(chunks).toString("utf-8").replace(/\r/g, "");
  let outcome;
  try {
    const done = await ops.exec(spawnContext.command, spawnContext.cwd, {
      onData: (data) => {
        chunks.push(Buffer.isBuffer(data) ? data : Buffer.from(String(data)));
        onUpdate?.(textResult(truncateTail(current()).content));
      },
      signal,
      timeout: params.timeout,
      env: spawnContext.env,
    });
    outcome = { exitCode: done?.exitCode ?? null };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const text = truncateTail(current()).content;
    if (message === "aborted" || signal?.aborted) throw new Error(withStatus(text, "Command aborted"));
    if (message.startsWith("timeout:")) {
      throw new Error(withStatus(text, `Command timed out after ${message.slice(8)} seconds`));
    }
    throw err;
  }
  const truncation = truncateTail(current());
  let text = truncation.content || "(no output)";
  let details;
  if (truncation.truncated) {
    const start = truncation.totalLines - truncation.outputLines + 1;
    text += `\n\n[Showing lines ${start}-${truncation.totalLines} of ${truncation.totalLines}]`;
    details = { truncation };
  }
  if (outcome.exitCode !== 0 && outcome.exitCode !== null) {
    throw new Error(withStatus(text, `Command exited with code ${outcome.exitCode}`));
  }
  return textResult(text, details);
}

const IMAGE_TYPES = { ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp" };

/** pi's read tool over ReadOperations (readFile, access, detectImageMimeType). */
async function runRead(cwd, ops, params) {
  const absolute = toolPath(cwd, params.path);
  await ops.access?.(absolute);
  const mime = ops.detectImageMimeType
    ? await ops.detectImageMimeType(absolute)
    : IMAGE_TYPES[absolute.slice(absolute.lastIndexOf(".")).toLowerCase()];
  const buffer = await ops.readFile(absolute);
  if (mime) {
    return {
      content: [
        { type: "text", text: `Read image file [${mime}]` },
        { type: "image", data: Buffer.from(buffer).toString("base64"), mimeType: mime },
      ],
      details: undefined,
    };
  }
  const lines = Buffer.from(buffer).toString("utf-8").split("\n");
  const start = params.offset ? Math.max(0, params.offset - 1) : 0;
  if (start >= lines.length) {
    throw new Error(`Offset ${params.offset} is beyond end of file (${lines.length} lines total)`);
  }
  const end = params.limit !== undefined ? Math.min(start + params.limit, lines.length) : lines.length;
  const truncation = truncateHead(lines.slice(start, end).join("\n"));
  if (truncation.firstLineExceedsLimit) {
    return textResult(
      `[Line ${start + 1} is ${formatSize(byteLength(lines[start]))}, exceeds ${formatSize(DEFAULT_MAX_BYTES)} limit. Use bash: sed -n '${start + 1}p' ${params.path} | head -c ${DEFAULT_MAX_BYTES}]`,
      { truncation },
    );
  }
  let text = truncation.content;
  const shownEnd = start + truncation.outputLines;
  if (truncation.truncated) {
    text += `\n\n[Showing lines ${start + 1}-${shownEnd} of ${lines.length}. Use offset=${shownEnd + 1} to continue.]`;
    return textResult(text, { truncation });
  }
  if (end < lines.length) {
    text += `\n\n[${lines.length - end} more lines in file. Use offset=${end + 1} to continue.]`;
  }
  return textResult(text, undefined);
}

/** pi's write tool over WriteOperations (writeFile, mkdir). */
async function runWrite(cwd, ops, params) {
  const absolute = toolPath(cwd, params.path);
  const content = String(params.content ?? "");
  await withFileMutationQueue(absolute, async () => {
    await ops.mkdir?.(dirname(absolute));
    await ops.writeFile(absolute, content);
  });
  return textResult(`Successfully wrote to ${params.path}`, undefined);
}

/**
 * pi's edit tool over EditOperations (readFile, writeFile, access): every `oldText` must occur
 * exactly once in the original file; the replacements are applied together. Differs from
 * pi-rs's own edit: no fuzzy matching of whitespace or quotes, and no diff in the details.
 */
async function runEdit(cwd, ops, params) {
  const absolute = toolPath(cwd, params.path);
  const edits = Array.isArray(params.edits)
    ? params.edits
    : params.oldText !== undefined
      ? [{ oldText: params.oldText, newText: params.newText }]
      : [];
  if (edits.length === 0) throw new Error("No edits given");
  return withFileMutationQueue(absolute, async () => {
    try {
      await ops.access?.(absolute);
    } catch {
      throw new Error(`File not found: ${params.path}`);
    }
    const original = Buffer.from(await ops.readFile(absolute)).toString("utf-8");
    const places = edits.map((edit, index) => {
      const oldText = String(edit.oldText ?? "");
      const at = oldText ? original.indexOf(oldText) : -1;
      if (at < 0) {
        throw new Error(`Could not find edits[${index}] in ${params.path}. The oldText must match exactly including all whitespace and newlines.`);
      }
      if (original.indexOf(oldText, at + 1) >= 0) {
        throw new Error(`Found multiple occurrences of edits[${index}] in ${params.path}. Each oldText must be unique. Please provide more context to make it unique.`);
      }
      return { at, end: at + oldText.length, newText: String(edit.newText ?? "") };
    });
    places.sort((a, b) => a.at - b.at);
    for (let i = 1; i < places.length; i++) {
      if (places[i].at < places[i - 1].end) throw new Error(`edits overlap in ${params.path}`);
    }
    let updated = "";
    let last = 0;
    for (const place of places) {
      updated += original.slice(last, place.at) + place.newText;
      last = place.end;
    }
    updated += original.slice(last);
    await ops.writeFile(absolute, updated);
    return textResult(`Successfully replaced ${edits.length} block(s) in ${params.path}.`, undefined);
  });
}

export const createReadTool = (cwd, options) => builtInTool("read", cwd, options);
export const createBashTool = (cwd, options) => builtInTool("bash", cwd, options);
export const createEditTool = (cwd, options) => builtInTool("edit", cwd, options);
export const createWriteTool = (cwd, options) => builtInTool("write", cwd, options);
export const createGrepTool = (cwd, options) => builtInTool("grep", cwd, options);
export const createFindTool = (cwd, options) => builtInTool("find", cwd, options);
export const createLsTool = (cwd, options) => builtInTool("ls", cwd, options);
export const createReadToolDefinition = createReadTool;
export const createBashToolDefinition = createBashTool;
export const createEditToolDefinition = createEditTool;
export const createWriteToolDefinition = createWriteTool;
export const createGrepToolDefinition = createGrepTool;
export const createFindToolDefinition = createFindTool;
export const createLsToolDefinition = createLsTool;

export function createCodingTools(cwd, options) {
  return ["read", "bash", "edit", "write"].map((name) => builtInTool(name, cwd, options?.[name]));
}

export function createReadOnlyTools(cwd, options) {
  return ["read", "grep", "find", "ls"].map((name) => builtInTool(name, cwd, options?.[name]));
}

// A read call's line range as pi 1.6 shows it after the path: `:5`, `:5-14`, or nothing
// when neither is given or one is not a number (numeric strings count).
export function formatReadLineRange(offset, limit) {
  const number = (v) => {
    const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
    return typeof n === "number" && Number.isFinite(n) ? n : undefined;
  };
  if (offset == null && limit == null) return "";
  const start = offset == null ? 1 : number(offset);
  if (start === undefined) return "";
  if (limit == null) return `:${start}`;
  const count = number(limit);
  if (count === undefined) return "";
  const end = start + count - 1;
  return end ? `:${start}-${end}` : `:${start}`;
}
