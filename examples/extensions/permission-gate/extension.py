#!/usr/bin/env python3
"""Permission gate: stops dangerous bash commands before they run.

Subscribes to `tool_call`. A `bash` call whose command looks destructive (`rm` with
both -r and -f, `sudo`, `chmod`/`chown` 777, `mkfs`, `dd of=/dev/...`) is blocked when
nobody can be asked (print and json modes); with a UI the user chooses.
"""

import json
import re
import sys

DANGEROUS = [
    # rm with -r and -f in any spelling: -rf, -fr, -r -f, -Rf, --recursive --force
    re.compile(r"\brm\b(?=[^;&|]*\s-(?:[a-zA-Z]*[rR]|-recursive))(?=[^;&|]*\s-(?:[a-zA-Z]*f|-force))"),
    re.compile(r"\bsudo\b"),
    re.compile(r"\b(?:chmod|chown)\b.*\b777\b"),
    re.compile(r"\bmkfs(?:\.\w+)?\b"),
    re.compile(r"\bdd\b.*\bof=/dev/"),
]

# Messages that arrived while we waited for a dialog answer, handled afterwards.
backlog = []
next_ui_id = 0


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def receive():
    if backlog:
        return backlog.pop(0)
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def ask(title, options):
    """Shows a selection dialog and waits for the answer (None when cancelled)."""
    global next_ui_id
    next_ui_id += 1
    ui_id = f"gate-{next_ui_id}"
    send({"type": "ui", "id": ui_id, "method": "select", "title": title, "options": options})
    while True:
        line = sys.stdin.readline()
        if not line:
            return None
        message = json.loads(line)
        if message.get("type") == "response" and message.get("id") == ui_id:
            return message.get("result", {}).get("value")
        backlog.append(message)


def is_dangerous(command):
    return any(pattern.search(command) for pattern in DANGEROUS)


def on_tool_call(event, has_ui):
    if event.get("toolName") != "bash":
        return None
    command = str(event.get("input", {}).get("command", ""))
    if not is_dangerous(command):
        return None
    if not has_ui:
        return {"block": True, "reason": "Dangerous command blocked (no UI to confirm it)"}
    choice = ask(f"Dangerous command:\n\n  {command}\n\nRun it?", ["Block", "Allow"])
    if choice == "Allow":
        return None
    return {"block": True, "reason": "Blocked by the user"}


def main():
    hello = receive()
    if hello is None:
        return
    has_ui = bool(hello.get("hasUI"))
    send({"type": "register", "name": "permission-gate", "events": ["tool_call"]})
    while True:
        message = receive()
        if message is None:
            return
        if message.get("type") != "event":
            continue
        event = message["event"]
        result = on_tool_call(event, has_ui) if event.get("type") == "tool_call" else None
        if "id" in message:
            send({"type": "response", "id": message["id"], "result": result})


if __name__ == "__main__":
    main()
