// Regenerates src/ai/catalog.json (the built-in model catalogue) from the reference pi's
// published model list. Usage:
//   node scripts/gen-catalog.mjs [path/to/pi-ai/dist/models.generated.js] > src/ai/catalog.json
// The output is plain data (model facts); commit it. Only the providers pi-rs ships are kept.
import { pathToFileURL } from "node:url";
import os from "node:os";

const defaultPath = `${os.homedir()}/.cache/pi-reference/0.73.1/node_modules/@mariozechner/pi-ai/dist/models.generated.js`;
const source = process.argv[2] ?? defaultPath;
const { MODELS } = await import(pathToFileURL(source).href);

const PROVIDERS = ["anthropic", "openai", "google", "openrouter", "groq", "xai", "cerebras", "mistral", "deepseek"];
const SUPPORTED_APIS = new Set(["anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"]);

// Mistral's native "conversations" API is not implemented; its OpenAI-compatible chat
// completions endpoint serves the same models.
const MISTRAL_COMPAT = {
  supportsStore: false,
  supportsDeveloperRole: false,
  supportsReasoningEffort: false,
  supportsStrictMode: false,
  maxTokensField: "max_tokens",
};

const out = {};
for (const provider of PROVIDERS) {
  const models = [];
  for (const m of Object.values(MODELS[provider] ?? {})) {
    let { api, baseUrl, compat } = m;
    if (provider === "mistral" && api === "mistral-conversations") {
      api = "openai-completions";
      baseUrl = "https://api.mistral.ai/v1";
      compat = { ...MISTRAL_COMPAT, ...(compat ?? {}) };
    }
    if (!SUPPORTED_APIS.has(api)) continue;
    const entry = {
      id: m.id,
      name: m.name,
      api,
      provider,
      baseUrl,
      reasoning: !!m.reasoning,
      input: m.input,
      cost: m.cost,
      contextWindow: m.contextWindow,
      maxTokens: m.maxTokens,
    };
    if (m.thinkingLevelMap) entry.thinkingLevelMap = m.thinkingLevelMap;
    if (m.headers && Object.keys(m.headers).length > 0) entry.headers = m.headers;
    if (compat) entry.compat = compat;
    models.push(entry);
  }
  out[provider] = models;
}
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
