#!/usr/bin/env python3
"""Side by side with reference pi 1.6: one pi 1.6 user's configuration (settings.json,
models.json with `$NAME` keys, sampling parameters, thinking maps and compat flags, a
prompt template with `${1:-default}`, a trusted project), one print-mode prompt each,
against the loopback scripted model. Prints the request fields that differ (tools,
thinking, sampling, headers, the user message) and the files each left behind.

  cargo build --bin pi --example mock_llm
  python3 scripts/compare/pi16_user_config.py [--pi-rs target/debug/pi]

Exit status 0 when the compared fields are equal, 1 otherwise."""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED_REFERENCE = Path("/work/shared/tools/reference-pi")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def user_config(home, project, port):
    agent = home / ".pi/agent"
    (agent / "prompts").mkdir(parents=True)
    (agent / "settings.json").write_text(json.dumps({
        "$schema": "https://pi.dev/schemas/settings.schema.json",
        "defaultProvider": "lab",
        "defaultModel": "lab-model",
        "defaultThinkingLevel": "max",
        "modelThinkingLevels": {"lab/lab-model": "high"},
        "defaultTools": ["+grep", "-write"],
        "quietStartup": "header",
        "defaultProjectTrust": "never",
    }, indent=2))
    (agent / "models.json").write_text(json.dumps({"providers": {"lab": {
        "baseUrl": f"http://127.0.0.1:{port}/v1",
        "api": "openai-completions",
        "apiKey": "$LAB_KEY",
        "headers": {"x-team": "${LAB_TEAM}", "x-literal": "plain-value"},
        "compat": {"supportsDeveloperRole": False, "vllmPriority": 3,
                   "promptCacheKeyMode": "disabled"},
        "models": [{
            "id": "lab-model", "reasoning": True, "contextWindow": 100000, "maxTokens": 8000,
            "thinkingLevelMap": {"high": "high", "xhigh": "high", "max": "high"},
            "samplingParams": {"temperature": 0.3, "top_k": 20},
            "samplingParamsByThinkingLevel": {"high": {"temperature": 0.6}},
        }]}}}, indent=2))
    (agent / "trust.json").write_text(json.dumps({str(project): True}, indent=2))
    (agent / "prompts/greet.md").write_text("Say hello to ${1:-the world} in ${2:-English}.\n")
    (project / ".pi").mkdir(parents=True)
    (project / ".pi/settings.json").write_text(json.dumps({"defaultTools": ["+find"]}))


def run(binary, args, home, project, port, log):
    mock = subprocess.Popen([str(ROOT / "target/debug/examples/mock_llm"), "--port", str(port),
                             "--script", str(home.parent / "script.json"), "--log", str(log)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.01)
        env = dict(os.environ, HOME=str(home), LAB_KEY="secret-123", LAB_TEAM="blue",
                   PI_OFFLINE="1")
        env.pop("PI_CODING_AGENT_DIR", None)
        p = subprocess.run([str(binary), *args], env=env, cwd=project, capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=120)
        return p
    finally:
        mock.kill()
        mock.wait()


def request_view(log):
    lines = [json.loads(l) for l in log.read_text().splitlines() if l.strip()] if log.exists() else []
    if not lines:
        return None
    req = lines[0]
    body = req.get("body") or {}
    headers = {k.lower(): v for k, v in (req.get("headers") or {}).items()}
    msgs = body.get("messages") or []
    user = [m for m in msgs if m.get("role") == "user"]
    user_text = user[-1].get("content") if user else None
    if isinstance(user_text, list):
        user_text = " ".join(p.get("text", "") for p in user_text)
    view = {k: body.get(k) for k in ("model", "temperature", "top_k", "top_p", "priority",
                                     "prompt_cache_key", "reasoning_effort", "max_tokens",
                                     "max_completion_tokens", "stream")}
    view["tools"] = sorted(t.get("function", {}).get("name") for t in body.get("tools") or [])
    view["user message"] = user_text
    for h in ("authorization", "x-team", "x-literal"):
        view[f"header {h}"] = headers.get(h)
    return view


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pi-rs", default=str(ROOT / "target/debug/pi"))
    ap.add_argument("--reference", default=str(SHARED_REFERENCE if SHARED_REFERENCE.exists()
                                               else ROOT / "tests/support/reference-pi.sh"))
    args = ap.parse_args()
    views, outs = {}, {}
    for name, binary in (("pi-rs", args.pi_rs), ("pi 1.6", args.reference)):
        tmp = Path(tempfile.mkdtemp(prefix="pi16cfg-"))
        home, project = tmp / "home", tmp / "project"
        home.mkdir()
        project.mkdir()
        (tmp / "script.json").write_text(json.dumps({"default": {"text": "hello back"}}))
        port = free_port()
        user_config(home, project, port)
        log = tmp / "requests.jsonl"
        p = run(binary, ["-p", "/greet Ada"], home, project, port, log)
        outs[name] = (p.returncode, p.stdout.decode(errors="replace").strip(),
                      p.stderr.decode(errors="replace").strip())
        views[name] = request_view(log)
        sessions = sorted(str(f.relative_to(home)) for f in (home / ".pi/agent/sessions").rglob("*.jsonl")) if (home / ".pi/agent/sessions").exists() else []
        views[name] = (views[name], len(sessions))
    same = True
    a, b = views["pi-rs"][0], views["pi 1.6"][0]
    for name in outs:
        code, out, err = outs[name]
        print(f"{name}: exit {code}, stdout {out[:80]!r}, stderr {err[:300]!r}, session files {views[name][1]}")
    if a is None or b is None:
        print("one side sent no request")
        return 1
    for key in sorted(set(a) | set(b)):
        mark = "  " if a.get(key) == b.get(key) else "!="
        if a.get(key) != b.get(key):
            same = False
        print(f"{mark} {key}: pi-rs {a.get(key)!r} | pi 1.6 {b.get(key)!r}")
    if views["pi-rs"][1] != views["pi 1.6"][1]:
        same = False
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
