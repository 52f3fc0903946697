//! Reading `models.json` (pi's format) into typed provider and model definitions.
//!
//! The file may contain `//` comments and trailing commas, as pi allows. Every problem is
//! reported with the file, the JSON path (`providers.ollama.models[0].contextWindow`) and
//! what to do about it; all problems are collected, not just the first. Nothing here
//! panics on bad input, and nothing touches the built-in catalogue (see `registry`).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::ai::model::InputKind;

/// A provider entry of models.json.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderConfig {
    pub name: Option<String>,
    pub base_url: Option<String>,
    /// Unresolved: `!command`, an env var name or a literal.
    pub api_key: Option<String>,
    pub api: Option<String>,
    pub headers: BTreeMap<String, String>,
    pub compat: Option<Value>,
    pub auth_header: bool,
    pub models: Vec<ModelDef>,
    pub model_overrides: Vec<(String, ModelOverride)>,
}

/// Partial model cost (overrides may set only some prices).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CostDef {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
}

/// Fields shared by a model definition and a model override.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelFields {
    pub name: Option<String>,
    pub reasoning: Option<bool>,
    pub thinking_level_map: Option<BTreeMap<String, Option<String>>>,
    pub input: Option<Vec<InputKind>>,
    pub cost: Option<CostDef>,
    pub context_window: Option<u64>,
    pub max_tokens: Option<u64>,
    pub headers: BTreeMap<String, String>,
    pub compat: Option<Value>,
    /// pi 1.6: `samplingParams`, merged into OpenAI-compatible request bodies.
    pub sampling_params: Option<Map<String, Value>>,
    /// pi 1.6: `samplingParamsByThinkingLevel`, keyed by pi level name.
    pub sampling_params_by_level: Option<BTreeMap<String, Map<String, Value>>>,
    /// pi 1.6: `inputLimits` (checked, kept, not acted on yet).
    pub input_limits: Option<Value>,
    /// pi 1.6: `promptCache` lifetimes in seconds (checked, kept).
    pub prompt_cache: Option<Value>,
    /// pi 1.6: `cost.tiers` (checked, kept).
    pub cost_tiers: Option<Vec<Value>>,
}

/// A custom model of a provider.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelDef {
    pub id: String,
    pub api: Option<String>,
    pub base_url: Option<String>,
    pub fields: ModelFields,
}

/// Changes to one built-in model (`modelOverrides`).
pub type ModelOverride = ModelFields;

/// The whole file, providers in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelsConfig {
    pub providers: Vec<(String, ProviderConfig)>,
}

/// Removes `//` line comments and trailing commas outside string literals.
pub fn strip_json_comments(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let chars: Vec<char> = input.chars().collect();
    let mut i = 0;
    let mut in_string = false;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 2;
                continue;
            }
            if c == '"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            ',' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j].is_whitespace() {
                    j += 1;
                }
                if !matches!(chars.get(j), Some('}' | ']')) {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// The value shape pi 1.6's schema gives a `compat` flag.
enum CompatShape {
    Bool,
    Number,
    Object,
    Array,
    OneOf(&'static [&'static str]),
}

