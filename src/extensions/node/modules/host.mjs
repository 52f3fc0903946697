// Access to pi-rs from the extension modules (shared helper, not a module extensions import).
//
// The Node extension host (src/extensions/node/) defines `globalThis.__piHost` before it loads
// any extension. The modules in this folder only reach pi-rs through it; these are the members
// they use (each optional: a module that needs a missing one throws a clear error when called,
// never at import time, so extensions that do not use it still load):
//
//   __piHost.ai.getModels()                    → Model[]   (sync) every model pi-rs knows, in
//                                                 pi-ai's Model shape (id, name, api, provider,
//                                                 baseUrl, reasoning, input, cost, contextWindow,
//                                                 maxTokens, …). Backs getModel/getModels/getProviders.
//   __piHost.ai.stream(model, context, options, onEvent, simple, api)
//                                              → Promise<AssistantMessage>. Runs one LLM request
//                                                 through pi-rs's providers (context = pi-ai Context:
//                                                 systemPrompt, messages, tools). Calls
//                                                 onEvent(event) for each pi-ai
//                                                 AssistantMessageEvent, the final `done`/`error`
//                                                 included; resolves with the final message (its
//                                                 stopReason is "error"/"aborted" on failure — it
//                                                 does not reject for provider errors). options may
//                                                 hold an AbortSignal in `signal`. `simple` is true
//                                                 for streamSimple/completeSimple (options carry
//                                                 `reasoning` instead of provider options).
//                                                 `api`, when given, forces pi-rs's client
//                                                 for that API (streamAnthropic & co.).
//   __piHost.theme()                           → the current Theme (the object pi passes as
//                                                 ctx.ui.theme: fg(color, text), bg(color, text),
//                                                 bold, italic, underline, inverse, strikethrough);
//                                                 used by getMarkdownTheme, DynamicBorder,
//                                                 BorderedLoader, keyHint, getSettingsListTheme, …
//   __piHost.highlightCode(code, lang)         → optional, string[]: pi-rs's syntax highlighting
//                                                 of code as themed lines (highlightCode and the
//                                                 markdown theme); without it code is one color.
//   __piHost.agentDir                          → string, pi-rs's agent folder (getAgentDir()).
//   __piHost.version                           → string, the pi version pi-rs reports (VERSION),
//                                                 read once when pi-coding-agent is imported.
//   __piHost.keybindings()                     → optional, { definitions, userBindings }: pi's
//                                                 app actions ({ "app.tools.expand": { defaultKeys,
//                                                 description }, … }) and the user's
//                                                 keybindings.json; read on the first
//                                                 getKeybindings() (keyHint, Editor, SelectList, …).
//   __piHost.tools.definition(name)            → (sync) { name, label, description, parameters,
//                                                 promptSnippet?, … } of pi-rs's built-in tool, or
//                                                 undefined.
//   __piHost.tools.execute(name, cwd, params, signal, onUpdate, toolCallId)
//                                              → Promise<AgentToolResult>; runs pi-rs's built-in
//                                                 tool `name` (read, bash, edit, write, grep, find,
//                                                 ls) in `cwd`. Backs the create*Tool factories.
//
// The host should also call pi-tui's setKittyProtocolActive(true) when the terminal speaks the
// Kitty keyboard protocol, so matchesKey reads ambiguous keys as pi does.

/** The host object, or an error naming what the caller needed. */
export function piHost(what) {
  const host = globalThis.__piHost;
  if (host === undefined || host === null) {
    throw new Error(`${what} needs pi-rs's extension host (globalThis.__piHost is not set)`);
  }
  return host;
}

/** A member of the host, or an error naming it. */
export function hostMember(path, what) {
  let value = piHost(what);
  for (const part of path.split(".")) {
    value = value?.[part];
  }
  if (value === undefined) {
    throw new Error(`${what} needs __piHost.${path}, which this pi-rs build does not provide`);
  }
  return value;
}
