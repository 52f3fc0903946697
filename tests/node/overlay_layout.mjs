// Places overlays with pi-tui's own TUI.resolveOverlayLayout (reference install) for every
// case read from stdin ({options, height, width, rows} per line) and prints one JSON result
// line per case: {width, row, col, maxHeight}. tests/it/overlay_layout.rs compares them
// with pi-rs's resolve_layout.
import { createInterface } from "node:readline";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const reference = process.env.PI_REFERENCE_NODE_MODULES;
const { TUI } = await import(pathToFileURL(join(reference, "@mariozechner/pi-tui/dist/tui.js")).href);
const tui = Object.create(TUI.prototype);
const out = [];
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const c = JSON.parse(line);
  const r = tui.resolveOverlayLayout(c.options, c.height, c.width, c.rows);
  out.push(JSON.stringify({ width: r.width, row: r.row, col: r.col, maxHeight: r.maxHeight ?? null }));
}
process.stdout.write(`${out.join("\n")}\n`);