/// The shape of a known `compat` flag (every API's flags of pi 1.6; `None` = unknown).
fn compat_shape(key: &str) -> Option<CompatShape> {
    const BOOLS: &[&str] = &[
        "supportsStore",
        "supportsDeveloperRole",
        "supportsReasoningEffort",
        "supportsUsageInStreaming",
        "supportsFinishReason",
        "requiresToolResultName",
        "requiresAssistantAfterToolResult",
        "requiresNonNullAssistantContent",
        "requiresToolsWithToolHistory",
        "requiresThinkingAsText",
        "requiresReasoningContentOnAssistantMessages",
        "zaiToolStream",
        "supportsThinkingTokenBudget",
        "supportsOpenAIGrammarTools",
        "supportsMidConvoSystemMessages",
        "supportsMidConvoToolAdditions",
        "supportsStrictMode",
        "sendSessionAffinityHeaders",
        "supportsLongCacheRetention",
        "supportsAdditionalTools",
        "supportsToolSearch",
        "supportsExplicitPromptCacheMode",
        "supportsMidConvoEffort",
        "supportsMaxOutputTokens",
        "supportsEagerToolInputStreaming",
        "supportsCacheControlOnTools",
        "supportsTemperature",
        "forceAdaptiveThinking",
        "allowEmptySignature",
        "supportsStrictTools",
        "supportsMidConvoToolChanges",
        "supportsMessageThreads",
        "sendImageOptInHeader",
    ];
    if BOOLS.contains(&key) {
        return Some(CompatShape::Bool);
    }
    Some(match key {
        "vllmPriority" => CompatShape::Number,
        "chatTemplateKwargs"
        | "chatTemplateArgs"
        | "openRouterRouting"
        | "vercelGatewayRouting" => CompatShape::Object,
        "allowedFallbackModels" => CompatShape::Array,
        "maxTokensField" => CompatShape::OneOf(&["max_completion_tokens", "max_tokens"]),
        "thinkingFormat" => CompatShape::OneOf(&[
            "openai",
            "openrouter",
            "deepseek",
            "together",
            "baseten",
            "zai",
            "qwen",
            "chat-template",
            "qwen-chat-template",
            "string-thinking",
            "ant-ling",
        ]),
        "thinkingTokenBudgetField" => CompatShape::OneOf(&[
            "thinking_token_budget",
            "thinking_budget",
            "thinking_budget_tokens",
        ]),
        "cacheControlFormat" => CompatShape::OneOf(&["anthropic"]),
        "sessionAffinityFormat" => {
            CompatShape::OneOf(&["openai", "openai-nosession", "openrouter"])
        }
        "promptCacheKeyMode" => CompatShape::OneOf(&["auto", "enabled", "disabled"]),
        "imageInput" => CompatShape::OneOf(&["assets", "images", "state-image-urls"]),
        _ => return None,
    })
}

/// Collects problems while walking the document.
struct Checker {
    problems: Vec<String>,
}

impl Checker {
    fn problem(&mut self, path: &str, message: impl Into<String>) {
        self.problems.push(format!("{path}: {}", message.into()));
    }

    fn kind(v: &Value) -> &'static str {
        match v {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }

