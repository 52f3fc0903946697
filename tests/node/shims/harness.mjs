// Shared helpers for the node checks of pi-rs's extension modules (tests/it/node_modules_shims.rs).
// Each check script imports our module and the real package from the reference pi install,
// runs the same inputs through both and reports every difference; it exits 1 on any.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const shims = process.env.PI_SHIMS_DIR;
const reference = process.env.PI_REFERENCE_NODE_MODULES;
if (!shims || !reference) {
  console.error("set PI_SHIMS_DIR (src/extensions/node/modules) and PI_REFERENCE_NODE_MODULES");
  process.exit(2);
}

/** Imports one of our modules by file name. */
export function ours(file) {
  return import(pathToFileURL(join(shims, file)).href);
}

/** Imports a file of the reference install, relative to its node_modules. */
export function real(path) {
  return import(pathToFileURL(join(reference, path)).href);
}

const failures = [];
let checks = 0;

/** Records one comparison; `a` and `b` are compared as JSON texts. */
export function same(name, a, b) {
  checks++;
  const left = JSON.stringify(a);
  const right = JSON.stringify(b);
  if (left !== right) failures.push(`${name}:\n  ours: ${left}\n  real: ${right}`);
}

/** Records one assertion. */
export function check(name, ok, detail = "") {
  checks++;
  if (!ok) failures.push(`${name}${detail ? `: ${detail}` : ""}`);
}

/** Runs `fn` on both sides, comparing results (or thrown-ness). */
export function both(name, fn, a, b) {
  let left;
  let right;
  try {
    left = { value: fn(a) };
  } catch (e) {
    left = { threw: true };
  }
  try {
    right = { value: fn(b) };
  } catch (e) {
    right = { threw: true };
  }
  same(name, left, right);
}

/** Prints the result and sets the exit code. */
export function finish(label) {
  if (failures.length > 0) {
    // stderr: the Rust test shows it when the script fails.
    console.error(`${label}: ${failures.length} of ${checks} checks differ`);
    for (const f of failures) console.error(f);
    process.exit(1);
  }
  console.log(`${label}: all ${checks} checks pass`);
}
