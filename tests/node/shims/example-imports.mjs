// Every runtime import pi's example extensions (and docs/extensions.md, docs/tui.md) make from
// the modules pi provides must exist in ours: a missing export fails the extension at load.
// Type-only names (`import type`, `type X`) vanish when transpiled and are skipped. Prints the
// examples whose imports are all present; fails if one of the priority examples is not, or if
// a name outside the documented gaps is missing. Imports are loaded without `__piHost`, as an
// extension's top level may run before it calls into pi.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { check, finish, ours, same } from "./harness.mjs";

const reference = process.env.PI_REFERENCE_NODE_MODULES;
const pkg = join(reference, "@mariozechner/pi-coding-agent");
const modules = {
  typebox: await ours("typebox.mjs"),
  "@sinclair/typebox": await ours("typebox.mjs"),
  "@mariozechner/pi-ai": await ours("pi-ai.mjs"),
  "@mariozechner/pi-tui": await ours("pi-tui.mjs"),
  "@mariozechner/pi-coding-agent": await ours("pi-coding-agent.mjs"),
};

/** Names documented as not provided (docs/extensions.md, "Modules pi provides to extensions"). */
const KNOWN_GAPS = new Set([
  "@mariozechner/pi-coding-agent SessionManager",
  "@mariozechner/pi-coding-agent createLocalBashOperations",
]);

/** Interfaces docs/extensions.md imports without `type`; TypeScript elides them. */
const TYPE_NAMES = new Set(["Component"]);

const PRIORITY = ["permission-gate.ts", "protected-paths.ts", "hello.ts", "tool-override.ts", "todo.ts", "preset.ts", "pirate.ts", "commands.ts", "dynamic-tools.ts", "custom-compaction.ts", "plan-mode/index.ts", "confirm-destructive.ts", "question.ts", "status-line.ts"];

const files = [];
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (/\.(ts|js|mjs)$/.test(entry.name)) files.push(path);
  }
};
walk(join(pkg, "examples/extensions"));
files.push(join(pkg, "docs/extensions.md"), join(pkg, "docs/tui.md"));

const IMPORT = /import\s+(type\s+)?\{([^}]*)\}\s*from\s*["']([^"']+)["']/g;
const byFile = new Map();
for (const file of files) {
  const name = relative(join(pkg, "examples/extensions"), file);
  const missing = [];
  for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
    const [, typeOnly, names, specifier] = m;
    const module = modules[specifier];
    if (!module || typeOnly) continue;
    for (let item of names.split(",")) {
      item = item.trim();
      if (!item || item.startsWith("type ") || item.startsWith("//")) continue;
      const exported = item.split(/\s+as\s+/)[0].trim();
      if (!/^[A-Za-z_$][\w$]*$/.test(exported)) continue;
      if (!TYPE_NAMES.has(exported) && !(exported in module)) missing.push(`${specifier} ${exported}`);
    }
  }
  byFile.set(name, missing);
}

const examples = [...byFile].filter(([name]) => !name.startsWith(".."));
const complete = examples.filter(([, missing]) => missing.length === 0);
console.log(`${complete.length} of ${examples.length} example files have every runtime import they make from pi's modules`);
for (const [name, missing] of examples) if (missing.length > 0) console.log(`  ${name}: missing ${missing.join(", ")}`);
for (const name of PRIORITY) same(`priority example ${name} imports`, byFile.get(name), []);
const unexpected = [...byFile.values()].flat().filter((m) => !KNOWN_GAPS.has(m));
same("missing names are the documented gaps", [...new Set(unexpected)], []);
// No extras: each module exports only names the real package exports (and typebox's `Type`
// only builders typebox's has), so an extension that loads here loads in pi too.
const realModules = {
  typebox: await import(join(reference, "typebox/build/index.mjs")),
  "@mariozechner/pi-ai": await import(join(reference, "@mariozechner/pi-ai/dist/index.js")),
  "@mariozechner/pi-tui": await import(join(reference, "@mariozechner/pi-tui/dist/index.js")),
  "@mariozechner/pi-coding-agent": await import(join(reference, "@mariozechner/pi-coding-agent/dist/index.js")),
};
// Names pi 1.6 added to these packages (the modules serve extensions of both versions;
// this check runs against 0.73.1's packages).
const pi16Names = new Set(["uuidv7", "CONFIG_DIR_NAME", "formatReadLineRange", "renderFakeCursor"]);
for (const [specifier, realModule] of Object.entries(realModules)) {
  same(
    `${specifier} exports nothing pi's lacks`,
    Object.keys(modules[specifier]).filter((name) => !(name in realModule) && !pi16Names.has(name)),
    [],
  );
}
same("Type has no builder typebox lacks", Object.keys(modules.typebox.Type).filter((name) => !(name in realModules.typebox.Type)), []);
check("examples were found", examples.length > 60, String(examples.length));

finish("example imports");
