// pi-ai.mjs against the real pi-ai: StringEnum's schema text, the event stream classes,
// calculateCost and the thinking-level helpers give the same results; complete/stream/getModel
// go through a stand-in `globalThis.__piHost.ai` and behave as pi-ai's do.
import { both, check, finish, ours, real, same } from "./harness.mjs";

const mine = await ours("pi-ai.mjs");
const theirs = await real("@mariozechner/pi-ai/dist/index.js");

for (const [name, args] of Object.entries({
  plain: [["list", "add", "toggle", "clear"]],
  described: [["a", "b"], { description: "pick one", default: "a" }],
  emptyDescription: [["a"], { description: "", default: "" }],
  extraOptionsDropped: [["a"], { title: "t", examples: ["a"] }],
})) {
  both(`StringEnum ${name}`, (m) => JSON.stringify(m.StringEnum(...args)), mine, theirs);
}
same("Type is typebox's", JSON.stringify(mine.Type.Object({ a: mine.Type.String() })), JSON.stringify(theirs.Type.Object({ a: theirs.Type.String() })));

const usage = () => ({ input: 1200, output: 345, cacheRead: 99, cacheWrite: 7, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const model = { id: "m", provider: "p", api: "test-api", reasoning: true, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } };
both("calculateCost", (m) => { const u = usage(); const c = m.calculateCost(model, u); return [c, u]; }, mine, theirs);

const models = [
  { reasoning: false },
  { reasoning: true },
  { reasoning: true, thinkingLevelMap: { xhigh: "max" } },
  { reasoning: true, thinkingLevelMap: { minimal: null, low: null } },
  { reasoning: true, thinkingLevelMap: { high: null, xhigh: null, medium: null } },
];
for (const [i, m] of models.entries()) {
  both(`getSupportedThinkingLevels ${i}`, (x) => x.getSupportedThinkingLevels(m), mine, theirs);
  for (const level of ["off", "minimal", "low", "medium", "high", "xhigh", "bogus"]) {
    both(`clampThinkingLevel ${i} ${level}`, (x) => x.clampThinkingLevel(m, level), mine, theirs);
  }
}
for (const [a, b] of [[null, model], [model, { ...model }], [model, { ...model, id: "n" }], [undefined, undefined]]) {
  both("modelsAreEqual", (x) => x.modelsAreEqual(a, b), mine, theirs);
}

// Event streams: the same iteration order and final result for the same pushes.
async function drive(m, script) {
  const s = m.createAssistantMessageEventStream();
  const seen = [];
  const reader = (async () => { for await (const e of s) seen.push(e.type); })();
  for (const step of script) {
    if (step === "end") s.end();
    else s.push(step);
    await new Promise((r) => setTimeout(r, 0));
  }
  s.end();
  await reader;
  return { seen, result: await Promise.race([s.result(), new Promise((r) => setTimeout(() => r("pending"), 20))]) };
}
const msg = { role: "assistant", content: [{ type: "text", text: "hi" }], stopReason: "stop" };
for (const [name, script] of Object.entries({
  done: [{ type: "start" }, { type: "text_delta", delta: "h" }, { type: "done", reason: "stop", message: msg }, { type: "text_delta" }],
  error: [{ type: "start" }, { type: "error", reason: "error", error: { ...msg, stopReason: "error" } }],
  endedEarly: [{ type: "start" }, "end", { type: "done", message: msg }],
})) {
  same(`event stream ${name}`, await drive(mine, script), await drive(theirs, script));
}

// The API registry: extension providers win for their api, with pi-ai's mismatch check.
for (const m of [mine, theirs]) {
  m.registerApiProvider({ api: "test-api", stream: () => "own", streamSimple: () => "own-simple" }, "src");
}
both("registered provider streams", (m) => [m.stream(model, {}), m.streamSimple(model, {})], mine, theirs);
both("mismatched api throws", (m) => m.getApiProvider("test-api").stream({ ...model, api: "other" }, {}), mine, theirs);
for (const m of [mine, theirs]) m.unregisterApiProviders("src");
both("unregistered", (m) => m.getApiProvider("test-api") === undefined, mine, theirs);

// Through the host: events are forwarded, the final message resolves complete().
const calls = [];
globalThis.__piHost = {
  ai: {
    getModels: () => [model, { ...model, id: "m2" }, { ...model, provider: "q", id: "z" }],
    stream: async (mdl, context, options, onEvent, simple, api) => {
      calls.push({ model: mdl.id, context, maxTokens: options.maxTokens, simple, ...(api ? { api } : {}) });
      if (context.fail === "reject") throw new Error("host broke");
      const final = context.fail ? { ...msg, stopReason: "error", errorMessage: "429" } : msg;
      onEvent({ type: "start", partial: msg });
      onEvent({ type: "text_delta", contentIndex: 0, delta: "hi", partial: msg });
      return final;
    },
  },
};
const reply = await mine.complete(model, { messages: [] }, { maxTokens: 5 });
same("complete resolves the host's message", reply, msg);
same("host saw the request", calls[0], { model: "m", context: { messages: [] }, maxTokens: 5, simple: false });
const events = [];
for await (const e of mine.streamSimple(model, { messages: [] }, {})) events.push(e.type);
same("stream events", events, ["start", "text_delta", "done"]);
same("simple flag", calls[1].simple, true);
// pi-ai's per-API functions run pi-rs's client of their API, whatever model.api says.
for (const [name, api, simple] of [
  ["streamAnthropic", "anthropic-messages", false],
  ["streamSimpleAnthropic", "anthropic-messages", true],
  ["streamSimpleOpenAIResponses", "openai-responses", true],
  ["streamOpenAICompletions", "openai-completions", false],
  ["streamSimpleGoogle", "google-generative-ai", true],
]) {
  check(`${name} is exported by pi's pi-ai too`, typeof theirs[name] === "function", name);
  const types = [];
  for await (const e of mine[name](model, { messages: [] }, {})) types.push(e.type);
  same(`${name} events`, types, ["start", "text_delta", "done"]);
  same(`${name} forces its api`, [calls.at(-1).api, calls.at(-1).simple], [api, simple]);
}
const failed = await mine.complete(model, { messages: [], fail: true });
same("provider error resolves with stopReason error", [failed.stopReason, failed.errorMessage], ["error", "429"]);
const rejected = await mine.complete(model, { messages: [], fail: "reject" });
same("host rejection becomes an error message", [rejected.stopReason, rejected.errorMessage, rejected.content], ["error", "host broke", []]);
same("getModel", mine.getModel("p", "m2")?.id, "m2");
same("getModel missing", mine.getModel("p", "nope"), undefined);
same("getProviders", mine.getProviders(), ["p", "q"]);
same("getModels", mine.getModels("q").map((m) => m.id), ["z"]);
delete globalThis.__piHost;
const noHost = await mine.complete(model, { messages: [] });
check("without a host complete reports why", noHost.stopReason === "error" && /__piHost/.test(noHost.errorMessage), JSON.stringify(noHost));

finish("pi-ai");
