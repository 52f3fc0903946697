// Drives an RPC agent with pi 1.6's own `RpcClient` (from the reference package) through
// every public method it has, and prints one JSON line per step:
//   {"step": name, "ok": true, "summary": <what must match between implementations>}
//   {"step": name, "ok": false, "error": "..."}
// then {"done": true}. The summaries leave out what legitimately differs (ids, times,
// paths, token counts, wording), so the Rust side can compare pi-rs with reference pi.
//
// Environment: PI_RPC_CLIENT (rpc-client.js of the reference package), PI_RPC_CLI (the
// cli.js RpcClient starts with node: reference pi's own, or tests/node/pi_rs_cli.mjs),
// PI_RPC_CWD (project folder), PI_RPC_ARGS (JSON array of extra arguments), PI_RPC_OUT
// (a folder for exported files).
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const { RpcClient } = await import(pathToFileURL(process.env.PI_RPC_CLIENT).href);
const out = process.env.PI_RPC_OUT;

function emit(record) {
  process.stdout.write(`${JSON.stringify(record)}\n`);
}

const sortedKeys = (value) =>
  value && typeof value === "object" && !Array.isArray(value) ? Object.keys(value).sort() : typeof value;

// pi 1.6 sends the session's system messages (role "system": prompt sections and tool
// declarations) in `get_messages`, `get_entries` and as message events. They are counted
// apart (step "system messages"), so the other steps compare the conversation itself.
let systemMessages = { events: 0, messages: 0, entries: 0 };
const isSystem = (message) => message?.role === "system";

/** Event types in order, streaming deltas folded into one `message_update*` per message. */
function eventTypes(events) {
  const types = [];
  for (const event of events) {
    if ((event.type === "message_start" || event.type === "message_end") && isSystem(event.message)) {
      systemMessages.events++;
      continue;
    }
    const type = event.type === "message_update" ? "message_update*" : event.type;
    if (type === "message_update*" && types[types.length - 1] === type) continue;
    types.push(type);
  }
  return types;
}

/** What every `message_update` looks like on the wire (pi 1.6: delta plus usage). */
function updateShapes(events) {
  const shapes = new Set();
  for (const event of events) {
    if (event.type !== "message_update") continue;
    const inner = event.assistantMessageEvent ?? {};
    shapes.add(`${Object.keys(event).sort().join(",")} / ${inner.type}: ${Object.keys(inner).sort().join(",")}`);
  }
  return [...shapes].sort();
}

const client = new RpcClient({
  cliPath: process.env.PI_RPC_CLI,
  cwd: process.env.PI_RPC_CWD,
  provider: "mock",
  model: "mock-model",
  args: ["--offline", ...JSON.parse(process.env.PI_RPC_ARGS ?? "[]")],
});

const seen = [];
let unsubscribe = () => {};

