// pi-rs node host: runs ONE of pi's TypeScript/JavaScript extensions (a module whose
// default export is `(pi: ExtensionAPI) => void | Promise<void>`) as a pi-rs stdio
// extension. pi-rs starts it as
//
//     node --experimental-detect-module <cache>/host.mjs <extension file>
//
// with the environment variable PI_RS_EXE (the pi-rs binary: `PI_RS_TRANSPILE=<file>
// $PI_RS_EXE` prints the file's TypeScript compiled to JavaScript, see hooks.mjs) and
// speaks protocol version 1 of docs/extensions.md on stdin/stdout: it reads `hello`,
// imports the module, calls its factory with an ExtensionAPI, sends one `register` built
// from what the factory registered, then turns pi-rs's events, tool calls and commands
// into calls of the registered handlers, and the handlers' ctx.ui / pi.* calls into
// protocol messages. It registers with `state: true`: pi-rs's `state` messages feed the
// synchronous getters (ctx.model, getContextUsage, getActiveTools, …), `call` requests
// run the command context's session control in pi-rs, `emit` / `bus` carry pi.events. stdout carries only protocol lines: console.log and friends are
// redirected to stderr (which pi-rs writes to extensions.log).
//
// Files next to this one (pi-rs writes them all into the same cache folder):
//   hooks.mjs           loader hooks: TypeScript, pi's module aliases, `.js` → `.ts`
//   modules/*.mjs       the modules pi provides to extensions (typebox.mjs, pi-ai.mjs,
//                       pi-tui.mjs, pi-coding-agent.mjs; written by the "shims" work)
//
// ---------------------------------------------------------------------------------------
// globalThis.__piHost — what the provided modules (modules/*.mjs) reach pi-rs through.
// Set before the extension is imported; the modules' own header (modules/host.mjs) lists
// what they use. Members:
//
//   __piHost.version        pi-rs's version (hello.piVersion), a string
//   __piHost.agentDir       pi's agent directory, e.g. ~/.pi/agent
//   __piHost.cwd, .mode, .hasUI, .extensionPath
//                           working directory, "interactive" | "print" | "json" | "rpc",
//                           whether dialogs can be answered, the extension file
//   __piHost.theme()        the current Theme (the object passed as ctx.ui.theme):
//                             { name, fg(token, text), bg(token, text), bold(text),
//                               italic(text), underline(text), inverse(text),
//                               strikethrough(text), getFgAnsi(token), getBgAnsi(token) }
//                           colours come from `ui_state.theme` ({name, mode, fg:{token:
//                           "\x1b[..m"}, bg:{…}}), sent by the interactive UI (the same
//                           object changes colours in place); otherwise text stays plain.
//   __piHost.keybindings()  { definitions, userBindings } ({} parts when pi-rs sends none)
//   __piHost.request(type, fields) -> Promise<result>
//                           sends {type, id, ...fields} to pi-rs and resolves with the
//                           `result` of its `response` (rejects with its `error`).
//   __piHost.send(type, fields)
//                           sends a one-way protocol message {type, ...fields}.
//   __piHost.log(...args)   a line on stderr (extensions.log).
//   __piHost.tools.definition(name), tools.execute(name, cwd, params, signal, onUpdate,
//                           toolCallId): pi-rs's built-in tools (hello.builtinTools and
//                           `run_tool` requests; partial updates and the signal are not
//                           passed on).
//   __piHost.ai.getModels() the model registry (state.models)
//   __piHost.ai.stream(model, context, options, onEvent, simple, api)
//                           one model request run by pi-rs (`call` llm_stream, events as
//                           `llm_event`); `api` forces pi-rs's client for that API.
//   Not provided yet (the modules throw a clear error when an extension calls what needs
//   them): __piHost.highlightCode.
// ---------------------------------------------------------------------------------------

import { createInterface } from "node:readline";
import { register } from "node:module";
import { pathToFileURL } from "node:url";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import * as path from "node:path";

const extensionPath = process.argv[2];
const out = process.stdout;

// Only protocol lines may reach stdout.
const toStderr = (...args) => process.stderr.write(`${args.map(String).join(" ")}\n`);
console.log = toStderr;
console.info = toStderr;
console.debug = toStderr;

function send(message) {
	out.write(`${JSON.stringify(message)}\n`);
}

// ---- requests to pi-rs ---------------------------------------------------------------

let nextId = 0;
const pending = new Map();

function request(type, fields) {
	const id = `h${++nextId}`;
	return new Promise((resolve, reject) => {
		pending.set(id, { resolve, reject });
		send({ ...fields, type, id });
	});
}

function answer(id, result, error) {
	const message = { type: "response", id };
	if (error !== undefined) message.error = error;
	else if (result !== undefined) message.result = result;
	send(message);
}

function errorText(err) {
	return err instanceof Error ? err.message : String(err);
}

// ---- theme ---------------------------------------------------------------------------
//
// One Theme object for the whole run (components keep the one their factory got, as in
// pi, where `theme` is a global that changes its colours in place): its colours come
// from `themeSpec`, which `hello.theme` and each `ui_state.theme` replace.

let themeSpec = null;

// `getSpec` gives the colours: the current theme's by default; a fixed theme's for the
// objects ctx.ui.getTheme(name) returns (their `themeName` symbol names the theme for
// ctx.ui.setTheme).
const themeName = Symbol("pi-rs theme name");

function makeTheme(getSpec = () => themeSpec, name = undefined) {
	const wrap = (on, off) => (text) => (getSpec() ? `${on}${text}${off}` : String(text));
	return {
		[themeName]: name,
		get name() {
			return getSpec()?.name ?? "dark";
		},
		fg: (token, text) => {
			const ansi = getSpec()?.fg?.[token];
			return ansi ? `${ansi}${text}\x1b[39m` : String(text);
		},
		bg: (token, text) => {
			const ansi = getSpec()?.bg?.[token];
			return ansi ? `${ansi}${text}\x1b[49m` : String(text);
		},
		bold: wrap("\x1b[1m", "\x1b[22m"),
		italic: wrap("\x1b[3m", "\x1b[23m"),
		underline: wrap("\x1b[4m", "\x1b[24m"),
		inverse: wrap("\x1b[7m", "\x1b[27m"),
		strikethrough: wrap("\x1b[9m", "\x1b[29m"),
		getFgAnsi: (token) => getSpec()?.fg?.[token] ?? "",
		getBgAnsi: (token) => getSpec()?.bg?.[token] ?? "",
		getColorMode: () => getSpec()?.mode ?? "truecolor",
		getThinkingBorderColor(level) {
			const token = `thinking${String(level ?? "off").replace(/^./, (c) => c.toUpperCase())}`;
			return (text) => this.fg(getSpec()?.fg?.[token] ? token : "thinkingOff", text);
		},
		getBashModeBorderColor() {
			return (text) => this.fg("bashMode", text);
		},
	};
}

// Every theme pi-rs's terminal UI offers ({name, path, spec}), from `ui_state.themes`.
let themeList = [];

function findTheme(name) {
	return themeList.find((t) => t.name === name);
}

// ctx.ui.setTheme: switches this process's colours at once (pi's setTheme is
// synchronous) and asks pi-rs's UI to switch; by name the choice is saved there.
function setTheme(theme) {
	if (!hello?.hasUI) return { success: false, error: "UI not available" };
	if (hello.mode === "rpc") return { success: false, error: "Theme switching not supported in RPC mode" };
	const byName = typeof theme === "string";
	const name = byName ? theme : theme?.[themeName];
	if (typeof name !== "string") {
		return { success: false, error: "pi-rs switches themes by name or to a Theme from ctx.ui.getTheme()" };
	}
	uiNotice("setTheme", { themeName: name, persist: byName });
	// Before pi-rs's UI sent its theme list (early in session_start) the name is taken
	// on trust; the UI falls back to the dark theme if it does not load, as pi does.
	if (themeList.length === 0) return { success: true };
	const found = findTheme(name);
	themeSpec = found ? found.spec : (findTheme("dark")?.spec ?? themeSpec);
	refreshThemed();
	return found ? { success: true } : { success: false, error: `Theme not found: ${name}` };
}

// ---- the extension's registrations ---------------------------------------------------

const handlers = new Map(); // event name -> [handler]
const tools = new Map(); // name -> tool definition
const commands = new Map(); // name -> {description, handler, getArgumentCompletions}
const flags = new Map(); // name -> {type, description, default}
const shortcuts = new Map();
const messageRenderers = new Map();
let hello = null;
let loaded = false;
let sessionFile = null;
let sessionName;
let idle = true;
let currentSignal;
let thinkingLevel = "off";
// ctx.reload() finished: this process belongs to the runtime before the reload.
let reloaded = false;
// The session state pi-rs sends in `state` messages (parts merged as they arrive): model,
// thinkingLevel, sessionName, sessionFile, sessionId, systemPrompt, contextUsage,
// pendingMessages, idle, activeTools, allTools, commands, models, availableModels.
const state = {};
const has = (key) => Object.hasOwn(state, key);

// A request to the session (protocol `call`), answered by a `response`.
function call(method, params) {
	return request("call", { method, params: params ?? {} });
}

let pendingProviders = []; // [{name, config}] from registerProvider while loading
// api -> the streamSimple of the provider registered last for it (pi-ai's API registry:
// pi-rs sends `provider_stream` for models of that api).
const jsStreams = new Map();
const providerApis = new Map(); // provider name -> the api its streamSimple serves
const oauthProviders = new Map(); // provider name -> its oauth ({name, login, refreshToken, getApiKey})

/**
 * A provider config as JSON for pi-rs: pi's fields, `streamSimple` as `true` (the function
 * stays here and serves `provider_stream`). Throws as pi's validation does.
 */
function providerConfig(name, config) {
	const { streamSimple, oauth, ...rest } = config;
	if (streamSimple && !config.api) {
		throw new Error(`Provider ${name}: "api" is required when registering streamSimple.`);
	}
	if (typeof streamSimple === "function") {
		jsStreams.set(config.api, streamSimple);
		providerApis.set(name, config.api);
	}
	const json = JSON.parse(JSON.stringify(rest));
	if (typeof streamSimple === "function") json.streamSimple = true;
	// The sign-in stays here (`oauth` requests); pi-rs learns its label for /login.
	if (oauth && typeof oauth.login === "function") {
		oauthProviders.set(name, oauth);
		json.oauth = { name: String(oauth.name ?? name), usesCallbackServer: oauth.usesCallbackServer === true };
	}
	return json;
}