    fn string(&mut self, obj: &Map<String, Value>, key: &str, path: &str) -> Option<String> {
        match obj.get(key)? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::String(_) => {
                self.problem(&format!("{path}.{key}"), "must not be empty");
                None
            }
            other => {
                self.problem(
                    &format!("{path}.{key}"),
                    format!("expected a string, found {}", Self::kind(other)),
                );
                None
            }
        }
    }

    fn boolean(&mut self, obj: &Map<String, Value>, key: &str, path: &str) -> Option<bool> {
        match obj.get(key)? {
            Value::Bool(b) => Some(*b),
            other => {
                self.problem(
                    &format!("{path}.{key}"),
                    format!("expected true or false, found {}", Self::kind(other)),
                );
                None
            }
        }
    }

    fn positive(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        path: &str,
        default: &str,
    ) -> Option<u64> {
        let v = obj.get(key)?;
        match v.as_f64() {
            Some(n) if n > 0.0 && n.is_finite() => Some(n.round() as u64),
            Some(_) => {
                self.problem(
                    &format!("{path}.{key}"),
                    format!("must be a positive number (remove it to use the default, {default})"),
                );
                None
            }
            None => {
                self.problem(
                    &format!("{path}.{key}"),
                    format!(
                        "expected a number, found {} (remove it to use the default, {default})",
                        Self::kind(v)
                    ),
                );
                None
            }
        }
    }

    fn headers(&mut self, obj: &Map<String, Value>, path: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        match obj.get("headers") {
            None => {}
            Some(Value::Object(h)) => {
                for (k, v) in h {
                    match v.as_str() {
                        Some(s) => {
                            out.insert(k.clone(), s.to_string());
                        }
                        None => self.problem(
                            &format!("{path}.headers.{k}"),
                            format!("expected a string, found {}", Self::kind(v)),
                        ),
                    }
                }
            }
            Some(other) => self.problem(
                &format!("{path}.headers"),
                format!(
                    "expected an object of header names to values, found {}",
                    Self::kind(other)
                ),
            ),
        }
        out
    }

    /// `compat`, each known flag checked against pi 1.6's schema: a flag of the wrong
    /// type or an unknown enum value is dropped (with a problem), the rest are kept;
    /// unknown keys are kept as they are, as pi does.
    fn compat(&mut self, obj: &Map<String, Value>, path: &str) -> Option<Value> {
        let flags = match obj.get("compat")? {
            Value::Object(m) => m,
            other => {
                self.problem(
                    &format!("{path}.compat"),
                    format!(
                        "expected an object of compatibility flags, found {}; ignored",
                        Self::kind(other)
                    ),
                );
                return None;
            }
        };
        let mut out = flags.clone();
        for (key, v) in flags {
            let at = format!("{path}.compat.{key}");
            let problem = match compat_shape(key) {
                None => None,
                Some(CompatShape::Bool) if !v.is_boolean() => {
                    Some(format!("expected true or false, found {}", Self::kind(v)))
                }
                Some(CompatShape::Number) if !v.is_number() => {
                    Some(format!("expected a number, found {}", Self::kind(v)))
                }
                Some(CompatShape::Object) if !v.is_object() => {
                    Some(format!("expected an object, found {}", Self::kind(v)))
                }
                Some(CompatShape::Array) if !v.is_array() => {
                    Some(format!("expected an array, found {}", Self::kind(v)))
                }
                Some(CompatShape::OneOf(values))
                    if !v.as_str().is_some_and(|s| values.contains(&s)) =>
                {
                    Some(format!("expected one of {}", values.join(", ")))
                }
                Some(_) => None,
            };
            if let Some(p) = problem {
                self.problem(&at, format!("{p}; ignored"));
                out.remove(key);
            }
        }
        Some(Value::Object(out))
    }

    /// An object of free-form request fields (`samplingParams`).
    fn object(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Option<Map<String, Value>> {
        match obj.get(key)? {
            Value::Object(m) => Some(m.clone()),
            other => {
                self.problem(
                    &format!("{path}.{key}"),
                    format!("expected an object, found {}; ignored", Self::kind(other)),
                );
                None
            }
        }
    }

    fn sampling_by_level(
        &mut self,
        obj: &Map<String, Value>,
        path: &str,
    ) -> Option<BTreeMap<String, Map<String, Value>>> {
        let key = "samplingParamsByThinkingLevel";
        let m = self.object(obj, key, path)?;
        let mut out = BTreeMap::new();
        for (level, v) in m {
            let at = format!("{path}.{key}.{level}");
            if crate::ai::model::ThinkingLevel::parse(&level).is_none() {
                self.problem(
                    &at,
                    "unknown thinking level (use off, minimal, low, medium, high, xhigh or max); ignored",
                );
                continue;
            }
            match v {
                Value::Object(params) => {
                    out.insert(level, params);
                }
                other => self.problem(
                    &at,
                    format!(
                        "expected an object of request fields, found {}; ignored",
                        Self::kind(&other)
                    ),
                ),
            }
        }
        Some(out)
    }

    /// Keeps the integer fields of `obj` listed in `ints` that are within range, dropping
    /// (with a problem) the ones that are not; other keys are kept as they are.
    fn checked_ints(
        &mut self,
        obj: &Map<String, Value>,
        ints: &[(&str, u64, u64)],
        path: &str,
    ) -> Map<String, Value> {
        let mut out = obj.clone();
        for (key, min, max) in ints {
            let Some(v) = obj.get(*key) else { continue };
            let ok = v.as_u64().is_some_and(|n| n >= *min && n <= *max);
            if !ok {
                let range = if *max == u64::MAX {
                    format!("an integer of at least {min}")
                } else {
                    format!("an integer from {min} to {max}")
                };
                self.problem(
                    &format!("{path}.{key}"),
                    format!("expected {range}; ignored"),
                );
                out.remove(*key);
            }
        }
        out
    }

    fn input_limits(&mut self, obj: &Map<String, Value>, path: &str) -> Option<Value> {
        let path = format!("{path}.inputLimits");
        let limits = match obj.get("inputLimits")? {
            Value::Object(m) => m,
            other => {
                self.problem(
                    &path,
                    format!("expected an object, found {}; ignored", Self::kind(other)),
                );
                return None;
            }
        };
        let mut out = self.checked_ints(limits, &[("maxRequestBytes", 1, u64::MAX)], &path);
        if let Some(images) = limits.get("images") {
            let ipath = format!("{path}.images");
            match images {
                Value::Object(im) => {
                    let mut checked = self.checked_ints(
                        im,
                        &[
                            ("maxPerMessage", 1, u64::MAX),
                            ("maxPerRequest", 1, u64::MAX),
                        ],
                        &ipath,
                    );
                    match im.get("resize") {
                        None => {}
                        Some(Value::Object(r)) => {
                            let resize = self.checked_ints(
                                r,
                                &[
                                    ("maxWidth", 1, u64::MAX),
                                    ("maxHeight", 1, u64::MAX),
                                    ("maxBytes", 1, u64::MAX),
                                    ("jpegQuality", 1, 100),
                                ],
                                &format!("{ipath}.resize"),
                            );
                            checked.insert("resize".into(), Value::Object(resize));
                        }
                        Some(other) => {
                            self.problem(
                                &format!("{ipath}.resize"),
                                format!("expected an object, found {}; ignored", Self::kind(other)),
                            );
                            checked.remove("resize");
                        }
                    }
                    out.insert("images".into(), Value::Object(checked));
                }
                other => {
                    self.problem(
                        &ipath,
                        format!("expected an object, found {}; ignored", Self::kind(other)),
                    );
                    out.remove("images");
                }
            }
        }
        Some(Value::Object(out))
    }

    fn prompt_cache(&mut self, obj: &Map<String, Value>, path: &str) -> Option<Value> {
        let path = format!("{path}.promptCache");
        let m = match obj.get("promptCache")? {
            Value::Object(m) => m,
            other => {
                self.problem(
                    &path,
                    format!(
                        "expected an object {{short, long}}, found {}; ignored",
                        Self::kind(other)
                    ),
                );
                return None;
            }
        };
        let mut out = m.clone();
        for key in ["short", "long"] {
            if let Some(v) = m.get(key)
                && !v.as_f64().is_some_and(|n| n > 0.0 && n.is_finite())
            {
                self.problem(
                    &format!("{path}.{key}"),
                    "expected a lifetime in seconds above 0; ignored",
                );
                out.remove(key);
            }
        }
        Some(Value::Object(out))
    }

    fn cost_tiers(&mut self, cost: &Map<String, Value>, path: &str) -> Option<Vec<Value>> {
        let path = format!("{path}.cost.tiers");
        let tiers = match cost.get("tiers")? {
            Value::Array(t) => t,
            other => {
                self.problem(
                    &path,
                    format!(
                        "expected an array of tiers, found {}; ignored",
                        Self::kind(other)
                    ),
                );
                return None;
            }
        };
        let mut out = Vec::new();
        for (i, tier) in tiers.iter().enumerate() {
            let at = format!("{path}[{i}]");
            let Some(t) = tier.as_object() else {
                self.problem(
                    &at,
                    format!("expected an object, found {}; ignored", Self::kind(tier)),
                );
                continue;
            };
            let missing: Vec<&str> = [
                "inputTokensAbove",
                "input",
                "output",
                "cacheRead",
                "cacheWrite",
            ]
            .into_iter()
            .filter(|k| !t.get(*k).is_some_and(Value::is_number))
            .collect();
            if missing.is_empty() {
                out.push(tier.clone());
            } else {
                self.problem(
                    &at,
                    format!(
                        "needs numbers for {}; this tier is ignored",
                        missing.join(", ")
                    ),
                );
            }
        }
        Some(out)
    }

    fn fields(&mut self, obj: &Map<String, Value>, path: &str, partial_cost: bool) -> ModelFields {
        let thinking_level_map = match obj.get("thinkingLevelMap") {
            None => None,
            Some(Value::Object(m)) => {
                let mut out = BTreeMap::new();
                for (k, v) in m {
                    if crate::ai::model::ThinkingLevel::parse(k).is_none() {
                        self.problem(
                            &format!("{path}.thinkingLevelMap.{k}"),
                            "unknown thinking level (use off, minimal, low, medium, high, xhigh or max)",
                        );
                        continue;
                    }
                    match v {
                        Value::Null => {
                            out.insert(k.clone(), None);
                        }
                        Value::String(s) => {
                            out.insert(k.clone(), Some(s.clone()));
                        }
                        other => self.problem(
                            &format!("{path}.thinkingLevelMap.{k}"),
                            format!("expected a string or null, found {}", Self::kind(other)),
                        ),
                    }
                }
                Some(out)
            }
            Some(other) => {
                self.problem(
                    &format!("{path}.thinkingLevelMap"),
                    format!("expected an object, found {}", Self::kind(other)),
                );
                None
            }
        };
        let input = match obj.get("input") {
            None => None,
            Some(Value::Array(items)) => {
                let mut kinds = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    match item.as_str() {
                        Some("text") => kinds.push(InputKind::Text),
                        Some("image") => kinds.push(InputKind::Image),
                        _ => self.problem(
                            &format!("{path}.input[{i}]"),
                            "must be \"text\" or \"image\"",
                        ),
                    }
                }
                Some(kinds)
            }
            Some(other) => {
                self.problem(
                    &format!("{path}.input"),
                    format!(
                        "expected an array like [\"text\", \"image\"], found {}",
                        Self::kind(other)
                    ),
                );
                None
            }
        };
        let cost = match obj.get("cost") {
            None => None,
            Some(Value::Object(c)) => {
                let mut get = |key: &str| -> Option<f64> {
                    match c.get(key) {
                        Some(v) if v.is_number() => v.as_f64(),
                        Some(v) => {
                            self.problem(
                                &format!("{path}.cost.{key}"),
                                format!(
                                    "expected a price per million tokens (a number), found {}",
                                    Self::kind(v)
                                ),
                            );
                            None
                        }
                        None => {
                            if !partial_cost {
                                self.problem(
                                    &format!("{path}.cost.{key}"),
                                    "is required when cost is given (use 0 if free)",
                                );
                            }
                            None
                        }
                    }
                };
                Some(CostDef {
                    input: get("input"),
                    output: get("output"),
                    cache_read: get("cacheRead"),
                    cache_write: get("cacheWrite"),
                })
            }
            Some(other) => {
                self.problem(
                    &format!("{path}.cost"),
                    format!(
                        "expected an object {{input, output, cacheRead, cacheWrite}}, found {}",
                        Self::kind(other)
                    ),
                );
                None
            }
        };
        let cost_tiers = match obj.get("cost") {
            Some(Value::Object(c)) => self.cost_tiers(c, path),
            _ => None,
        };
        ModelFields {
            sampling_params: self.object(obj, "samplingParams", path),
            sampling_params_by_level: self.sampling_by_level(obj, path),
            input_limits: self.input_limits(obj, path),
            prompt_cache: self.prompt_cache(obj, path),
            cost_tiers,
            name: self.string(obj, "name", path),
            reasoning: self.boolean(obj, "reasoning", path),
            thinking_level_map,
            input,
            cost,
            context_window: self.positive(obj, "contextWindow", path, "128000"),
            max_tokens: self.positive(obj, "maxTokens", path, "16384"),
            headers: self.headers(obj, path),
            compat: self.compat(obj, path),
        }
    }
}

