// pi-rs's own `@mariozechner/pi-ai` module for pi extensions.
//
// In pi this is the LLM library; in pi-rs the LLM lives in Rust, so everything that talks to a
// model goes through the Node host (`globalThis.__piHost.ai`, contract in host.mjs):
// `stream`/`complete`/`streamSimple`/`completeSimple` run the request in pi-rs, and the model
// catalog (`getModel`, `getModels`, `getProviders`) is pi-rs's. An extension may still register
// its own API implementation with `registerApiProvider` (custom providers): requests for that
// `model.api` then run in JavaScript, as in pi.
//
// pi-ai's per-API functions (`streamAnthropic`, `streamSimpleOpenAIResponses`, …) run
// pi-rs's client for that API through the host too.
//
// Pure helpers behave as pi-ai 0.73.1's: `StringEnum`, `Type` (typebox), `EventStream`,
// `AssistantMessageEventStream`, `createAssistantMessageEventStream`, `calculateCost`,
// `getSupportedThinkingLevels`, `clampThinkingLevel`, `modelsAreEqual`. Types (`Model`,
// `Context`, `AssistantMessage`, …) exist only in TypeScript and vanish when transpiled.

import { hostMember } from "./host.mjs";
import { Type } from "./typebox.mjs";

export { Type };

/**
 * A string enum as `{ type: "string", enum }` (providers such as Google reject anyOf/const):
 * description and default are copied when truthy, as pi-ai does.
 */
export function StringEnum(values, options) {
  return Type.Unsafe({
    type: "string",
    enum: values,
    ...(options?.description ? { description: options.description } : {}),
    ...(options?.default ? { default: options.default } : {}),
  });
}

/**
 * An async-iterable queue of events that completes on the event `isComplete` accepts; `result()`
 * resolves with `extractResult` of that event (or the value given to `end`).
 */
export class EventStream {
  #queue = [];
  #waiting = [];
  #done = false;
  #resolveResult;
  #result;