function notLoaded(what) {
	if (!loaded) {
		throw new Error(
			`Extension runtime not initialized. ${what} cannot be called during extension loading.`,
		);
	}
}

function flagValue(name) {
	const flag = flags.get(name);
	if (!flag) return undefined;
	const given = hello?.flags?.[name];
	if (given === undefined) return flag.default;
	if (flag.type === "boolean") return given === true || given === "true";
	return typeof given === "string" ? given : String(given);
}

function toolContent(content) {
	return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

// ---- ctx.ui --------------------------------------------------------------------------

async function dialog(method, fields, opts) {
	if (!hello?.hasUI) return { cancelled: true };
	const payload = { method, ...fields };
	if (opts?.timeout) payload.timeout = opts.timeout;
	const id = `h${++nextId}`;
	const result = new Promise((resolve, reject) => {
		pending.set(id, { resolve, reject });
	});
	send({ type: "ui", id, ...payload });
	if (opts?.signal) {
		if (opts.signal.aborted) return { cancelled: true };
		const aborted = new Promise((resolve) =>
			opts.signal.addEventListener("abort", () => resolve({ cancelled: true }), { once: true }),
		);
		return Promise.race([result, aborted]);
	}
	return (await result) ?? { cancelled: true };
}

function uiNotice(method, fields) {
	if (!hello?.hasUI) return;
	send({ type: "ui", method, ...fields });
}

// ---- live components: footer, header and widgets ----------------------------------------
//
// pi draws `setFooter` / `setHeader` / `setWidget` components in its own TUI on every
// frame. Here they live in the host, and pi-rs shows the lines they rendered: each one is
// rendered at pi-rs's terminal width when it is set, again whenever it asks
// (`tui.requestRender`) and whenever pi-rs's `ui_state` changes (width, theme, footer
// data, or a session change that the built-in footer would show). pi-rs never waits for
// these lines: it draws the last ones it has.

const uiState = {
	width: 80,
	rows: 24,
	gitBranch: null,
	statuses: {},
	providerCount: 0,
	toolsExpanded: false,
};
const branchListeners = new Set();
const live = new Map(); // slot ("footer", "header", "widget:<key>") -> entry

const footerData = {
	getGitBranch: () => uiState.gitBranch ?? null,
	getExtensionStatuses: () => new Map(Object.entries(uiState.statuses ?? {})),
	getAvailableProviderCount: () => uiState.providerCount ?? 0,
	onBranchChange(callback) {
		branchListeners.add(callback);
		return () => branchListeners.delete(callback);
	},
};

function renderComponent(component, what) {
	try {
		const lines = component?.render?.(uiState.width) ?? [];
		return Array.isArray(lines) ? lines.map(String) : [];
	} catch (err) {
		toStderr(`${what} render failed: ${errorText(err)}`);
		return [];
	}
}

function sendLive(slot) {
	const entry = live.get(slot);
	if (!entry || entry.component === undefined) return;
	uiNotice(entry.method, entry.fields(renderComponent(entry.component, slot)));
}

function liveTui(slot) {
	return {
		requestRender() {
			const entry = live.get(slot);
			if (!entry || entry.queued) return;
			entry.queued = true;
			queueMicrotask(() => {
				entry.queued = false;
				if (live.get(slot) === entry) sendLive(slot);
			});
		},
		get terminal() {
			return { columns: uiState.width, rows: uiState.rows };
		},
	};
}

function disposeLive(slot) {
	const old = live.get(slot);
	live.delete(slot);
	try {
		old?.component?.dispose?.();
	} catch (err) {
		toStderr(`${slot} dispose failed: ${errorText(err)}`);
	}
}

// Sets (or, without a factory, clears) the component of `slot`; `fields(lines)` builds
// the `ui` message (`lines` undefined: cleared).
function setLive(slot, factory, method, fields, extraArgs = []) {
	disposeLive(slot);
	if (!hello?.hasUI) return;
	if (typeof factory !== "function") {
		uiNotice(method, fields(undefined));
		return;
	}
	const entry = { component: undefined, queued: false, method, fields };
	live.set(slot, entry);
	try {
		entry.component = factory(liveTui(slot), currentTheme, ...extraArgs) ?? null;
	} catch (err) {
		live.delete(slot);
		toStderr(`${slot} factory failed: ${errorText(err)}`);
		uiNotice(method, fields(undefined));
		return;
	}
	sendLive(slot);
}

function setWidget(key, content, options) {
	const placement = options?.placement === "belowEditor" ? "belowEditor" : "aboveEditor";
	const fields = (lines, component) => ({
		widgetKey: key,
		widgetLines: lines,
		widgetPlacement: placement,
		...(component ? { widgetComponent: true } : {}),
	});
	if (typeof content === "function") {
		setLive(`widget:${key}`, content, "setWidget", (lines) => fields(lines, true));
		return;
	}
	disposeLive(`widget:${key}`);
	uiNotice("setWidget", fields(content === undefined ? undefined : content.map(String)));
}

// pi-rs's `ui_state`: re-render what depends on it.
function applyUiState(message) {
	if (Number.isInteger(message.width) && message.width > 0) {
		uiState.width = message.width;
		customColumns = message.width;
	}
	if (Number.isInteger(message.rows) && message.rows > 0) uiState.rows = message.rows;
	if (message.theme !== undefined) themeSpec = message.theme;
	if (message.statuses && typeof message.statuses === "object") uiState.statuses = message.statuses;
	if (Number.isInteger(message.providerCount)) uiState.providerCount = message.providerCount;
	if (typeof message.toolsExpanded === "boolean") uiState.toolsExpanded = message.toolsExpanded;
	if ("gitBranch" in message && (message.gitBranch ?? null) !== uiState.gitBranch) {
		uiState.gitBranch = message.gitBranch ?? null;
		for (const callback of [...branchListeners]) {
			try {
				callback();
			} catch (err) {
				toStderr(`onBranchChange callback failed: ${errorText(err)}`);
			}
		}
	}
	if (Array.isArray(message.themes)) themeList = message.themes;
	if (typeof message.editorBorder === "string") editorBorderToken = message.editorBorder;
	if (message.appKeys && typeof message.appKeys === "object") {
		appKeys = message.appKeys;
		applyAppKeys();
	}
	if (message.theme !== undefined) {
		refreshThemed();
		return;
	}
	sendAllLive();
}

// The colours changed: components drop what they cached and render again.
function refreshThemed() {
	const components = [...live.values(), ...customViews.values()].map((entry) => entry.component);
	components.push(promptEditor?.component);
	for (const component of components) {
		try {
			component?.invalidate?.();
		} catch (err) {
			toStderr(`invalidate failed: ${errorText(err)}`);
		}
	}
	sendAllLive();
}

function sendAllLive() {
	if (promptEditor) sendEditorRender();
	for (const slot of [...live.keys()]) sendLive(slot);
	for (const [id, view] of customViews) sendRender(id, view);
}

let editorText = "";

function makeUi() {
	return {
		select: async (title, options, opts) => (await dialog("select", { title, options }, opts))?.value,
		confirm: async (title, message, opts) =>
			(await dialog("confirm", { title, message }, opts))?.confirmed === true,
		input: async (title, placeholder, opts) =>
			(await dialog("input", { title, placeholder }, opts))?.value,
		editor: async (title, prefill) => (await dialog("editor", { title, prefill }))?.value,
		notify: (message, type = "info") => uiNotice("notify", { message, notifyType: type }),
		setStatus: (key, text) => uiNotice("setStatus", { statusKey: key, statusText: text }),
		setWidget: (key, content, options) => setWidget(key, content, options),
		setTitle: (title) => uiNotice("setTitle", { title }),
		setEditorText: (text) => {
			if (promptEditor) {
				editorSetText({ text });
				return;
			}
			editorText = text;
			uiNotice("setEditorText", { text });
		},
		getEditorText: () => (promptEditor ? editorText_() : editorText),
		pasteToEditor: (text) => {
			if (promptEditor) {
				editorInput({ data: `\x1b[200~${text}\x1b[201~` });
				return;
			}
			editorText += text;
			uiNotice("setEditorText", { text: editorText });
		},
		setWorkingMessage: (message) =>
			uiNotice("setWorkingMessage", message === undefined ? {} : { message: String(message) }),
		setWorkingVisible: (visible) => uiNotice("setWorkingVisible", { visible: visible !== false }),
		setWorkingIndicator: (options) => {
			if (options === undefined || options === null) {
				uiNotice("setWorkingIndicator", {});
				return;
			}
			const frames = Array.isArray(options.frames) ? options.frames.map(String) : undefined;
			const intervalMs = Number.isFinite(options.intervalMs) && options.intervalMs > 0 ? options.intervalMs : undefined;
			uiNotice("setWorkingIndicator", { indicator: { frames, intervalMs } });
		},
		setHiddenThinkingLabel: (label) =>
			uiNotice("setHiddenThinkingLabel", label === undefined ? {} : { label: String(label) }),
		setFooter: (factory) =>
			setLive("footer", factory, "setFooter", (lines) => ({ lines }), [footerData]),
		setHeader: (factory) => setLive("header", factory, "setHeader", (lines) => ({ lines })),
		onTerminalInput: (handler) => addTerminalInputListener(handler),
		addAutocompleteProvider: (factory) => addAutocompleteProvider(factory),
		setEditorComponent: (factory) => setEditorComponent(factory),
		getEditorComponent: () => editorFactory,
		custom: (factory, options) => showCustom(factory, options),
		getAllThemes: () =>
			hello?.hasUI && hello.mode !== "rpc" ? themeList.map((t) => ({ name: t.name, path: t.path ?? undefined })) : [],
		getTheme: (name) => {
			if (!hello?.hasUI || hello.mode === "rpc") return undefined;
			const found = findTheme(name);
			return found ? makeTheme(() => found.spec, name) : undefined;
		},
		setTheme: (theme) => setTheme(theme),
		getToolsExpanded: () => uiState.toolsExpanded === true,
		setToolsExpanded: (expanded) => {
			uiState.toolsExpanded = expanded === true;
			uiNotice("setToolsExpanded", { expanded: expanded === true });
		},
		get theme() {
			return currentTheme;
		},
	};
}

// ---- ctx.ui.custom: components that live here, drawn by pi-rs -----------------------
//
// The component renders here; its lines go to pi-rs in a `custom` dialog (shown in place
// of the editor, or over the screen with `overlay: true`), then in `customRender` notices
// whenever it asks for a render. pi-rs forwards keys as `ui_input` messages (raw terminal
// sequences, as pi-tui delivers them) with the width to render at; a `ui_input` without
// `data` only asks for the lines at that width, one with `focused` says the component
// gained or lost the keyboard. `done(value)` sends `customClose` and resolves the
// promise; a view pi-rs closes by itself (the extension is reloaded, pi exits) resolves
// undefined.
//
// Overlays (`overlay: true`, and `tui.showOverlay` from a factory): pi-rs keeps the stack,
// places them (pi-tui's OverlayOptions, sent as `overlayOptions`) and routes the keys;
// this side renders them at the width pi-rs asks for and answers their `visible(columns,
// rows)` callback with every render (`overlayVisible`). Their OverlayHandle mirrors
// `hidden` here and sends `overlayHandle` notices; `isFocused` reads the focus pi-rs
// last reported.

const customViews = new Map();
let customColumns = 80;

function viewWidth(view) {
	return view.width ?? customColumns;
}

function customLines(view) {
	try {
		const lines = view.component?.render?.(viewWidth(view)) ?? [];
		return Array.isArray(lines) ? lines.map(String) : [];
	} catch (err) {
		toStderr(`custom component render failed: ${errorText(err)}`);
		return [];
	}
}

function overlayVisible(view) {
	if (typeof view.visible !== "function") return true;
	try {
		return view.visible(uiState.width, uiState.rows) !== false;
	} catch (err) {
		toStderr(`overlay visible() failed: ${errorText(err)}`);
		return true;
	}
}

/** The fields of a render of `view` (lines, and for overlays width and visibility). */
function renderFields(view) {
	const fields = { lines: customLines(view) };
	if (view.overlay) {
		fields.width = viewWidth(view);
		fields.overlayVisible = overlayVisible(view);
	}
	return fields;
}

function sendRender(id, view) {
	send({ type: "ui", method: "customRender", customId: id, ...renderFields(view) });
}

// pi-tui re-renders every component on a render request; so do we (this extension's).
let renderQueued = false;
function requestRenderAll() {
	if (renderQueued) return;
	renderQueued = true;
	queueMicrotask(() => {
		renderQueued = false;
		for (const [id, view] of customViews) {
			if (!view.closed && !view.hidden) sendRender(id, view);
		}
	});
}

/** OverlayOptions without the callback, with numbers and strings only, for pi-rs. */
function overlayOptionsFields(options) {
	const out = {};
	if (!options || typeof options !== "object") return out;
	for (const key of ["width", "minWidth", "maxHeight", "anchor", "offsetX", "offsetY", "row", "col", "margin", "nonCapturing"]) {
		if (options[key] !== undefined) out[key] = options[key];
	}
	return out;
}

/** The width an overlay is first rendered at (pi-rs asks again when its layout differs). */
function firstOverlayWidth(options) {
	const columns = uiState.width;
	if (typeof options?.width === "number") return Math.max(1, Math.min(options.width, columns));
	const match = typeof options?.width === "string" ? options.width.match(/^(\d+(?:\.\d+)?)%$/) : null;
	if (match) return Math.max(1, Math.min(Math.floor((columns * parseFloat(match[1])) / 100), columns));
	return Math.max(1, Math.min(80, columns));
}

/** The `tui` a factory gets: renders, terminal size, overlays. */
function makeTui() {
	return {
		requestRender: () => requestRenderAll(),
		get terminal() {
			return {
				get columns() {
					return uiState.width;
				},
				get rows() {
					return uiState.rows;
				},
			};
		},
		showOverlay: (component, options) => showOverlay(component, options),
		hideOverlay: () => {
			const last = [...customViews.entries()].reverse().find(([, v]) => v.overlay && v.standalone);
			if (last) closeStandaloneOverlay(last[0]);
		},
		hasOverlay: () => [...customViews.values()].some((v) => v.overlay && !v.hidden && overlayVisible(v)),
		invalidate: () => {
			for (const view of customViews.values()) view.component?.invalidate?.();
		},
	};
}

function makeHandle(id, view) {
	return {
		hide: () => {
			if (view.standalone) closeStandaloneOverlay(id);
			else view.done?.(undefined);
		},
		setHidden: (hidden) => {
			hidden = hidden === true;
			if (view.closed || view.hidden === hidden) return;
			view.hidden = hidden;
			send({ type: "ui", method: "overlayHandle", customId: id, action: "setHidden", hidden });
		},
		isHidden: () => view.hidden === true,
		focus: () => {
			if (!view.closed) send({ type: "ui", method: "overlayHandle", customId: id, action: "focus" });
		},
		unfocus: () => {
			if (!view.closed) send({ type: "ui", method: "overlayHandle", customId: id, action: "unfocus" });
		},
		isFocused: () => view.focused === true,
	};
}

function newView(component, fields) {
	return { component, closed: false, hidden: false, focused: false, overlay: false, width: undefined, ...fields };
}

function disposeView(id, view) {
	view.closed = true;
	customViews.delete(id);
	try {
		view.component?.dispose?.();
	} catch (err) {
		toStderr(`custom component dispose failed: ${errorText(err)}`);
	}
}

// tui.showOverlay: an overlay that is not a dialog.
function showOverlay(component, options) {
	const id = `h${++nextId}`;
	const view = newView(component, {
		overlay: true,
		standalone: true,
		visible: options?.visible,
		width: firstOverlayWidth(options),
	});
	if (hello?.hasUI) {
		customViews.set(id, view);
		send({
			type: "ui",
			method: "overlayShow",
			customId: id,
			overlayOptions: overlayOptionsFields(options),
			...renderFields(view),
		});
	}
	return makeHandle(id, view);
}

function closeStandaloneOverlay(id) {
	const view = customViews.get(id);
	if (!view || view.closed) return;
	send({ type: "ui", method: "customClose", customId: id });
	disposeView(id, view);
}

async function showCustom(factory, options) {
	if (!hello?.hasUI) return undefined;
	const id = `h${++nextId}`;
	const view = newView(undefined, { finish: undefined });
	const result = new Promise((resolve) => {
		view.finish = resolve;
	});
	const close = (value) => {
		if (view.closed) return;
		disposeView(id, view);
		view.finish(value);
	};
	view.done = (value) => {
		if (view.closed) return;
		send({ type: "ui", method: "customClose", customId: id });
		close(value);
	};
	view.component = await factory(makeTui(), currentTheme, keybindings, view.done);
	if (view.closed) return result;
	const fields = {};
	if (options?.overlay) {
		// pi reads the options once, when the overlay is shown; without any it uses the
		// component's own `width`.
		let overlayOptions = typeof options.overlayOptions === "function" ? options.overlayOptions() : options.overlayOptions;
		if (!overlayOptions && view.component?.width) overlayOptions = { width: view.component.width };
		view.overlay = true;
		view.visible = overlayOptions?.visible;
		view.width = firstOverlayWidth(overlayOptions);
		fields.overlay = true;
		fields.overlayOptions = overlayOptionsFields(overlayOptions);
	}
	customViews.set(id, view);
	pending.set(id, { resolve: () => close(undefined), reject: () => close(undefined) });
	send({ type: "ui", id, method: "custom", ...fields, ...renderFields(view) });
	if (options?.overlay) {
		try {
			options.onHandle?.(makeHandle(id, view));
		} catch (err) {
			toStderr(`onHandle failed: ${errorText(err)}`);
		}
	}
	return result;
}

function customInput(message) {
	const view = customViews.get(message.id);
	if (!view) return;
	if (Number.isInteger(message.width) && message.width > 0) {
		if (view.overlay) view.width = message.width;
		else customColumns = message.width;
	}
	if (typeof message.focused === "boolean") {
		view.focused = message.focused;
		if (view.component && "focused" in view.component) view.component.focused = message.focused;
	}
	if (typeof message.data === "string") {
		try {
			view.component?.handleInput?.(message.data);
		} catch (err) {
			toStderr(`custom component input failed: ${errorText(err)}`);
		}
	}
	// pi re-renders after every key; so do we.
	if (!view.closed) sendRender(message.id, view);
}

// ---- ctx.ui.setEditorComponent: the prompt editor, living here ------------------------
//
// pi swaps its prompt editor for the component the factory returns. Here the component
// lives in the host: `setEditorComponent` (with `lines`) tells pi-rs to show its lines in
// place of its own editor and to forward every key (`editor_input`, raw terminal
// sequences); each key, render request or `ui_state` sends `editorRender` with the new
// lines and the editor's text (pi-rs mirrors the text for its own actions and sends
// `editor_set_text` when one of them changed it). The editor's submit becomes
// `editorSubmit` (pi-rs runs it as the user's prompt); pi's app keys reach pi-rs as
// `editorAction` with the keybinding's id (the CustomEditor handlers pi copies from its
// own editor: onEscape, onCtrlD, onPasteImage and the registered app actions).
// `setEditorComponent` without `lines` restores pi-rs's editor with `text`.

const EDITOR_ACTIONS = [
	"app.clear",
	"app.suspend",
	"app.thinking.cycle",
	"app.model.cycleForward",
	"app.model.cycleBackward",
	"app.model.select",
	"app.tools.expand",
	"app.thinking.toggle",
	"app.editor.external",
	"app.message.followUp",
	"app.message.dequeue",
	"app.session.new",
	"app.session.tree",
	"app.session.fork",
	"app.session.resume",
];

let promptEditor = null; // { component, factory, queued }

// pi's app keybindings (pi-rs sends the configured ones in `ui_state.appKeys`), added to
// pi-tui's for the keybindings manager the editor factory gets.
let appKeys = {
	"app.interrupt": ["escape"],
	"app.clear": ["ctrl+c"],
	"app.exit": ["ctrl+d"],
	"app.suspend": ["ctrl+z"],
	"app.thinking.cycle": ["shift+tab"],
	"app.model.cycleForward": ["ctrl+p"],
	"app.model.cycleBackward": ["shift+ctrl+p"],
	"app.model.select": ["ctrl+l"],
	"app.tools.expand": ["ctrl+o"],
	"app.thinking.toggle": ["ctrl+t"],
	"app.editor.external": ["ctrl+g"],
	"app.message.followUp": ["alt+enter"],
	"app.message.dequeue": ["alt+up"],
	"app.clipboard.pasteImage": ["ctrl+v"],
};
let editorKeybindings = null;

function editorKeybindingsManager(tuiComponents) {
	if (!editorKeybindings) {
		const base = tuiComponents.getKeybindings();
		editorKeybindings = new tuiComponents.KeybindingsManager(base.definitions, base.userBindings);
		applyAppKeys();
	}
	return editorKeybindings;
}

function applyAppKeys() {
	if (!editorKeybindings) return;
	const definitions = { ...editorKeybindings.definitions };
	for (const [action, keys] of Object.entries(appKeys)) {
		definitions[action] = { defaultKeys: Array.isArray(keys) ? keys.map(String) : [], description: action };
	}
	editorKeybindings.definitions = definitions;
	editorKeybindings.rebuild();
}
let editorBorderToken = "thinkingOff";

function editorText_() {
	try {
		return String(promptEditor?.component?.getText?.() ?? "");
	} catch (err) {
		toStderr(`editor getText failed: ${errorText(err)}`);
		return "";
	}
}

function promptEditorLines() {
	try {
		const lines = promptEditor?.component?.render?.(uiState.width) ?? [];
		// The cursor marker stays: pi-rs puts the terminal cursor there, as pi-tui does.
		return Array.isArray(lines) ? lines.map((line) => String(line)) : [];
	} catch (err) {
		toStderr(`editor render failed: ${errorText(err)}`);
		return [];
	}
}

function sendEditorRender() {
	if (!promptEditor) return;
	send({ type: "ui", method: "editorRender", lines: promptEditorLines(), text: editorText_() });
}

function editorTui() {
	return {
		requestRender() {
			const entry = promptEditor;
			if (!entry || entry.queued) return;
			entry.queued = true;
			queueMicrotask(() => {
				entry.queued = false;
				if (promptEditor === entry) sendEditorRender();
			});
		},
		get terminal() {
			return { columns: uiState.width, rows: uiState.rows };
		},
	};
}

function disposePromptEditor() {
	const old = promptEditor;
	promptEditor = null;
	try {
		old?.component?.dispose?.();
	} catch (err) {
		toStderr(`editor dispose failed: ${errorText(err)}`);
	}
}

// Calls apply in order (the keybindings module is imported on first use).
let editorChain = Promise.resolve();

let editorFactory;

function setEditorComponent(factory) {
	editorFactory = typeof factory === "function" ? factory : undefined;
	editorChain = editorChain
		.then(() => import("./modules/tui-components.mjs"))
		.then((tuiComponents) => applyEditorComponent(factory, () => editorKeybindingsManager(tuiComponents)))
		.catch((err) => toStderr(`setEditorComponent failed: ${errorText(err)}`));
}

function applyEditorComponent(factory, getKeybindings) {
	const text = promptEditor ? editorText_() : editorText;
	disposePromptEditor();
	if (!hello?.hasUI) return;
	if (typeof factory !== "function") {
		editorText = text;
		send({ type: "ui", method: "setEditorComponent", text });
		return;
	}
	const entry = { component: undefined, factory, queued: false };
	promptEditor = entry;
	const editorTheme = {
		borderColor: (t) => currentTheme.fg(editorBorderToken, t),
		selectList: {
			selectedPrefix: (t) => currentTheme.fg("accent", t),
			selectedText: (t) => currentTheme.fg("accent", t),
			description: (t) => currentTheme.fg("muted", t),
			scrollInfo: (t) => currentTheme.fg("muted", t),
			noMatch: (t) => currentTheme.fg("muted", t),
		},
	};
	let component;
	try {
		component = factory(editorTui(), editorTheme, getKeybindings());
	} catch (err) {
		promptEditor = null;
		toStderr(`editor factory failed: ${errorText(err)}`);
		send({ type: "ui", method: "setEditorComponent", text });
		return;
	}
	if (!component || typeof component.render !== "function") {
		promptEditor = null;
		toStderr("editor factory returned no component");
		send({ type: "ui", method: "setEditorComponent", text });
		return;
	}
	entry.component = component;
	component.focused = true;
	component.onSubmit = (submitted) => {
		send({ type: "ui", method: "editorSubmit", text: String(submitted ?? "") });
	};
	const action = (id) => () => send({ type: "ui", method: "editorAction", action: id });
	if (component.actionHandlers instanceof Map) {
		component.onEscape ??= action("app.interrupt");
		component.onCtrlD ??= action("app.exit");
		component.onPasteImage ??= action("app.clipboard.pasteImage");
		// pi-rs runs extension shortcuts before the key reaches this editor.
		component.onExtensionShortcut ??= () => false;
		for (const id of EDITOR_ACTIONS) {
			if (!component.actionHandlers.has(id)) component.actionHandlers.set(id, action(id));
		}
	}
	try {
		component.setText?.(text);
	} catch (err) {
		toStderr(`editor setText failed: ${errorText(err)}`);
	}
	send({ type: "ui", method: "setEditorComponent", lines: promptEditorLines(), text: editorText_() });
}

function editorInput(message) {
	if (!promptEditor) return;
	if (Number.isInteger(message.width) && message.width > 0) uiState.width = message.width;
	try {
		promptEditor.component.handleInput?.(String(message.data ?? ""));
	} catch (err) {
		toStderr(`editor input failed: ${errorText(err)}`);
	}
	sendEditorRender();
}

function editorSetText(message) {
	const text = String(message.text ?? "");
	if (!promptEditor) {
		editorText = text;
		return;
	}
	try {
		promptEditor.component.setText?.(text);
	} catch (err) {
		toStderr(`editor setText failed: ${errorText(err)}`);
	}
	sendEditorRender();
}

// ---- transcript items drawn by the extension -----------------------------------------
//
// pi draws custom messages with the renderer of `registerMessageRenderer` and tool calls
// with the tool's `renderCall` / `renderResult`. pi-rs asks for those lines with a
// `render` request whenever what they depend on changed (width, expanded, the item's
// content, the theme) and frames them itself; it shows its default rendering until the
// answer arrives, and for good when the renderer throws (answered as an error).

const toolRenders = new Map(); // toolCallId -> { state, call, result } (pi's per-box state)
const MAX_TOOL_RENDERS = 500;

function componentLines(component, width) {
	if (component === undefined || component === null) return [];
	const lines = component.render(width);
	if (!Array.isArray(lines)) throw new Error("render() did not return an array of lines");
	return lines.map(String);
}

function renderMessage(message) {
	const renderer = messageRenderers.get(message.message?.customType);
	if (typeof renderer !== "function") return { lines: null };
	const width = Math.max(1, message.width ?? uiState.width);
	const component = renderer(message.message, { expanded: message.expanded === true }, currentTheme);
	if (!component) return { lines: null };
	return { lines: componentLines(component, width) };
}

function toolRender(toolCallId) {
	let entry = toolRenders.get(toolCallId);
	if (entry) return entry;
	entry = { state: {}, call: undefined, result: undefined };
	toolRenders.set(toolCallId, entry);
	if (toolRenders.size > MAX_TOOL_RENDERS) toolRenders.delete(toolRenders.keys().next().value);
	return entry;
}

// pi's ToolExecutionComponent: the call's component, then (once there is a result) the
// result's, in a box with one column and one row of padding (renderShell "self": no
// box). A part the tool does not render, or whose renderer throws, is pi-rs's fallback
// (`callError` / `resultError` say why).
function renderTool(message) {
	const tool = tools.get(message.toolName);
	const out = { shell: tool?.renderShell === "self" ? "self" : "default", call: null, result: null };
	if (!tool) return out;
	const width = Math.max(1, message.width ?? uiState.width);
	const inner = out.shell === "self" ? width : Math.max(1, width - 2);
	const entry = toolRender(String(message.toolCallId ?? ""));
	const context = (lastComponent) => ({
		args: message.args,
		toolCallId: message.toolCallId,
		invalidate: () => uiNotice("renderInvalidate", { toolCallId: message.toolCallId }),
		lastComponent,
		state: entry.state,
		cwd: hello?.cwd,
		executionStarted: message.executionStarted === true,
		argsComplete: message.argsComplete === true,
		isPartial: message.isPartial === true,
		expanded: message.expanded === true,
		showImages: message.showImages !== false,
		isError: message.isError === true,
	});
	if (typeof tool.renderCall === "function") {
		try {
			const component = tool.renderCall(message.args, currentTheme, context(entry.call));
			entry.call = component;
			out.call = componentLines(component, inner);
		} catch (err) {
			entry.call = undefined;
			out.callError = errorText(err);
		}
	}
	if (message.result && typeof tool.renderResult === "function") {
		try {
			const component = tool.renderResult(
				{ content: toolContent(message.result.content ?? []), details: message.result.details },
				{ expanded: message.expanded === true, isPartial: message.isPartial === true },
				currentTheme,
				context(entry.result),
			);
			entry.result = component;
			out.result = componentLines(component, inner);
		} catch (err) {
			entry.result = undefined;
			out.resultError = errorText(err);
		}
	}
	return out;
}

function render(message) {
	if (message.kind === "message") return renderMessage(message);
	if (message.kind === "tool") return renderTool(message);
	throw new Error(`unknown render kind ${message.kind}`);
}

// ---- ctx -----------------------------------------------------------------------------

const sessionManager = {
	getSessionFile: () => currentSessionFile() ?? undefined,
	getSessionId: () => (has("sessionId") ? state.sessionId : hello?.sessionId) ?? undefined,
	getCwd: () => hello?.cwd,
	getSessionName: () => currentSessionName(),
	getEntries: () => readEntries().entries,
	getBranch: () => readEntries().branch,
	getLeafId: () => readEntries().leafId,
	getLeafEntry: () => {
		const { branch } = readEntries();
		return branch[branch.length - 1];
	},
	getEntry: (id) => readEntries().entries.find((e) => e.id === id),
	getHeader: () => readEntries().header,
	getLabel: () => undefined,
};

// The SessionManager `newSession({ setup })` hands its callback: pi's write methods
// (appendMessage, appendCustomEntry, …) record entries with ids chosen here (returned at
// once, as pi's are) and show them to the read methods; once the callback is done the
// entries go to pi-rs in one `session_setup` call, which stores them in the new session
// with those ids.
function setupSessionManager() {
	const added = [];
	const ops = [];
	const base = readEntries();
	const taken = new Set(base.entries.map((e) => e.id));
	const newId = () => {
		for (;;) {
			const id = randomBytes(4).toString("hex");
			if (!taken.has(id)) {
				taken.add(id);
				return id;
			}
		}
	};
	let leafId = base.leafId;
	const entries = () => [...base.entries, ...added];
	const append = (op, entry) => {
		const id = newId();
		const full = { ...entry, id, parentId: leafId, timestamp: new Date().toISOString() };
		added.push(full);
		ops.push({ ...op, id });
		leafId = id;
		return id;
	};
	const notHere = (name) => () => {
		throw new Error(`SessionManager.${name} is not available in newSession's setup in pi-rs`);
	};
	const manager = {
		...sessionManager,
		getEntries: () => entries(),
		getLeafId: () => leafId,
		getEntry: (id) => entries().find((e) => e.id === id),
		getLeafEntry: () => entries().find((e) => e.id === leafId),
		getBranch: (fromId) => {
			const all = entries();
			const byId = new Map(all.map((e) => [e.id, e]));
			const branch = [];
			let cursor = byId.get(fromId ?? leafId);
			while (cursor && !branch.includes(cursor)) {
				branch.unshift(cursor);
				cursor = cursor.parentId ? byId.get(cursor.parentId) : undefined;
			}
			return branch;
		},
		getLabel: (id) => {
			let label;
			for (const e of entries()) if (e.type === "label" && e.targetId === id) label = e.label;
			return label;
		},
		getSessionName: () => {
			let name = currentSessionName();
			for (const e of added) if (e.type === "session_info") name = e.name || undefined;
			return name;
		},
		appendMessage: (message) =>
			append({ kind: "message", message }, { type: "message", message }),
		appendThinkingLevelChange: (thinkingLevel) =>
			append(
				{ kind: "thinking_level_change", thinkingLevel },
				{ type: "thinking_level_change", thinkingLevel },
			),
		appendModelChange: (provider, modelId) =>
			append({ kind: "model_change", provider, modelId }, { type: "model_change", provider, modelId }),
		appendCompaction: (summary, firstKeptEntryId, tokensBefore, details, fromHook) =>
			append(
				{ kind: "compaction", summary, firstKeptEntryId, tokensBefore, details, fromHook },
				{ type: "compaction", summary, firstKeptEntryId, tokensBefore, details, fromHook },
			),
		appendCustomEntry: (customType, data) =>
			append({ kind: "custom", customType, data }, { type: "custom", customType, data }),
		appendSessionInfo: (name) =>
			append({ kind: "session_info", name }, { type: "session_info", name: String(name ?? "").trim() }),
		appendCustomMessageEntry: (customType, content, display, details) =>
			append(
				{ kind: "custom_message", customType, content, display, details },
				{ type: "custom_message", customType, content, display, details },
			),
		appendLabelChange: (targetId, label) => {
			if (!entries().some((e) => e.id === targetId)) throw new Error(`Entry ${targetId} not found`);
			return append({ kind: "label", targetId, label }, { type: "label", targetId, label });
		},
		branch: notHere("branch"),
		resetLeaf: notHere("resetLeaf"),
		branchWithSummary: notHere("branchWithSummary"),
	};
	return { manager, ops };
}

// The session file's entries (pi-rs writes them as pi does); the branch is the path from
// the last entry to the root.
function currentSessionFile() {
	return has("sessionFile") ? state.sessionFile : sessionFile;
}

function currentSessionName() {
	return (has("sessionName") ? state.sessionName : sessionName) ?? undefined;
}

function readEntries() {
	let text = "";
	const sessionFile = currentSessionFile();
	try {
		if (sessionFile) text = readFileSync(sessionFile, "utf8");
	} catch {
		text = "";
	}
	const all = [];
	for (const line of text.split("\n")) {
		if (!line.trim()) continue;
		try {
			all.push(JSON.parse(line));
		} catch {}
	}
	const header = all.find((e) => e.type === "session");
	const entries = all.filter((e) => e.type !== "session");
	const byId = new Map(entries.map((e) => [e.id, e]));
	const branch = [];
	let cursor = entries[entries.length - 1];
	const seen = new Set();
	while (cursor && !seen.has(cursor.id)) {
		seen.add(cursor.id);
		branch.unshift(cursor);
		cursor = cursor.parentId ? byId.get(cursor.parentId) : undefined;
	}
	return { header, entries, branch, leafId: branch[branch.length - 1]?.id ?? null };
}

// The host's mode ("interactive", "print", "json", "rpc") as pi 1.6 names it in `ctx.mode`.
function publicMode(mode) {
	return mode === "interactive" ? "tui" : (mode ?? "print");
}

function makeContext(extra) {
	const ctx = {
		ui: makeUi(),
		get hasUI() {
			return hello?.hasUI === true;
		},
		get cwd() {
			return hello?.cwd;
		},
		// pi 1.6's name for how pi runs: "tui", "rpc", "json" or "print".
		get mode() {
			return publicMode(hello?.mode);
		},
		sessionManager,
		modelRegistry,
		get model() {
			return state.model ?? undefined;
		},
		isIdle: () => (has("idle") ? state.idle === true : idle),
		get signal() {
			return currentSignal;
		},
		abort: () => send({ type: "abort" }),
		hasPendingMessages: () => (state.pendingMessages ?? 0) > 0,
		shutdown: () => send({ type: "shutdown" }),
		getContextUsage: () => state.contextUsage ?? undefined,
		compact: (options) => compactSession(options),
		getSystemPrompt: () => state.systemPrompt ?? "",
		isProjectTrusted: () => state.projectTrusted === true,
		...extra,
	};
	return ctx;
}

// pi's limited context of a `project_trust` handler: the folder, the mode, and dialogs
// only where pi-rs asks at startup (the terminal UI). Without one, dialogs answer at once
// and notices are handed back with the answer (pi-rs prints them on stderr).
function projectTrustContext(cwd, context, notices) {
	const hasUI = context?.hasUI === true;
	const select = async (title, options, opts) =>
		hasUI ? (await dialog("select", { title, options }, opts))?.value : undefined;
	return {
		cwd,
		mode: context?.mode ?? "print",
		hasUI,
		ui: {
			select,
			confirm: async (title, message) => (await select(`${title}\n${message}`, ["Yes", "No"])) === "Yes",
			input: async (title, placeholder, opts) =>
				hasUI ? (await dialog("input", { title, placeholder }, opts))?.value : undefined,
			notify: (message, type = "info") => {
				if (!hasUI) notices.push({ message: String(message), type: String(type) });
			},
		},
	};
}

// ---- ctx.modelRegistry (read API) -----------------------------------------------------

const modelKey = (m) => `${m?.provider}/${m?.id}`;
const modelRegistry = {
	refresh: () => {},
	getError: () => undefined,
	getAll: () => state.models ?? [],
	getAvailable: () => {
		const available = new Set((state.availableModels ?? []).map(([p, id]) => `${p}/${id}`));
		return (state.models ?? []).filter((m) => available.has(modelKey(m)));
	},
	find: (provider, modelId) =>
		(state.models ?? []).find((m) => m.provider === provider && m.id === modelId),
	hasConfiguredAuth: (model) =>
		(state.availableModels ?? []).some(([p, id]) => p === model?.provider && id === model?.id),
	getApiKey: async (model) =>
		(await call("get_api_key", { provider: model?.provider, modelId: model?.id })) ?? undefined,
	getApiKeyForProvider: async (provider) => (await call("get_api_key", { provider })) ?? undefined,
	getApiKeyAndHeaders: async (model) => {
		const apiKey = await call("get_api_key", { provider: model?.provider, modelId: model?.id });
		const headers = model?.headers && Object.keys(model.headers).length > 0 ? model.headers : undefined;
		return { ok: true, apiKey: apiKey ?? undefined, headers };
	},
	isUsingOAuth: () => false,
	getProviderDisplayName: (provider) => provider,
	registerProvider: () => toStderr("registerProvider is not supported by pi-rs yet"),
	unregisterProvider: () => {},
};

// ---- ctx.compact -----------------------------------------------------------------------
// pi-rs compacts in the background; onComplete gets pi's CompactionResult, onError the
// failure.
function compactSession(options) {
	const customInstructions = options?.customInstructions;
	call("compact", customInstructions ? { customInstructions } : {}).then(
		(result) => options?.onComplete?.(result),
		(err) => {
			if (options?.onError) options.onError(err instanceof Error ? err : new Error(String(err)));
			else toStderr(`compact failed: ${errorText(err)}`);
		},
	);
}

// ---- the command context: session control, executed by pi-rs ------------------------

// After a switch, `withSession` gets a fresh command context (pi's ReplacedSessionContext:
// its sendMessage / sendUserMessage return promises).
async function afterSwitch(result, withSession) {
	if (!result?.cancelled && withSession) {
		await withSession(
			commandContext({
				sendMessage: async (message, options) => pi.sendMessage(message, options),
				sendUserMessage: async (content, options) => pi.sendUserMessage(content, options),
			}),
		);
	}
	return { cancelled: result?.cancelled === true };
}

function commandContext(extra) {
	return makeContext({
		waitForIdle: async () => {
			await call("wait_for_idle");
		},
		newSession: async (options) => {
			const result = await call("new_session", { parentSession: options?.parentSession });
			if (!result?.cancelled && options?.setup) {
				// pi: setup runs on the new session's SessionManager after its
				// session_start, then the agent's messages are rebuilt from it.
				const { manager, ops } = setupSessionManager();
				await options.setup(manager);
				if (ops.length > 0) await call("session_setup", { entries: JSON.parse(JSON.stringify(ops)) });
			}
			return afterSwitch(result, options?.withSession);
		},
		fork: async (entryId, options) => {
			const result = await call("fork", { entryId, position: options?.position ?? "before" });
			return afterSwitch(result, options?.withSession);
		},
		navigateTree: async (targetId, options) =>
			call("navigate_tree", {
				targetId,
				summarize: options?.summarize,
				customInstructions: options?.customInstructions,
				replaceInstructions: options?.replaceInstructions,
				label: options?.label,
			}),
		switchSession: async (sessionPath, options) => {
			const result = await call("switch_session", { sessionPath });
			return afterSwitch(result, options?.withSession);
		},
		// pi-rs reloads (session_shutdown here too, new extension processes, their
		// session_start) and answers once done; this process stays until the command
		// that asked has finished (see the stdin "close" handler below).
		reload: async () => {
			await call("reload");
			reloaded = true;
		},
		...extra,
	});
}

// ---- the ExtensionAPI ----------------------------------------------------------------

const eventBus = (() => {
	const listeners = new Map();
	const deliver = (channel, data) => {
		for (const fn of listeners.get(channel) ?? []) {
			try {
				fn(data);
			} catch (err) {
				toStderr(`event bus handler failed: ${errorText(err)}`);
			}
		}
	};
	return {
		on(channel, fn) {
			const list = listeners.get(channel) ?? [];
			list.push(fn);
			listeners.set(channel, list);
			return () => listeners.set(channel, (listeners.get(channel) ?? []).filter((f) => f !== fn));
		},
		emit(channel, data) {
			// The other extensions get it through pi-rs (once they all run).
			if (loaded) send({ type: "emit", channel, data });
			deliver(channel, data);
		},
		deliver,
	};
})();

function exec(command, args = [], options = {}) {
	return new Promise((resolve) => {
		const child = spawn(command, args, {
			cwd: options.cwd ?? hello?.cwd,
			stdio: ["ignore", "pipe", "pipe"],
			shell: false,
		});
		let stdout = "";
		let stderr = "";
		let killed = false;
		child.stdout.on("data", (d) => (stdout += d));
		child.stderr.on("data", (d) => (stderr += d));
		const kill = () => {
			killed = true;
			child.kill("SIGTERM");
			setTimeout(() => child.exitCode === null && child.kill("SIGKILL"), 5000).unref();
		};
		const timer = options.timeout ? setTimeout(kill, options.timeout) : undefined;
		options.signal?.addEventListener("abort", kill, { once: true });
		child.on("error", (err) => {
			if (timer) clearTimeout(timer);
			resolve({ stdout, stderr: stderr + errorText(err), code: 1, killed });
		});
		child.on("close", (code) => {
			if (timer) clearTimeout(timer);
			resolve({ stdout, stderr, code: code ?? 1, killed });
		});
	});
}

const pi = {
	on(event, handler) {
		const list = handlers.get(event) ?? [];
		list.push(handler);
		handlers.set(event, list);
	},
	registerTool(tool) {
		tools.set(tool.name, tool);
		if (loaded) {
			// Active from the next model call on, as in pi.
			send({ type: "register_tool", tool: toolSpec(tool) });
			const info = {
				name: tool.name,
				description: tool.description,
				parameters: tool.parameters,
				sourceInfo: { path: extensionPath, source: "local" },
			};
			state.allTools = [...(state.allTools ?? []).filter((t) => t.name !== tool.name), info];
			if (!(state.activeTools ?? []).includes(tool.name)) {
				state.activeTools = [...(state.activeTools ?? []), tool.name];
			}
		}
	},
	registerCommand(name, options) {
		commands.set(name, { name, ...options });
	},
	registerShortcut(shortcut, options) {
		shortcuts.set(String(shortcut).toLowerCase(), options);
	},
	registerFlag(name, options) {
		flags.set(name, { name, ...options });
	},
	getFlag: (name) => flagValue(name),
	registerMessageRenderer(customType, renderer) {
		const known = messageRenderers.has(customType);
		messageRenderers.set(customType, renderer);
		// After loading pi-rs learns of the type here (at load, from `register`).
		if (loaded && !known) send({ type: "register_message_renderer", customType: String(customType) });
	},
	sendMessage(message, options) {
		notLoaded("sendMessage");
		send({ type: "send_message", message: { display: true, ...message }, options: options ?? {} });
	},
	sendUserMessage(content, options) {
		notLoaded("sendUserMessage");
		send({ type: "send_user_message", content, options: options ?? {} });
	},
	appendEntry(customType, data) {
		notLoaded("appendEntry");
		send({ type: "append_entry", customType, data });
	},
	setSessionName(name) {
		notLoaded("setSessionName");
		sessionName = name;
		state.sessionName = name;
		send({ type: "set_session_name", name });
	},
	getSessionName: () => currentSessionName(),
	setLabel(entryId, label) {
		notLoaded("setLabel");
		send({ type: "set_label", entryId, label: label ?? null });
	},
	exec: (command, args, options) => exec(command, args, options),
	getActiveTools: () => [...(state.activeTools ?? tools.keys())],
	getAllTools: () =>
		state.allTools ??
		[...tools.values()].map((t) => ({
			name: t.name,
			description: t.description,
			parameters: t.parameters,
			sourceInfo: { path: extensionPath, source: "local" },
		})),
	// pi changes the tools at once; here the next getActiveTools() shows the names the
	// registry knows, and pi-rs applies them before anything else this extension sends.
	setActiveTools: (toolNames) => {
		notLoaded("setActiveTools");
		const known = new Set((state.allTools ?? []).map((t) => t.name));
		const names = [...new Set(toolNames)].filter((n) => known.has(n) || tools.has(n));
		state.activeTools = names;
		call("set_active_tools", { toolNames: names }).catch((err) =>
			toStderr(`setActiveTools failed: ${errorText(err)}`),
		);
	},
	getCommands: () =>
		state.commands ??
		[...commands.values()].map((c) => ({
			name: c.name,
			description: c.description,
			source: "extension",
			sourceInfo: { path: extensionPath, source: "local" },
		})),
	// pi-rs switches (or reports why not as an extension error); the answer cannot wait
	// for that, so it is true whenever a model was named.
	setModel: async (model) => {
		notLoaded("setModel");
		if (!model?.provider || !model?.id) return false;
		send({ type: "set_model", provider: model.provider, modelId: model.id });
		return true;
	},
	getThinkingLevel: () => state.thinkingLevel ?? thinkingLevel,
	setThinkingLevel: (level) => {
		notLoaded("setThinkingLevel");
		thinkingLevel = level;
		state.thinkingLevel = level;
		send({ type: "set_thinking_level", level });
	},
	// As pi: registrations made while loading are queued and reach pi-rs's model registry
	// with `register`; unregistering while loading drops the queued ones of that name.
	// After loading they reach pi-rs's registry at once (a `call`; a config pi-rs rejects
	// is logged, as pi's registry would throw).
	registerProvider(name, config) {
		const json = providerConfig(name, config ?? {});
		if (!loaded) {
			pendingProviders.push({ name, config: json });
			return;
		}
		call("register_provider", { name, config: json }).catch((err) =>
			toStderr(`registerProvider("${name}") failed: ${errorText(err)}`),
		);
	},
	unregisterProvider(name) {
		oauthProviders.delete(name);
		const api = providerApis.get(name);
		providerApis.delete(name);
		if (api !== undefined && ![...providerApis.values()].includes(api)) jsStreams.delete(api);
		if (!loaded) {
			pendingProviders = pendingProviders.filter((p) => p.name !== name);
			return;
		}
		call("unregister_provider", { name, api }).catch((err) =>
			toStderr(`unregisterProvider("${name}") failed: ${errorText(err)}`),
		);
	},
	events: eventBus,
};

// ---- events --------------------------------------------------------------------------

async function runEvent(event) {
	const list = handlers.get(event.type) ?? [];
	const ctx = makeContext();
	let firstError;
	const call = async (h, ev) => {
		try {
			return await h(ev, ctx);
		} catch (err) {
			firstError ??= err;
			toStderr(`${event.type} handler failed: ${err?.stack ?? errorText(err)}`);
			return undefined;
		}
	};
	switch (event.type) {
		case "tool_call": {
			const before = JSON.stringify(event.input);
			for (const h of list) {
				try {
					const r = await h(event, ctx);
					if (r?.block) return { block: true, reason: r.reason };
				} catch (err) {
					throw err; // pi: a throwing tool_call handler blocks the call
				}
			}
			return JSON.stringify(event.input) !== before ? { input: event.input } : undefined;
		}
		case "tool_result": {
			const current = { ...event };
			let changed = false;
			for (const h of list) {
				const r = await call(h, current);
				if (!r) continue;
				for (const key of ["content", "details", "isError"]) {
					if (r[key] !== undefined) {
						current[key] = r[key];
						changed = true;
					}
				}
			}
			if (!changed && firstError) throw firstError;
			return changed
				? { content: current.content, details: current.details, isError: current.isError }
				: undefined;
		}
		case "context": {
			let messages = event.messages;
			let changed = false;
			for (const h of list) {
				const r = await call(h, { type: "context", messages });
				if (r?.messages) {
					messages = r.messages;
					changed = true;
				}
			}
			if (!changed && firstError) throw firstError;
			return changed ? { messages } : undefined;
		}
		case "before_agent_start": {
			let systemPrompt = event.systemPrompt;
			let promptChanged = false;
			let message;
			ctx.getSystemPrompt = () => systemPrompt;
			for (const h of list) {
				const r = await call(h, { ...event, systemPrompt });
				if (r?.message) message = r.message;
				if (r?.systemPrompt !== undefined) {
					systemPrompt = r.systemPrompt;
					promptChanged = true;
				}
			}
			if (!message && !promptChanged && firstError) throw firstError;
			const result = {};
			if (message) result.message = { display: true, ...message };
			if (promptChanged) result.systemPrompt = systemPrompt;
			return message || promptChanged ? result : undefined;
		}
		case "input": {
			let text = event.text;
			let images = event.images;
			for (const h of list) {
				const r = await call(h, { ...event, text, images });
				if (r?.action === "handled") return r;
				if (r?.action === "transform") {
					text = r.text;
					images = r.images ?? images;
				}
			}
			return text !== event.text || images !== event.images
				? { action: "transform", text, images }
				: { action: "continue" };
		}
		case "before_provider_request": {
			// pi hands handlers the payload object itself: a handler may return a
			// replacement or change it in place.
			let payload = event.payload;
			const before = JSON.stringify(payload);
			for (const h of list) {
				const r = await call(h, { type: "before_provider_request", payload });
				if (r !== undefined) payload = r;
			}
			if (JSON.stringify(payload) === before) {
				if (firstError) throw firstError;
				return undefined;
			}
			return payload;
		}
		case "message_end": {
			// pi: each handler sees the message as the previous one left it; a
			// replacement must keep the role (else it is an error and skipped).
			// A handler changing the message object in place changes it too, as in pi
			// (where the event carries the session's own message object).
			let message = event.message;
			const before = JSON.stringify(message);
			let changed = false;
			let roleError;
			for (const h of list) {
				const r = await call(h, { type: "message_end", message });
				if (!r?.message) continue;
				if (r.message.role !== message?.role) {
					roleError = "message_end handlers must return a message with the same role";
					toStderr(`message_end handler failed: ${roleError}`);
					continue;
				}
				message = r.message;
				changed = true;
			}
			if (changed || JSON.stringify(message) !== before) return { message };
			if (firstError) throw firstError;
			if (roleError) throw new Error(roleError);
			return undefined;
		}
		case "project_trust": {
			// pi: the first handler answering "yes" or "no" decides; a failing handler is
			// reported and the next one asked.
			const { trustContext, ...trustEvent } = event;
			const notices = [];
			const errors = [];
			const trustCtx = projectTrustContext(trustEvent.cwd, trustContext, notices);
			for (const h of list) {
				try {
					const r = await h(trustEvent, trustCtx);
					if (r.trusted === "undecided") continue;
					return { result: { trusted: r.trusted, remember: r.remember === true }, errors, notices };
				} catch (err) {
					errors.push(errorText(err));
				}
			}
			return { errors, notices };
		}
		case "resources_discover": {
			const found = { skillPaths: [], promptPaths: [], themePaths: [] };
			for (const h of list) {
				const r = await call(h, event);
				for (const key of Object.keys(found)) {
					if (Array.isArray(r?.[key])) found[key].push(...r[key]);
				}
			}
			if (firstError && Object.values(found).every((l) => l.length === 0)) throw firstError;
			return found;
		}
		case "user_bash": {
			for (const h of list) {
				const r = await call(h, event);
				if (!r) continue;
				if (r.result) return { result: r.result };
				if (r.operations?.exec) return { result: await runBashOperations(r.operations, event) };
			}
			if (firstError) throw firstError;
			return undefined;
		}
		default: {
			if (event.type === "session_start" || event.type === "session_switch") {
				sessionFile = event.sessionFile ?? sessionFile;
			}
			if (event.type === "thinking_level_select") thinkingLevel = event.level;
			if (event.type === "agent_start") idle = false;
			if (event.type === "agent_end") idle = true;
			let result;
			for (const h of list) {
				const r = await call(h, event);
				if (event.type.startsWith("session_before") && r) {
					result = r;
					if (r.cancel) return r;
				}
			}
			if (!result && firstError) throw firstError;
			return result;
		}
	}
}

// A `!` command run with the BashOperations a user_bash handler returned (pi runs them in
// its process; here the host does, and pi-rs gets the finished result).
async function runBashOperations(operations, event) {
	const chunks = [];
	let exitCode = null;
	let cancelled = false;
	try {
		const done = await operations.exec(event.command, event.cwd, {
			onData: (data) => chunks.push(Buffer.isBuffer(data) ? data : Buffer.from(String(data))),
		});
		exitCode = done?.exitCode ?? null;
		cancelled = exitCode === null;
	} catch (err) {
		chunks.push(Buffer.from(`${errorText(err)}\n`));
		exitCode = 1;
	}
	const output = Buffer.concat(chunks).toString("utf8").replace(/\r/g, "");
	return { output, exitCode: exitCode ?? undefined, cancelled, truncated: false };
}

// ---- tools and commands --------------------------------------------------------------

const running = new Map(); // request id -> AbortController

async function executeTool(message) {
	const tool = tools.get(message.toolName);
	if (!tool) throw new Error(`unknown tool ${message.toolName}`);
	const controller = new AbortController();
	running.set(message.id, controller);
	const onUpdate = (partial) => {
		send({
			type: "tool_update",
			id: message.id,
			content: toolContent(partial?.content ?? []),
			details: partial?.details,
		});
	};
	try {
		const params = tool.prepareArguments ? tool.prepareArguments(message.input) : message.input;
		const result = await tool.execute(
			message.toolCallId,
			params,
			controller.signal,
			onUpdate,
			makeContext(),
		);
		return {
			content: toolContent(result?.content ?? []),
			details: result?.details,
			isError: result?.isError === true ? true : undefined,
		};
	} finally {
		running.delete(message.id);
	}
}

async function runCommand(message) {
	const command = commands.get(message.name);
	if (!command) throw new Error(`unknown command /${message.name}`);
	const controller = new AbortController();
	running.set(message.id, controller);
	try {
		await command.handler(message.args ?? "", commandContext());
	} finally {
		running.delete(message.id);
	}
}

// ---- ctx.ui.onTerminalInput ----------------------------------------------------------
//
// pi runs these listeners on raw input before its UI handles it. pi-rs sends
// `terminal_input` requests (keys as the terminal sequences pi-tui reads, pastes wrapped
// in bracketed-paste markers) only while this extension has a listener, and waits a
// bounded time for the answer: `{consume: true}` or `{data}` (what goes on).

const terminalInputListeners = new Set();

function addTerminalInputListener(handler) {
	if (typeof handler !== "function" || !hello?.hasUI) return () => {};
	const entry = { handler };
	terminalInputListeners.add(entry);
	if (terminalInputListeners.size === 1) uiNotice("terminalInput", { listening: true });
	return () => {
		if (!terminalInputListeners.delete(entry)) return;
		if (terminalInputListeners.size === 0) uiNotice("terminalInput", { listening: false });
	};
}

function terminalInput(message) {
	let data = String(message.data ?? "");
	for (const { handler } of [...terminalInputListeners]) {
		let result;
		try {
			result = handler(data);
		} catch (err) {
			toStderr(`onTerminalInput handler failed: ${errorText(err)}`);
			continue;
		}
		if (result?.consume) return { consume: true };
		if (result?.data !== undefined) data = String(result.data);
	}
	return { data };
}

// ---- autocomplete: registerCommand's getArgumentCompletions, addAutocompleteProvider ----
//
// pi asks its editor's provider chain on the keys that open or update the popup; pi-rs
// does the same with its own provider, then (without blocking typing) sends this host
// `autocomplete` with its suggestions as `base` — what the first wrapper's
// `current.getSuggestions` returns — and shows the chain's answer if the editor has not
// changed since. Argument completions of an extension command come from
// `complete_arguments`.

function completionItems(items) {
	if (!Array.isArray(items)) return null;
	return items
		.filter((item) => item && typeof item === "object" && item.value !== undefined)
		.map((item) => ({
			value: String(item.value),
			label: String(item.label ?? item.value),
			...(item.description !== undefined && item.description !== null ? { description: String(item.description) } : {}),
		}));
}

async function completeArguments(message) {
	const command = commands.get(message.name);
	if (typeof command?.getArgumentCompletions !== "function") return null;
	return completionItems(await command.getArgumentCompletions(String(message.prefix ?? "")));
}

const autocompleteWrappers = [];
let autocompleteChain = null;
let autocompleteBase = null;
let autocompleteAbort = null;

// pi-tui's default completion: the prefix before the cursor becomes the item's value.
function applyCompletionDefault(lines, cursorLine, cursorCol, item, prefix) {
	const out = [...lines];
	const line = out[cursorLine] ?? "";
	const start = Math.max(0, cursorCol - String(prefix ?? "").length);
	out[cursorLine] = line.slice(0, start) + item.value + line.slice(cursorCol);
	return { lines: out, cursorLine, cursorCol: start + item.value.length };
}

function buildAutocompleteChain() {
	let provider = {
		getSuggestions: async () => autocompleteBase,
		applyCompletion: applyCompletionDefault,
		shouldTriggerFileCompletion: () => true,
	};
	for (const wrap of autocompleteWrappers) {
		try {
			provider = wrap(provider) ?? provider;
		} catch (err) {
			toStderr(`autocomplete provider factory failed: ${errorText(err)}`);
		}
	}
	return provider;
}

function addAutocompleteProvider(factory) {
	if (typeof factory !== "function") return;
	autocompleteWrappers.push(factory);
	autocompleteChain = null;
	uiNotice("addAutocompleteProvider", {});
}

async function autocomplete(message) {
	autocompleteAbort?.abort();
	const controller = new AbortController();
	autocompleteAbort = controller;
	autocompleteChain ??= buildAutocompleteChain();
	const base = message.base && typeof message.base === "object" ? message.base : null;
	autocompleteBase = base ? { items: completionItems(base.items) ?? [], prefix: String(base.prefix ?? "") } : null;
	const lines = Array.isArray(message.lines) ? message.lines.map(String) : [""];
	const result = await autocompleteChain.getSuggestions(lines, message.cursorLine ?? 0, message.cursorCol ?? 0, {
		signal: controller.signal,
		force: message.force === true,
	});
	if (!result || typeof result !== "object") return null;
	const items = completionItems(result.items);
	return items ? { items, prefix: String(result.prefix ?? "") } : null;
}

// ---- loading -------------------------------------------------------------------------

function toolSpec(t) {
	return {
		name: t.name,
		label: t.label,
		description: t.description ?? "",
		parameters: t.parameters ? JSON.parse(JSON.stringify(t.parameters)) : undefined,
		executionMode: t.executionMode,
		promptSnippet: t.promptSnippet,
		promptGuidelines: t.promptGuidelines ?? [],
		renderCall: typeof t.renderCall === "function" ? true : undefined,
		renderResult: typeof t.renderResult === "function" ? true : undefined,
		renderShell: t.renderShell === "self" ? "self" : undefined,
	};
}

function registration() {
	return {
		type: "register",
		protocolVersion: 1,
		name: path.basename(extensionPath),
		// pi's synchronous getters read the session state pi-rs sends.
		state: true,
		events: [...handlers.keys()],
		commands: [...commands.values()].map((c) => ({
			name: c.name,
			description: c.description,
			...(typeof c.getArgumentCompletions === "function" ? { argumentCompletions: true } : {}),
		})),
		tools: [...tools.values()].map(toolSpec),
		flags: [...flags.values()].map((f) => ({
			name: f.name,
			type: f.type === "boolean" ? "boolean" : "string",
			description: f.description,
			default: f.default,
		})),
		shortcuts: [...shortcuts.entries()].map(([key, s]) => ({ key, description: s?.description })),
		messageRenderers: [...messageRenderers.keys()],
		// pi waits for handlers without a limit; dialogs pause pi-rs's timeout anyway.
		timeoutMs: 600000,
		providers: pendingProviders,
	};
}

// A load failure: one line on stderr that pi-rs shows as the cause, then exit 1.
function failLoad(message) {
	process.stderr.write(`pi-rs-load-error: ${message.replace(/\n/g, " ")}\n`);
	process.exit(1);
}

async function load() {
	register(new URL("./hooks.mjs", import.meta.url), {
		data: { extensionPath, exe: process.env.PI_RS_EXE ?? "" },
	});
	let module;
	try {
		module = await import(pathToFileURL(extensionPath).href);
	} catch (err) {
		failLoad(errorText(err));
	}
	let factory = module?.default;
	if (factory && typeof factory === "object" && typeof factory.default === "function") {
		factory = factory.default;
	}
	if (typeof factory !== "function") {
		failLoad(`Extension does not export a valid factory function: ${extensionPath}`);
	}
	try {
		await factory(pi);
	} catch (err) {
		failLoad(errorText(err));
	}
	loaded = true;
	send(registration());
}

// ---- model requests -------------------------------------------------------------------

/** What pi-rs needs of an event: `partial` (the whole message so far) only as the block
 * the event is about, where pi-rs reads it (tool call id and name, signatures). */
function slimEvent(event) {
	if (!event || typeof event !== "object") return event;
	const { partial, ...rest } = event;
	if (
		partial &&
		typeof rest.contentIndex === "number" &&
		(rest.type === "toolcall_start" || rest.type === "text_end" || rest.type === "thinking_end")
	) {
		rest.block = partial.content?.[rest.contentIndex];
	}
	return rest;
}

// `provider_stream`: pi-rs asks the extension's streamSimple for a reply; every pi-ai
// event goes back as `stream_event`, then the `response`. `cancel` aborts its signal.
async function providerStream(message) {
	const run = jsStreams.get(message.api);
	if (!run) {
		answer(message.id, undefined, `no streamSimple is registered for api "${message.api}"`);
		return;
	}
	const controller = new AbortController();
	running.set(message.id, controller);
	try {
		const events = await run(message.model, message.context, {
			...(message.options ?? {}),
			signal: controller.signal,
		});
		for await (const event of events) {
			if (controller.signal.aborted) break;
			send({ type: "stream_event", id: message.id, event: slimEvent(event) });
			if (event?.type === "done" || event?.type === "error") break;
		}
		answer(message.id, null);
	} catch (err) {
		answer(message.id, undefined, errorText(err));
	} finally {
		running.delete(message.id);
	}
}

// `oauth`: a provider's sign-in (`action` "login": its callbacks become `stream_event`s and
// what the user types arrives as `oauth_input`), `refreshToken` ("refresh") or `getApiKey`
// ("api_key"). `cancel` aborts a login (callbacks.signal; pending prompts reject).
const oauthInputs = new Map(); // request id -> deliver(value)

async function oauthRequest(message) {
	const { id, provider, action } = message;
	const oauth = oauthProviders.get(provider);
	if (!oauth) {
		answer(id, undefined, `no oauth is registered for provider "${provider}"`);
		return;
	}
	const controller = new AbortController();
	running.set(id, controller);
	try {
		if (action === "refresh") {
			answer(id, await oauth.refreshToken(message.credentials));
		} else if (action === "api_key") {
			answer(id, await oauth.getApiKey(message.credentials));
		} else if (action === "login") {
			const queued = [];
			const waiting = [];
			oauthInputs.set(id, (value) => {
				const waiter = waiting.shift();
				if (waiter) waiter(String(value ?? ""));
				else queued.push(String(value ?? ""));
			});
			const cancelled = new Promise((_, reject) =>
				controller.signal.addEventListener("abort", () => reject(new Error("Login cancelled")), { once: true }),
			);
			cancelled.catch(() => {});
			const nextInput = () =>
				queued.length > 0
					? Promise.resolve(queued.shift())
					: Promise.race([new Promise((resolve) => waiting.push(resolve)), cancelled]);
			const event = (e) => send({ type: "stream_event", id, event: e });
			const callbacks = {
				onAuth: (info) => event({ type: "auth", url: info?.url, instructions: info?.instructions }),
				onPrompt: (prompt) => {
					event({ type: "prompt", message: prompt?.message ?? "", placeholder: prompt?.placeholder });
					return nextInput();
				},
				onProgress: (text) => event({ type: "progress", message: String(text) }),
				onManualCodeInput: () => {
					event({ type: "manual_input" });
					return nextInput();
				},
				// pi shows a selector; here the options are listed and their id typed.
				onSelect: async (prompt) => {
					const options = prompt?.options ?? [];
					const list = options.map((o) => `${o.id} (${o.label})`).join(", ");
					event({ type: "prompt", message: `${prompt?.message ?? "Select"}: ${list}` });
					const picked = (await nextInput()).trim();
					return options.find((o) => o.id === picked || o.label === picked)?.id;
				},
				signal: controller.signal,
			};
			answer(id, await Promise.race([oauth.login(callbacks), cancelled]));
		} else {
			answer(id, undefined, `unknown oauth action "${action}"`);
		}
	} catch (err) {
		answer(id, undefined, errorText(err));
	} finally {
		running.delete(id);
		oauthInputs.delete(id);
	}
}

// Requests the extension makes through pi-ai (`stream`, `complete`, `streamSimpleAnthropic`,
// …): a `call` of `llm_stream`, whose events arrive as `llm_event` lines.
const llmStreams = new Map(); // call id -> onEvent

function llmStream(model, context, options, onEvent, simple, api) {
	const { signal, ...rest } = options ?? {};
	const id = `h${++nextId}`;
	const result = new Promise((resolve, reject) => {
		pending.set(id, { resolve, reject });
	});
	llmStreams.set(id, onEvent);
	const params = JSON.parse(JSON.stringify({ model, context, options: rest, simple: simple === true, api }));
	send({ type: "call", id, method: "llm_stream", params });
	const onAbort = () => send({ type: "cancel_call", id });
	if (signal?.aborted) onAbort();
	else signal?.addEventListener?.("abort", onAbort, { once: true });
	return result.finally(() => {
		llmStreams.delete(id);
		signal?.removeEventListener?.("abort", onAbort);
	});
}

const currentTheme = makeTheme();
let keybindings = { definitions: {}, userBindings: {} };
const host = {
	version: "",
	cwd: process.cwd(),
	agentDir: "",
	mode: "print",
	hasUI: false,
	extensionPath,
	theme: () => currentTheme,
	keybindings: () => keybindings,
	request,
	send: (type, fields) => send({ ...fields, type }),
	// pi-ai's model catalog and requests (modules/pi-ai.mjs).
	ai: {
		getModels: () => state.models ?? [],
		stream: llmStream,
	},
	log: toStderr,
	// pi's built-in tools (createReadTool & co. without custom operations): definitions
	// from hello.builtinTools, calls as `run_tool` requests. A failed call throws, as pi's
	// tools do.
	tools: {
		definition: (name) => {
			const found = hello?.builtinTools?.find((t) => t.name === name);
			return found ? structuredClone(found) : undefined;
		},
		execute: async (name, cwd, params, _signal, _onUpdate, toolCallId) => {
			const result = await request("run_tool", { name, cwd, input: params, toolCallId });
			const content = toolContent(result?.content ?? []);
			if (result?.isError) {
				throw new Error(content.map((c) => (c.type === "text" ? c.text : "")).join("\n"));
			}
			return { content, details: result?.details };
		},
	},
};
globalThis.__piHost = host;

async function handle(message) {
	switch (message.type) {
		case "hello":
			hello = message;
			sessionFile = message.sessionFile ?? null;
			Object.assign(host, {
				version: message.piVersion ?? "",
				cwd: message.cwd,
				agentDir: message.agentDir,
				mode: message.mode,
				hasUI: message.hasUI === true,
			});
			if (message.theme) themeSpec = message.theme;
			if (message.keybindings) keybindings = message.keybindings;
			await load();
			return;
		case "response": {
			const waiter = pending.get(message.id);
			if (!waiter) return;
			pending.delete(message.id);
			if (message.error !== undefined) waiter.reject(new Error(message.error));
			else waiter.resolve(message.result);
			return;
		}
		case "event": {
			const run = runEvent(message.event);
			if (message.id === undefined) {
				run.catch(() => {});
				return;
			}
			try {
				answer(message.id, (await run) ?? undefined);
			} catch (err) {
				answer(message.id, undefined, errorText(err));
			}
			return;
		}
		case "execute_tool":
			try {
				answer(message.id, await executeTool(message));
			} catch (err) {
				answer(message.id, undefined, errorText(err));
			}
			return;
		case "command":
			try {
				await runCommand(message);
				answer(message.id, null);
			} catch (err) {
				answer(message.id, undefined, errorText(err));
			}
			return;
		case "cancel":
			running.get(message.id)?.abort();
			return;
		case "provider_stream":
			await providerStream(message);
			return;
		case "llm_event":
			llmStreams.get(message.id)?.(message.event);
			return;
		case "oauth":
			await oauthRequest(message);
			return;
		case "oauth_input":
			oauthInputs.get(message.id)?.(message.value);
			return;
		case "shortcut":
			try {
				const shortcut = shortcuts.get(message.key);
				if (!shortcut?.handler) throw new Error(`unknown shortcut ${message.key}`);
				await shortcut.handler(makeContext());
				answer(message.id, null);
			} catch (err) {
				answer(message.id, undefined, errorText(err));
			}
			return;
		case "ui_input":
			customInput(message);
			return;
		case "terminal_input":
			answer(message.id, terminalInput(message));
			return;
		case "complete_arguments":
		case "autocomplete":
			try {
				const run = message.type === "autocomplete" ? autocomplete(message) : completeArguments(message);
				answer(message.id, (await run) ?? null);
			} catch (err) {
				answer(message.id, undefined, errorText(err));
			}
			return;
		case "render":
			try {
				answer(message.id, render(message));
			} catch (err) {
				answer(message.id, undefined, errorText(err));
			}
			return;
		case "editor_input":
			editorInput(message);
			return;
		case "editor_set_text":
			editorSetText(message);
			return;
		case "ui_state":
			applyUiState(message);
			return;
		case "state":
			Object.assign(state, message.state ?? {});
			return;
		case "bus":
			eventBus.deliver(message.channel, message.data);
			return;
		default:
			return;
	}
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
	if (!line.trim()) return;
	let message;
	try {
		message = JSON.parse(line);
	} catch {
		return;
	}
	handle(message).catch((err) => toStderr(`host error: ${err?.stack ?? errorText(err)}`));
});
// After ctx.reload() pi-rs closes stdin once it answered: the command that asked may
// still run the code after `await ctx.reload()` (pi runs it in the old runtime), within
// pi-rs's shutdown grace time.
lines.on("close", () => {
	if (!reloaded || running.size === 0) process.exit(0);
	const check = setInterval(() => {
		if (running.size === 0) process.exit(0);
	}, 10);
	check.unref?.();
	setTimeout(() => process.exit(0), 1500).unref?.();
});
process.on("unhandledRejection", (err) => toStderr(`unhandled rejection: ${err?.stack ?? errorText(err)}`));