/// Parses models.json text. `builtin_providers` tells which providers may omit
/// `baseUrl`, `apiKey` and `api`. As pi 1.6, one bad value drops only that value (or the
/// model or tier it makes unusable): the rest of the file is used and the second value
/// names the file and every problem with its path. `Err` only when the text is not JSON
/// (then nothing of the file can be used).
pub fn parse_models_json(
    text: &str,
    path: &Path,
    builtin_providers: &[&str],
) -> Result<(ModelsConfig, Option<String>), String> {
    let stripped = strip_json_comments(text);
    let root: Value = serde_json::from_str(&stripped).map_err(|e| {
        format!(
            "Failed to parse models.json: {e}\n\nFile: {}\nFix the JSON syntax (pi-rs allows // comments and trailing commas); built-in models are used until then.",
            path.display()
        )
    })?;
    let (config, problems) = parse_root(&root, builtin_providers);
    if problems.is_empty() {
        return Ok((config, None));
    }
    let list: Vec<String> = problems.iter().map(|p| format!("  - {p}")).collect();
    Ok((
        config,
        Some(format!(
            "Ignored in models.json ({}), the rest of the file is used:\n{}\nFix these values and reopen /model to reload the file.",
            path.display(),
            list.join("\n"),
        )),
    ))
}

