#!/usr/bin/env node
// word_count: a tool the model can call to count the lines, words and characters of a
// text or a file. Counts in chunks and reports progress with `tool_update` messages;
// stops when the host sends `cancel`.

"use strict";

const fs = require("fs");
const path = require("path");
const readline = require("readline");

const CHUNK_LINES = 1000;
let cwd = process.cwd();
const running = new Map(); // request id -> { cancelled }

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

const tool = {
  name: "word_count",
  label: "Word count",
  description:
    "Count the lines, words and characters of a text or of a file. Give either `text` or `path`.",
  parameters: {
    type: "object",
    properties: {
      text: { type: "string", description: "The text to count" },
      path: { type: "string", description: "A file to count, relative to the working directory" },
    },
  },
  promptSnippet: "Count lines, words and characters of a text or file",
};

async function execute(message) {
  const { id, input } = message;
  const job = { cancelled: false };
  running.set(id, job);
  try {
    let text = input.text;
    if (typeof text !== "string" && typeof input.path === "string") {
      text = fs.readFileSync(path.resolve(cwd, input.path), "utf8");
    }
    if (typeof text !== "string") {
      send({ type: "response", id, error: "Give either \"text\" or \"path\"." });
      return;
    }
    const lines = text === "" ? [] : text.split("\n");
    let words = 0;
    for (let start = 0; start < lines.length; start += CHUNK_LINES) {
      if (job.cancelled) {
        send({ type: "response", id, error: "Cancelled" });
        return;
      }
      for (const line of lines.slice(start, start + CHUNK_LINES)) {
        words += line.split(/\s+/).filter(Boolean).length;
      }
      const done = Math.min(start + CHUNK_LINES, lines.length);
      send({
        type: "tool_update",
        id,
        content: [{ type: "text", text: `Counted ${done} of ${lines.length} lines...` }],
      });
      // Let a pending `cancel` message in before the next chunk.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const characters = [...text].length;
    send({
      type: "response",
      id,
      result: {
        content: [{ type: "text", text: `${lines.length} lines, ${words} words, ${characters} characters` }],
        details: { lines: lines.length, words, characters },
      },
    });
  } catch (err) {
    send({ type: "response", id, error: String(err && err.message ? err.message : err) });
  } finally {
    running.delete(id);
  }
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  switch (message.type) {
    case "hello":
      cwd = message.cwd || cwd;
      send({ type: "register", name: "word-count", tools: [tool] });
      break;
    case "execute_tool":
      execute(message);
      break;
    case "cancel": {
      const job = running.get(message.id);
      if (job) job.cancelled = true;
      break;
    }
    case "event":
      if ("id" in message) send({ type: "response", id: message.id });
      break;
  }
});
