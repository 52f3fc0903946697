// Regenerates src/ai/catalog.json, pi-rs's built-in providers and models, from a pi release.
//
//   node scripts/gen-catalog.mjs            # the version pi-rs follows (see PI_VERSION below)
//   node scripts/gen-catalog.mjs 0.73.1     # another release (installed with npm first)
//   node scripts/gen-catalog.mjs /path/to/node_modules/@earendil-works/pi-coding-agent
//
// Releases from 1.0 on are published as @earendil-works/*, older ones as @mariozechner/*;
// both layouts are read. Run it with node 22 or newer (pi 1.x imports JSON modules).
//
// The release is read from the reference install (~/.cache/pi-reference/<version>, the one
// tests/support/reference-pi.sh uses) when present, otherwise `npm install`ed there. What is
// taken, all as plain data:
//   - pi-ai's models.generated.js: every model of every provider, field for field;
//   - pi-ai's env-api-keys.js: the environment variables that hold each provider's key;
//   - the provider display names: pi-ai's provider definitions (1.x), pi-coding-agent's
//     provider-display-names.js (0.x);
//   - pi-coding-agent's default model per provider.
// The file is rewritten in place; commit it. It is data only, no code from pi is copied.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PI_VERSION = "1.6.0";
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outFile = path.join(repo, "src/ai/catalog.json");

/** The pi-coding-agent package directory for a version or a path argument. */
function codingAgentDir(arg) {
  if (arg && (arg.includes("/") || arg.includes(path.sep))) return path.resolve(arg);
  const version = arg ?? PI_VERSION;
  const cache = process.env.PI_REFERENCE_DIR ?? path.join(os.userInfo().homedir, ".cache/pi-reference");
  const root = path.join(cache, version);
  const scope = Number.parseInt(version, 10) >= 1 ? "@earendil-works" : "@mariozechner";
  const dir = path.join(root, "node_modules", scope, "pi-coding-agent");
  if (!existsSync(dir)) {
    mkdirSync(root, { recursive: true });
    console.error(`installing ${scope}/pi-coding-agent@${version} into ${root}`);
    execFileSync("npm", ["install", "--silent", "--no-audit", "--no-fund", `${scope}/pi-coding-agent@${version}`], {
      cwd: root,
      stdio: ["ignore", "ignore", "inherit"],
    });
  }
  return dir;
}

const agentDir = codingAgentDir(process.argv[2]);
// pi-ai is a dependency of pi-coding-agent: nested, or hoisted next to it.
const aiDir = [
  path.join(agentDir, "node_modules/@earendil-works/pi-ai"),
  path.join(agentDir, "node_modules/@mariozechner/pi-ai"),
  path.join(agentDir, "../pi-ai"),
].find((d) => existsSync(path.join(d, "dist/models.generated.js")));
if (!aiDir) throw new Error(`pi-ai not found next to ${agentDir}`);
const load = (dir, file) => import(pathToFileURL(path.join(dir, "dist", file)).href);
const readVersion = (dir) => JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).version;

const { MODELS } = await load(aiDir, "models.generated.js");
const { defaultModelPerProvider } = await load(agentDir, "core/model-resolver.js");

/** Provider id -> display name. */
async function displayNames() {
  // 0.x: a table in pi-coding-agent.
  if (existsSync(path.join(agentDir, "dist/core/provider-display-names.js"))) {
    return (await load(agentDir, "core/provider-display-names.js")).BUILT_IN_PROVIDER_DISPLAY_NAMES;
  }
  // 1.x: each provider definition of pi-ai carries its name.
  const { builtinProviders } = await load(aiDir, "providers/all.js");
  return Object.fromEntries(builtinProviders().map((p) => [p.id, p.name]));
}
const names = await displayNames();

// `findEnvKeys` returns the variables of a provider that are set; with every variable set
// it returns all of them, in pi's priority order. 1.x takes the environment as a second
// argument; 0.x reads process.env, which is swapped for the time of the calls and put back
// at once (node itself reads variables at exit).
const { findEnvKeys } = await load(aiDir, "env-api-keys.js");
const everySet = new Proxy({}, { get: (_, key) => (typeof key === "string" ? "set" : undefined) });
const realEnv = process.env;
process.env = everySet;
const envVars = Object.fromEntries(Object.keys(MODELS).map((id) => [id, findEnvKeys(id, everySet) ?? []]));
process.env = realEnv;

const providers = Object.entries(MODELS).map(([id, models]) => ({
  id,
  name: names[id] ?? null,
  envVars: envVars[id],
  defaultModel: defaultModelPerProvider[id] ?? null,
  models: Object.values(models),
}));

// One provider header per line and one model per line: small diffs, fast to parse.
const lines = [];
lines.push("{");
lines.push(` "piVersion": ${JSON.stringify(readVersion(agentDir))},`);
lines.push(` "piAiVersion": ${JSON.stringify(readVersion(aiDir))},`);
lines.push(` "generatedBy": "node scripts/gen-catalog.mjs",`);
lines.push(` "defaultModelOrder": ${JSON.stringify(Object.keys(defaultModelPerProvider))},`);
lines.push(` "providers": [`);
providers.forEach((p, i) => {
  const { models, ...header } = p;
  const head = JSON.stringify(header);
  lines.push(`  ${head.slice(0, -1)}, "models": [`);
  models.forEach((m, j) => lines.push(`   ${JSON.stringify(m)}${j + 1 < models.length ? "," : ""}`));
  lines.push(`  ]}${i + 1 < providers.length ? "," : ""}`);
});
lines.push(" ]");
lines.push("}");
writeFileSync(outFile, lines.join("\n") + "\n");
const total = providers.reduce((n, p) => n + p.models.length, 0);
console.error(`wrote ${path.relative(repo, outFile)}: ${providers.length} providers, ${total} models`);
