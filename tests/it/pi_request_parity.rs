//! Our request bodies equal the reference pi's, for every wire API, on a conversation
//! with thinking, a tool call and its result (fixtures recorded from pi 0.73.1 against
//! `examples/mock_llm`; see each fixture's `note`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use pi::ai::message::{Context, Message, ToolSpec};
use pi::ai::model::{Api, InputKind, Model, ThinkingLevel};
use pi::ai::providers::{StreamOptions, anthropic, google, openai_completions, openai_responses};
use serde_json::Value;

fn fixture(api: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/pi_requests/{api}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn model(api: Api) -> Model {
    Model {
        id: "mock-model".into(),
        name: "mock-model".into(),
        api,
        provider: "mock".into(),
        base_url: "http://127.0.0.1:18556/v1".into(),
        reasoning: true,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: Default::default(),
        context_window: 128_000,
        max_tokens: 16_384,
        headers: Default::default(),
        compat: None,
        extras: Default::default(),
    }
}

fn spec(name: &Value, description: &Value, parameters: &Value) -> ToolSpec {
    ToolSpec {
        name: name.as_str().unwrap().into(),
        description: description.as_str().unwrap().into(),
        parameters: parameters.clone(),
    }
}

/// The context pi had: its messages, and the system prompt and tools as it sent them.
fn context(f: &Value, system: &Value, tools: Vec<ToolSpec>) -> Context {
    let messages: Vec<Message> = f["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| serde_json::from_value(m.clone()).unwrap())
        .collect();
    Context {
        system_prompt: Some(system.as_str().unwrap().to_string()),
        messages,
        tools,
    }
}

fn options(body: &Value) -> StreamOptions {
    StreamOptions {
        thinking: ThinkingLevel::Low,
        session_id: body["prompt_cache_key"].as_str().map(str::to_string),
        ..StreamOptions::default()
    }
}

#[test]
fn openai_completions_body_equals_pi() {
    let f = fixture("openai-completions");
    let body = &f["body"];
    let tools = body["tools"].as_array().unwrap().iter().map(|t| {
        let fun = &t["function"];
        spec(&fun["name"], &fun["description"], &fun["parameters"])
    });
    let ctx = context(&f, &body["messages"][0]["content"], tools.collect());
    let m = model(Api::OpenAiCompletions);
    let ours = openai_completions::build_body(
        &m,
        &ctx,
        &options(body),
        &openai_completions::Compat::for_model(&m),
    );
    // pi 1.6 sends `system` (not `developer`) to hosts other than OpenAI and no `strict`
    // flags unless models.json asks for them; the rest is 0.73's body.
    let mut body = body.clone();
    body["messages"][0]["role"] = "system".into();
    for tool in body["tools"].as_array_mut().unwrap() {
        tool["function"].as_object_mut().unwrap().remove("strict");
    }
    pretty_assertions::assert_eq!(&ours, &body);
}

#[test]
fn openai_responses_body_equals_pi() {
    let f = fixture("openai-responses");
    let body = &f["body"];
    let tools = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| spec(&t["name"], &t["description"], &t["parameters"]));
    let ctx = context(&f, &body["input"][0]["content"], tools.collect());
    let ours = openai_responses::build_body(&model(Api::OpenAiResponses), &ctx, &options(body));
    pretty_assertions::assert_eq!(&ours, body);
}

#[test]
fn anthropic_body_equals_pi() {
    let f = fixture("anthropic-messages");
    let body = &f["body"];
    let tools = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| spec(&t["name"], &t["description"], &t["input_schema"]));
    let ctx = context(&f, &body["system"][0]["text"], tools.collect());
    let ours = anthropic::build_body(&model(Api::AnthropicMessages), &ctx, &options(body), false);
    pretty_assertions::assert_eq!(&ours, body);
}

#[test]
fn google_body_equals_pi() {
    let f = fixture("google-generative-ai");
    let body = &f["body"];
    let tools = body["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| spec(&t["name"], &t["description"], &t["parametersJsonSchema"]));
    let ctx = context(
        &f,
        &body["systemInstruction"]["parts"][0]["text"],
        tools.collect(),
    );
    let ours = google::build_body(&model(Api::GoogleGenerativeAi), &ctx, &options(body));
    pretty_assertions::assert_eq!(&ours, body);
}