async function step(name, run) {
  try {
    const summary = await run();
    emit({ step: name, ok: true, summary: summary ?? null });
    return true;
  } catch (error) {
    emit({ step: name, ok: false, error: String(error?.stack ?? error) });
    return false;
  }
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** Resolves with the events up to `agent_settled`, listening from now on. */
function untilSettled(timeout = 30000) {
  return client.collectEvents(timeout);
}

let originalSession;
let secondUserEntry;

if (
  await step("start", async () => {
    await client.start();
    unsubscribe = client.onEvent((event) => seen.push(event));
    return "started";
  })
) {
  await step("getState", async () => {
    const state = await client.getState();
    originalSession = state.sessionFile;
    return {
      keys: sortedKeys(state),
      model: `${state.model?.provider}/${state.model?.id}`,
      isStreaming: state.isStreaming,
      messageCount: state.messageCount,
      steeringMode: state.steeringMode,
      followUpMode: state.followUpMode,
    };
  });

  await step("promptAndWait", async () => {
    const events = await client.promptAndWait("HELLO there");
    const end = events.find((e) => e.type === "agent_end");
    const settled = events[events.length - 1];
    return {
      types: eventTypes(events),
      updates: updateShapes(events),
      willRetry: end?.willRetry,
      settled: settled,
    };
  });

  await step("prompt steer followUp clearQueue abort waitForIdle", async () => {
    const settled = untilSettled();
    // The first delta means the run streams: queue two messages, take them back, abort.
    const streaming = new Promise((resolve) => {
      const stop = client.onEvent((event) => {
        if (event.type === "message_update") {
          stop();
          resolve();
        }
      });
    });
    const prompted = await client.prompt("SLOW answer please");
    await streaming;
    const steered = await client.steer("steer me");
    const followed = await client.followUp("later please");
    const queue = await client.clearQueue();
    const idle = client.waitForIdle(30000);
    await client.abort();
    await idle.catch(() => {});
    const events = await settled;
    return {
      prompted,
      steered,
      followed,
      queue,
      settled: events[events.length - 1],
      lastStop: events.filter((e) => e.type === "message_end").pop()?.message?.stopReason,
    };
  });

  await step("prompt while streaming needs a behaviour, followUp queues", async () => {
    const settled = untilSettled();
    const streaming = new Promise((resolve) => {
      const stop = client.onEvent((event) => {
        if (event.type === "message_update") {
          stop();
          resolve();
        }
      });
    });
    await client.prompt("SLOW again");
    await streaming;
    let refused = null;
    await client.prompt("no behaviour").catch((e) => {
      refused = "refused";
    });
    const queued = await client.prompt("FOLLOW up", undefined, "followUp");
    const events = await settled;
    const users = events
      .filter((e) => e.type === "message_start" && e.message.role === "user")
      .map((e) => (typeof e.message.content === "string" ? e.message.content : e.message.content[0].text));
    return { refused, queued, users, settled: events[events.length - 1] };
  });

  await step("getAvailableModels", async () => {
    const models = await client.getAvailableModels();
    return models.map((m) => `${m.provider}/${m.id}`).sort();
  });
  await step("setModel", async () => {
    const model = await client.setModel("mock", "mock-model-2");
    return `${model.provider}/${model.id}`;
  });
  await step("cycleModel", async () => {
    const cycled = await client.cycleModel();
    return cycled && { model: `${cycled.model.provider}/${cycled.model.id}`, isScoped: cycled.isScoped };
  });
  await step("setThinkingLevel", async () => {
    await client.setThinkingLevel("high");
    return (await client.getState()).thinkingLevel;
  });
  await step("cycleThinkingLevel", async () => client.cycleThinkingLevel());
  await step("getAvailableThinkingLevels", async () => client.getAvailableThinkingLevels());
  await step("setSteeringMode", async () => {
    await client.setSteeringMode("all");
    return (await client.getState()).steeringMode;
  });
  await step("setFollowUpMode", async () => {
    await client.setFollowUpMode("all");
    return (await client.getState()).followUpMode;
  });
  await step("setAutoCompaction", async () => {
    await client.setAutoCompaction(false);
    return (await client.getState()).autoCompactionEnabled;
  });
  await step("setAutoRetry", async () => client.setAutoRetry(false));
  await step("abortRetry", async () => client.abortRetry());

  await step("bash", async () => {
    const updates = [];
    const stop = client.onEvent((event) => {
      if (event.type === "bash_execution_update") updates.push(event);
    });
    const result = await client.bash("printf 'one\\ntwo\\n'");
    stop();
    check(updates.length > 0, "no bash_execution_update event");
    return {
      keys: sortedKeys(result),
      output: result.output,
      exitCode: result.exitCode,
      streamed: updates.map((u) => u.delta).join(""),
      ids: [...new Set(updates.map((u) => typeof u.id))],
    };
  });
  await step("abortBash", async () => client.abortBash());

  await step("getSessionStats", async () => {
    const stats = await client.getSessionStats();
    return {
      keys: sortedKeys(stats),
      userMessages: stats.userMessages,
      tokens: sortedKeys(stats.tokens),
      contextUsage: sortedKeys(stats.contextUsage),
    };
  });

  await step("getLastAssistantText", async () => client.getLastAssistantText());
  await step("setSessionName", async () => {
    await client.setSessionName("driven by RpcClient");
    return (await client.getState()).sessionName;
  });
  await step("getMessages", async () => {
    const messages = await client.getMessages();
    systemMessages.messages += messages.filter(isSystem).length;
    return messages.filter((m) => !isSystem(m)).map((m) => m.role);
  });
  await step("getCommands", async () => (await client.getCommands()).map((c) => c.name));
  await step("getForkMessages", async () => {
    const messages = await client.getForkMessages();
    secondUserEntry = messages[1]?.entryId;
    return messages.map((m) => m.text);
  });
  await step("getEntries", async () => {
    const all = await client.getEntries();
    const first = all.entries[0]?.id;
    const after = await client.getEntries(first);
    let unknown = null;
    await client.getEntries("no-such-entry").catch(() => {
      unknown = "refused";
    });
    const last = all.entries[all.entries.length - 1];
    systemMessages.entries += all.entries.filter((e) => e.type === "message" && isSystem(e.message)).length;
    return {
      types: all.entries
        .filter((e) => !(e.type === "message" && isSystem(e.message)))
        .map((e) => {
          if (e.type === "message") return `message/${e.message.role}`;
          if (e.type === "thinking_level_change") return `${e.type}:${e.thinkingLevel}`;
          if (e.type === "model_change") return `${e.type}:${e.modelId}`;
          return e.type;
        }),
      leafIsLast: all.leafId === last?.id,
      sinceFirst: after.entries.length === all.entries.length - 1,
      unknown,
    };
  });
  await step("getTree", async () => {
    const { tree, leafId } = await client.getTree();
    let depth = 0;
    let node = tree[0];
    while (node) {
      depth++;
      check(node.entry && Array.isArray(node.children), `bad node ${JSON.stringify(node).slice(0, 200)}`);
      node = node.children[node.children.length - 1];
    }
    return { roots: tree.length, depth: depth > 1, leaf: typeof leafId };
  });

  await step("compact", async () => {
    const result = await client.compact("Keep it short");
    return { keys: sortedKeys(result), tokensAfter: typeof result.estimatedTokensAfter };
  });

  await step("exportHtml", async () => {
    const { path } = await client.exportHtml(join(out, "session.html"));
    return path.endsWith("session.html");
  });

  await step("fork", async () => {
    // From the second prompt: the fork keeps the first exchange, so it is saved and can
    // be cloned.
    const forked = await client.fork(secondUserEntry);
    return forked;
  });
  await step("clone", async () => client.clone());
  await step("switchSession", async () => {
    const switched = await client.switchSession(originalSession);
    const state = await client.getState();
    return { switched, back: state.sessionFile === originalSession, name: state.sessionName };
  });
  await step("newSession", async () => {
    const created = await client.newSession();
    return { created, messages: (await client.getState()).messageCount };
  });

  await step("collectEvents", async () => {
    const events = client.collectEvents(30000);
    await client.prompt("HELLO again");
    return eventTypes(await events);
  });

  await step("getStderr", async () => typeof client.getStderr());

  await step("system messages", async () => systemMessages);

  await step("events seen", async () => {
    unsubscribe();
    return [...new Set(seen.map((e) => e.type))].sort();
  });

  await step("stop", async () => {
    await client.stop();
    return "stopped";
  });
}

emit({ done: true });
