// Module loader hooks of the pi-rs node host (registered by host.mjs with
// module.register; they run on node's loader thread).
//
// - pi's own packages always resolve to the modules pi-rs ships (modules/*.mjs next to
//   this file), whatever the extension's node_modules holds — pi aliases them the same
//   way: pi-coding-agent, pi-ai (also /oauth, /models, /compat, ...), pi-tui,
//   pi-agent-core (pi-agent-core.mjs when present, else pi-ai.mjs), under both package
//   scopes pi has used (@earendil-works since pi 0.74, @mariozechner before), and
//   typebox and @sinclair/typebox with any subpath (typebox.mjs).
// - A relative import of `x.js` that does not exist but `x.ts` does resolves to `x.ts`
//   (TypeScript's convention); an extensionless relative import tries `.ts`, `.js`,
//   `/index.ts`, `/index.js`.
// - `.ts`, `.mts` and `.cts` files are compiled to JavaScript by pi-rs itself
//   (`PI_RS_TRANSPILE=<file> <pi-rs>` prints the result; oxc's TypeScript transform) and
//   loaded as ES modules. Results are kept in `<this folder>/ts-cache/` by content hash.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = new URL(".", import.meta.url);
let exe = "";

export function initialize(data) {
	exe = data?.exe ?? "";
}

const moduleFile = (name) => new URL(`modules/${name}`, here);

// The package name of a pi package under either scope ("pi-ai" for "@earendil-works/pi-ai/oauth"),
// or null.
function piPackage(specifier) {
	const match = /^@(?:earendil-works|mariozechner)\/(pi-[a-z-]+)(?:\/|$)/.exec(specifier);
	return match ? match[1] : null;
}

function aliasFor(specifier) {
	const pkg = piPackage(specifier);
	if (pkg === "pi-coding-agent") return moduleFile("pi-coding-agent.mjs");
	if (pkg === "pi-ai") return moduleFile("pi-ai.mjs");
	if (pkg === "pi-tui") return moduleFile("pi-tui.mjs");
	if (pkg === "pi-agent-core") {
		const own = moduleFile("pi-agent-core.mjs");
		return existsSync(own) ? own : moduleFile("pi-ai.mjs");
	}
	if (
		specifier === "typebox" ||
		specifier.startsWith("typebox/") ||
		specifier === "@sinclair/typebox" ||
		specifier.startsWith("@sinclair/typebox/")
	)
		return moduleFile("typebox.mjs");
	return null;
}

const isTs = (url) => /\.(ts|mts|cts)$/.test(url.split(/[?#]/)[0]);

export async function resolve(specifier, context, next) {
	const alias = aliasFor(specifier);
	if (alias) return { url: alias.href, shortCircuit: true };
	const relative = specifier.startsWith("./") || specifier.startsWith("../");
	if (relative && context.parentURL?.startsWith("file:")) {
		const target = new URL(specifier, context.parentURL);
		const file = fileURLToPath(target);
		if (!existsSync(file)) {
			const candidates = [];
			if (file.endsWith(".js")) candidates.push(file.replace(/\.js$/, ".ts"));
			if (file.endsWith(".mjs")) candidates.push(file.replace(/\.mjs$/, ".mts"));
			if (!/\.[cm]?[jt]s$/.test(file)) {
				candidates.push(`${file}.ts`, `${file}.js`, `${file}/index.ts`, `${file}/index.js`);
			}
			for (const candidate of candidates) {
				if (existsSync(candidate)) return { url: pathToFileURL(candidate).href, shortCircuit: true };
			}
		}
	}
	return next(specifier, context);
}

function compile(file, source) {
	const key = createHash("sha256").update(file).update("\0").update(source).digest("hex");
	const cacheDir = new URL("ts-cache/", here);
	const cached = new URL(`${key}.js`, cacheDir);
	try {
		return readFileSync(cached, "utf8");
	} catch {}
	if (!exe) throw new Error("cannot compile TypeScript: PI_RS_EXE is not set");
	let code;
	try {
		code = execFileSync(exe, [], {
			env: { ...process.env, PI_RS_TRANSPILE: file },
			encoding: "utf8",
			maxBuffer: 256 * 1024 * 1024,
			stdio: ["ignore", "pipe", "pipe"],
		});
	} catch (err) {
		const detail = String(err.stderr ?? "").trim() || String(err.message ?? err);
		throw new Error(detail);
	}
	try {
		mkdirSync(cacheDir, { recursive: true });
		writeFileSync(cached, code);
	} catch {}
	return code;
}

export async function load(url, context, next) {
	if (url.startsWith("file:") && isTs(url)) {
		const file = fileURLToPath(url);
		const source = readFileSync(file, "utf8");
		return { format: "module", source: compile(file, source), shortCircuit: true };
	}
	return next(url, context);
}