  constructor(isComplete, extractResult) {
    this.isComplete = isComplete;
    this.extractResult = extractResult;
    this.#result = new Promise((resolve) => {
      this.#resolveResult = resolve;
    });
  }

  push(event) {
    if (this.#done) return;
    if (this.isComplete(event)) {
      this.#done = true;
      this.#resolveResult(this.extractResult(event));
    }
    const waiter = this.#waiting.shift();
    if (waiter) waiter({ value: event, done: false });
    else this.#queue.push(event);
  }

  end(result) {
    this.#done = true;
    if (result !== undefined) this.#resolveResult(result);
    for (const waiter of this.#waiting.splice(0)) waiter({ value: undefined, done: true });
  }

  async *[Symbol.asyncIterator]() {
    for (;;) {
      if (this.#queue.length > 0) {
        yield this.#queue.shift();
      } else if (this.#done) {
        return;
      } else {
        const next = await new Promise((resolve) => this.#waiting.push(resolve));
        if (next.done) return;
        yield next.value;
      }
    }
  }

  result() {
    return this.#result;
  }
}

/** The stream of one assistant reply: completes on `done` (its message) or `error` (its error). */
export class AssistantMessageEventStream extends EventStream {
  constructor() {
    super(
      (event) => event.type === "done" || event.type === "error",
      (event) => {
        if (event.type === "done") return event.message;
        if (event.type === "error") return event.error;
        throw new Error("Unexpected event type for final result");
      },
    );
  }
}

export function createAssistantMessageEventStream() {
  return new AssistantMessageEventStream();
}

// --- API providers registered by extensions -------------------------------------------------

const apiProviders = new Map();

function guardApi(api, run) {
  return (model, context, options) => {
    if (model.api !== api) throw new Error(`Mismatched api: ${model.api} expected ${api}`);
    return run(model, context, options);
  };
}

export function registerApiProvider(provider, sourceId) {
  apiProviders.set(provider.api, {
    provider: {
      api: provider.api,
      stream: guardApi(provider.api, provider.stream),
      streamSimple: guardApi(provider.api, provider.streamSimple),
    },
    sourceId,
  });
}

export function getApiProvider(api) {
  return apiProviders.get(api)?.provider;
}

export function getApiProviders() {
  return Array.from(apiProviders.values(), (entry) => entry.provider);
}

export function unregisterApiProviders(sourceId) {
  for (const [api, entry] of apiProviders) {
    if (entry.sourceId === sourceId) apiProviders.delete(api);
  }
}

export function clearApiProviders() {
  apiProviders.clear();
}

// --- Requests through pi-rs --------------------------------------------------------------------

/** An AssistantMessage for a request that failed before the host produced one. */
function failedMessage(model, error, aborted) {
  return {
    role: "assistant",
    content: [],
    api: model?.api,
    provider: model?.provider,
    model: model?.id,
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: aborted ? "aborted" : "error",
    errorMessage: error instanceof Error ? error.message : String(error),
    timestamp: Date.now(),
  };
}

function streamThroughHost(model, context, options, simple, api) {
  const events = new AssistantMessageEventStream();
  let run;
  try {
    run = hostMember("ai.stream", "pi-ai stream/complete");
  } catch (error) {
    // pi-ai reports failures as an error event, never by throwing from stream().
    const message = failedMessage(model, error, false);
    events.push({ type: "error", reason: "error", error: message });
    events.end();
    return events;
  }
  Promise.resolve()
    .then(() => run(model, context, options ?? {}, (event) => events.push(event), simple, api))
    .then(
      (message) => {
        if (message !== undefined) {
          const type = message.stopReason === "error" || message.stopReason === "aborted" ? "error" : "done";
          if (type === "done") events.push({ type, reason: message.stopReason, message });
          else events.push({ type, reason: message.stopReason, error: message });
        }
        events.end();
      },
      (error) => {
        const message = failedMessage(model, error, options?.signal?.aborted === true);
        events.push({ type: "error", reason: message.stopReason, error: message });
        events.end();
      },
    );
  return events;
}

/** Streams one reply: an extension-registered provider for `model.api`, else pi-rs. */
export function stream(model, context, options) {
  const own = getApiProvider(model.api);
  if (own) return own.stream(model, context, options);
  return streamThroughHost(model, context, options, false);
}

export async function complete(model, context, options) {
  return stream(model, context, options).result();
}

export function streamSimple(model, context, options) {
  const own = getApiProvider(model.api);
  if (own) return own.streamSimple(model, context, options);
  return streamThroughHost(model, context, options, true);
}

export async function completeSimple(model, context, options) {
  return streamSimple(model, context, options).result();
}

// --- pi-ai's per-API stream functions ----------------------------------------------------
//
// `streamAnthropic(model, context, options)` & co. run pi-rs's client for their API with
// `model` (its `baseUrl`, `id`, headers) whatever `model.api` says, as pi-ai's do. The
// plain ones take provider options, of which pi-rs reads the common ones (apiKey, headers,
// maxTokens, temperature, sessionId, cacheRetention, signal); the Simple ones also read
// `reasoning`.

function perApi(api, simple) {
  return (model, context, options) => streamThroughHost(model, context, options, simple, api);
}

export const streamAnthropic = perApi("anthropic-messages", false);
export const streamSimpleAnthropic = perApi("anthropic-messages", true);
export const streamOpenAICompletions = perApi("openai-completions", false);
export const streamSimpleOpenAICompletions = perApi("openai-completions", true);
export const streamOpenAIResponses = perApi("openai-responses", false);
export const streamSimpleOpenAIResponses = perApi("openai-responses", true);
export const streamAzureOpenAIResponses = perApi("azure-openai-responses", false);
export const streamSimpleAzureOpenAIResponses = perApi("azure-openai-responses", true);
export const streamOpenAICodexResponses = perApi("openai-codex-responses", false);
export const streamSimpleOpenAICodexResponses = perApi("openai-codex-responses", true);
export const streamGoogle = perApi("google-generative-ai", false);
export const streamSimpleGoogle = perApi("google-generative-ai", true);
export const streamGoogleVertex = perApi("google-vertex", false);
export const streamSimpleGoogleVertex = perApi("google-vertex", true);
export const streamMistral = perApi("mistral-conversations", false);
export const streamSimpleMistral = perApi("mistral-conversations", true);

// --- Models ------------------------------------------------------------------------------------

function catalog() {
  const models = hostMember("ai.getModels", "pi-ai getModel/getModels/getProviders")();
  return Array.isArray(models) ? models : [];
}

export function getModel(provider, modelId) {
  return catalog().find((m) => m.provider === provider && m.id === modelId);
}

export function getProviders() {
  return [...new Set(catalog().map((m) => m.provider))];
}

export function getModels(provider) {
  return catalog().filter((m) => m.provider === provider);
}

/** Fills `usage.cost` from the model's per-million prices and returns it. */
export function calculateCost(model, usage) {
  usage.cost.input = (model.cost.input / 1000000) * usage.input;
  usage.cost.output = (model.cost.output / 1000000) * usage.output;
  usage.cost.cacheRead = (model.cost.cacheRead / 1000000) * usage.cacheRead;
  usage.cost.cacheWrite = (model.cost.cacheWrite / 1000000) * usage.cacheWrite;
  usage.cost.total = usage.cost.input + usage.cost.output + usage.cost.cacheRead + usage.cost.cacheWrite;
  return usage.cost;
}

const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];

/** The thinking levels a model accepts: "off" only without reasoning; "xhigh" only when mapped. */
export function getSupportedThinkingLevels(model) {
  if (!model.reasoning) return ["off"];
  return THINKING_LEVELS.filter((level) => {
    const mapped = model.thinkingLevelMap?.[level];
    if (mapped === null) return false;
    if (level === "xhigh") return mapped !== undefined;
    return true;
  });
}

/** The nearest supported level: the requested one, else the next higher, else the next lower. */
export function clampThinkingLevel(model, level) {
  const available = getSupportedThinkingLevels(model);
  if (available.includes(level)) return level;
  const at = THINKING_LEVELS.indexOf(level);
  if (at === -1) return available[0] ?? "off";
  const higher = THINKING_LEVELS.slice(at + 1).find((l) => available.includes(l));
  if (higher) return higher;
  const lower = THINKING_LEVELS.slice(0, at)
    .reverse()
    .find((l) => available.includes(l));
  return lower ?? available[0] ?? "off";
}

export function modelsAreEqual(a, b) {
  if (!a || !b) return false;
  return a.id === b.id && a.provider === b.provider;
}

// A time-ordered UUID (version 7, RFC 9562): 48 bits of milliseconds since the epoch
// (`timestampMs`, default now), then random bits with the version and variant set. Ids
// made in the same millisecond keep their order through a counter in the random part.
let lastUuidMs = -1;
let uuidCounter = 0;
export function uuidv7(timestampMs) {
  const ms = timestampMs ?? Math.max(Date.now(), lastUuidMs);
  if (!Number.isInteger(ms) || ms < 0 || ms > 0xffffffffffff) {
    throw new RangeError("UUIDv7 timestamp must be an integer between 0 and 281474976710655");
  }
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  if (timestampMs === undefined) {
    uuidCounter = ms === lastUuidMs ? (uuidCounter + 1) & 0xfff : bytes[6] & 0x07;
    lastUuidMs = ms;
    bytes[6] = uuidCounter >> 8;
    bytes[7] = uuidCounter & 0xff;
  }
  let rest = ms;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = rest % 256;
    rest = Math.floor(rest / 256);
  }
  bytes[6] = 0x70 | (bytes[6] & 0x0f);
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
