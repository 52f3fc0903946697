//! Throughput of the streaming path: a recorded-style 10 MB openai-completions SSE body
//! (text deltas, reasoning deltas and tool-call fragments, CRLF-free as servers send it)
//! fed in 16 KiB network chunks through the SSE parser and the chat-completions decoder
//! into `StreamEvent`s. Target: ≥ 200 MB/s in release.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pi::ai::model::{Api, InputKind, Model};
use pi::ai::providers::{Output, SseDecoder, decode_chunk, openai_completions};
use pi::ai::sse::SseParser;
use serde_json::json;

fn model() -> Model {
    Model {
        id: "mock-model".into(),
        name: "mock".into(),
        api: Api::OpenAiCompletions,
        provider: "mock".into(),
        base_url: "http://127.0.0.1/v1".into(),
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

/// About `target` bytes of chat-completions chunks, shaped like a real response.
fn recorded_stream(target: usize) -> Vec<u8> {
    let words = [
        "the ", "quick ", "brown ", "fox ", "jumps ", "over ", "a ", "lazy ", "dog, ", "then\n",
    ];
    let mut out = String::with_capacity(target + 4096);
    let chunk = |delta: serde_json::Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1_700_000_000u64,
                   "model": "mock-model", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
        )
    };
    out.push_str(&chunk(json!({"role": "assistant", "content": ""})));
    let mut i = 0usize;
    // Reasoning first, then text, then a long tool call (like a big `write`).
    while out.len() < target / 4 {
        out.push_str(&chunk(json!({"reasoning_content": words[i % words.len()]})));
        i += 1;
    }
    while out.len() < target / 2 {
        let piece: String = (0..3).map(|k| words[(i + k) % words.len()]).collect();
        out.push_str(&chunk(json!({"content": piece})));
        i += 1;
    }
    out.push_str(&chunk(json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                              "function": {"name": "write", "arguments": "{\"path\":\"a.txt\",\"content\":\""}}]})));
    while out.len() < target {
        let piece: String = (0..4)
            .map(|k| words[(i + k) % words.len()].replace('\n', "\\n"))
            .collect();
        out.push_str(&chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
        ));
        i += 1;
    }
    out.push_str(&chunk(
        json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"}"}}]}),
    ));
    out.push_str(
        "data: {\"id\":\"chatcmpl-bench\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":2000}}\n\ndata: [DONE]\n\n",
    );
    out.into_bytes()
}

/// Parses the body the way the driver does; returns the number of events.
fn parse(body: &[u8], model: &Model) -> usize {
    let mut parser = SseParser::new();
    let mut decoder = openai_completions::Decoder::new(model);
    let mut out = Output::new(model);
    let mut events = 0;
    for chunk in body.chunks(16 * 1024) {
        if decode_chunk(&mut parser, &mut decoder, chunk, &mut out).is_err() {
            return 0;
        }
        events += out.take_events().len();
    }
    let _ = decoder.finish(&mut out);
    events + out.take_events().len()
}

fn bench_sse(c: &mut Criterion) {
    let body = recorded_stream(10 * 1024 * 1024);
    let model = model();
    assert!(
        parse(&body, &model) > 10_000,
        "the stream decodes into events"
    );
    let mut group = c.benchmark_group("sse");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.sample_size(20);
    group.bench_function("openai_completions_10mb_to_stream_events", |b| {
        b.iter(|| parse(std::hint::black_box(&body), &model))
    });
    group.bench_function("sse_parser_only_10mb", |b| {
        b.iter(|| {
            let mut parser = SseParser::new();
            let mut n = 0usize;
            for chunk in body.chunks(16 * 1024) {
                parser.feed(chunk, |e| n += e.data.len());
            }
            parser.finish(|e| n += e.data.len());
            n
        })
    });
    group.finish();
}

criterion_group!(benches, bench_sse);
criterion_main!(benches);