/// A provider registered by an extension (`pi.registerProvider(name, config)`): the
/// config is pi's `ProviderConfig`, the same shape as a models.json provider. On failure,
/// the problems, each naming the field.
pub fn parse_extension_provider(name: &str, config: &Value) -> Result<ProviderConfig, String> {
    let mut providers = Map::new();
    providers.insert(name.to_string(), config.clone());
    let mut root = Map::new();
    root.insert("providers".into(), Value::Object(providers));
    let (mut parsed, problems) = parse_root(&Value::Object(root), &[]);
    match parsed.providers.pop() {
        Some((_, provider)) if problems.is_empty() => Ok(provider),
        _ => Err(problems.join("; ")),
    }
}

/// Every provider of a models.json document, and the problems found.
fn parse_root(root: &Value, builtin_providers: &[&str]) -> (ModelsConfig, Vec<String>) {
    let mut ck = Checker {
        problems: Vec::new(),
    };
    let mut config = ModelsConfig::default();
    match root.get("providers") {
        Some(Value::Object(providers)) => {
            for (name, pv) in providers {
                let ppath = format!("providers.{name}");
                let Some(p) = pv.as_object() else {
                    ck.problem(
                        &ppath,
                        format!("expected an object, found {}", Checker::kind(pv)),
                    );
                    continue;
                };
                let mut provider = ProviderConfig {
                    name: ck.string(p, "name", &ppath),
                    base_url: ck.string(p, "baseUrl", &ppath),
                    api_key: ck.string(p, "apiKey", &ppath),
                    api: ck.string(p, "api", &ppath),
                    headers: ck.headers(p, &ppath),
                    compat: ck.compat(p, &ppath),
                    auth_header: ck.boolean(p, "authHeader", &ppath).unwrap_or(false),
                    ..ProviderConfig::default()
                };
                match p.get("models") {
                    None => {}
                    Some(Value::Array(models)) => {
                        for (i, mv) in models.iter().enumerate() {
                            let mpath = format!("{ppath}.models[{i}]");
                            let Some(m) = mv.as_object() else {
                                ck.problem(
                                    &mpath,
                                    format!("expected an object, found {}", Checker::kind(mv)),
                                );
                                continue;
                            };
                            let Some(id) = ck.string(m, "id", &mpath) else {
                                if !m.contains_key("id") {
                                    ck.problem(
                                        &format!("{mpath}.id"),
                                        "is required (the model id sent to the API)",
                                    );
                                }
                                continue;
                            };
                            provider.models.push(ModelDef {
                                id,
                                api: ck.string(m, "api", &mpath),
                                base_url: ck.string(m, "baseUrl", &mpath),
                                fields: ck.fields(m, &mpath, false),
                            });
                        }
                    }
                    Some(other) => ck.problem(
                        &format!("{ppath}.models"),
                        format!(
                            "expected an array of models, found {}",
                            Checker::kind(other)
                        ),
                    ),
                }
                match p.get("modelOverrides") {
                    None => {}
                    Some(Value::Object(overrides)) => {
                        for (id, ov) in overrides {
                            let opath = format!("{ppath}.modelOverrides.{id}");
                            match ov.as_object() {
                                Some(o) => {
                                    let fields = ck.fields(o, &opath, true);
                                    provider.model_overrides.push((id.clone(), fields));
                                }
                                None => ck.problem(
                                    &opath,
                                    format!("expected an object, found {}", Checker::kind(ov)),
                                ),
                            }
                        }
                    }
                    Some(other) => ck.problem(
                        &format!("{ppath}.modelOverrides"),
                        format!(
                            "expected an object keyed by model id, found {}",
                            Checker::kind(other)
                        ),
                    ),
                }
                let builtin =
                    builtin_providers.contains(&crate::ai::auth::catalog_provider_id(name));
                if provider.models.is_empty() {
                    if provider.base_url.is_none()
                        && provider.headers.is_empty()
                        && provider.compat.is_none()
                        && provider.model_overrides.is_empty()
                        && p.get("models").is_none()
                    {
                        ck.problem(
                            &ppath,
                            "must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\"",
                        );
                    }
                } else if !builtin {
                    if provider.base_url.is_none() && !p.contains_key("baseUrl") {
                        ck.problem(&ppath, "\"baseUrl\" is required when defining custom models (e.g. \"http://localhost:11434/v1\")");
                    }
                    // An extension's provider may sign in instead (`oauth`, as pi allows).
                    if provider.api_key.is_none()
                        && !p.contains_key("apiKey")
                        && !p.contains_key("oauth")
                    {
                        ck.problem(&ppath, "\"apiKey\" is required when defining custom models (any value works for local servers, e.g. \"ollama\")");
                    }
                    if provider.api.is_none() && !p.contains_key("api") {
                        for m in provider.models.iter().filter(|m| m.api.is_none()) {
                            ck.problem(
                                &format!("{ppath}.models[id={}]", m.id),
                                "no \"api\" specified; set it on the provider or the model (openai-completions, openai-responses, anthropic-messages, google-generative-ai)",
                            );
                        }
                    }
                }
                // The Azure provider's old id `azure-openai-responses` is read as pi
                // 1.6's `azure`, the catalogue's.
                let name = crate::ai::auth::catalog_provider_id(name).to_string();
                config.providers.push((name, provider));
            }
        }
        Some(other) => ck.problem(
            "providers",
            format!(
                "expected an object keyed by provider name, found {}",
                Checker::kind(other)
            ),
        ),
        None => ck.problem(
            "providers",
            "is required: {\"providers\": {\"<name>\": {...}}}",
        ),
    }
    (config, ck.problems)
}
