#!/usr/bin/env python3
"""Custom compaction: writes the compaction summary itself instead of asking the model.

Subscribes to `session_before_compact` and answers with a `compaction` built from the
preparation pi-rs sends: the user's requests, the files read and changed, and the
previous summary. The result is stored like any compaction, with `fromHook: true`.
"""

import json
import sys

MAX_REQUEST = 200


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text_of(content):
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content or [] if block.get("type") == "text")


def summarize(preparation):
    messages = preparation.get("messagesToSummarize", []) + preparation.get("turnPrefixMessages", [])
    requests = []
    for message in messages:
        if message.get("role") != "user":
            continue
        first_line = text_of(message.get("content")).strip().split("\n")[0]
        if len(first_line) > MAX_REQUEST:
            first_line = first_line[:MAX_REQUEST] + "..."
        if first_line:
            requests.append(first_line)
    file_ops = preparation.get("fileOps", {})
    read = sorted(file_ops.get("read", []))
    changed = sorted(set(file_ops.get("written", [])) | set(file_ops.get("edited", [])))

    lines = ["## Summary of the earlier conversation", ""]
    previous = preparation.get("previousSummary")
    if previous:
        lines += ["Earlier summary:", "", previous.strip(), ""]
    lines.append(f"The user asked ({len(requests)} requests):")
    lines += [f"- {r}" for r in requests] or ["- (nothing)"]
    lines += ["", "Files read: " + (", ".join(read) or "none")]
    lines += ["Files changed: " + (", ".join(changed) or "none")]
    return "\n".join(lines), len(requests)


def main():
    if not sys.stdin.readline():
        return
    send({
        "type": "register",
        "name": "custom-compaction",
        "events": ["session_before_compact"],
    })
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("type") != "event" or "id" not in message:
            continue
        event = message["event"]
        result = None
        if event.get("type") == "session_before_compact":
            preparation = event["preparation"]
            summary, requests = summarize(preparation)
            result = {
                "compaction": {
                    "summary": summary,
                    "firstKeptEntryId": preparation["firstKeptEntryId"],
                    "tokensBefore": preparation["tokensBefore"],
                    "details": {"writtenBy": "custom-compaction example", "requests": requests},
                }
            }
            send({"type": "ui", "method": "notify", "message": "Compacted without a model call"})
        send({"type": "response", "id": message["id"], "result": result})


if __name__ == "__main__":
    main()
