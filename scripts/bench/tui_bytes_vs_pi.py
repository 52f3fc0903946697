#!/usr/bin/env python3
"""Bytes written to the terminal by pi-rs and by the reference pi (npm, 0.73.1) for the
same scripted answers, counted through tmux `pipe-pane` (everything the program writes to
its pane, from the prompt being sent until the answer is finished and the UI is idle).

  scripts/bench/tui_bytes_vs_pi.py [--pi-rs target/debug/pi] [--mock target/debug/examples/mock_llm]

Scenarios, each at 100x40 and 80x24, each a fresh start with its own loopback model server:
  paragraphs  short paragraphs streamed in small chunks;
  code        wrapped long lines and a fenced code block;
  tool        a bash tool call printing 60 lines, then a short answer.
Prints the bytes of each program and the ratio pi-rs / pi (the goal is <= 0.7).
Byte counts do not depend on the build profile, so a debug build is fine. With
PI_BYTES_KEEP=<dir> the recorded bytes are kept there for a closer look.
Needs tmux and `cargo build --bin pi --example mock_llm`.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchlib import ROOT, temp_home

END = "END-OF-ANSWER"

PARAGRAPHS = "\n\n".join(
    f"Paragraph {i}: the change keeps the old behaviour for existing files and adds a check."
    for i in range(12)
) + f"\n\n{END}"

CODE = (
    "Here is the function, rewritten so that it handles the empty input and keeps the order "
    "of the remaining items stable, which the previous version did not do in every case:\n\n"
    "```rust\n"
    + "".join(f"fn step_{i}(items: &mut Vec<u32>) {{ items.retain(|x| x % {i + 2} != 0); }}\n" for i in range(14))
    + "```\n\n"
    "It runs in linear time, allocates nothing beyond the vector itself, and the tests in the "
    "module cover the edge cases mentioned above, including a vector with a single element.\n\n"
    + END
)

SCENARIOS = {
    "paragraphs": [{"text": PARAGRAPHS, "chunk_size": 12, "delay_ms": 15}],
    "code": [{"text": CODE, "chunk_size": 12, "delay_ms": 15}],
    "tool": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "for i in $(seq 1 60); do echo line $i; sleep 0.01; done"}}]},
        {"text": f"The command printed sixty lines.\n\n{END}", "chunk_size": 12, "delay_ms": 15},
    ],
}

SIZES = [(100, 40), (80, 24)]


def tmux(*args, check=True):
    return subprocess.run(["tmux", *args], check=check, capture_output=True, text=True).stdout


def pane(name):
    return tmux("capture-pane", "-p", "-t", name, check=False)


def wait_until(pred, timeout, what):
    start = time.time()
    while time.time() - start < timeout:
        if pred():
            return
        time.sleep(0.1)
    raise TimeoutError(what)


def run_once(argv, scenario, size, mock):
    """Bytes the program wrote from sending the prompt until idle after the answer."""
    tmp, home, agent = temp_home("pi-bytes-")
    port = 19800 + (os.getpid() + hash((scenario, size, argv[0]))) % 150
    script = tmp / "script.json"
    script.write_text(json.dumps({"sequence": SCENARIOS[scenario], "default": {"text": f"again {END}"}}))
    server = subprocess.Popen([mock, "--port", str(port), "--script", str(script)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    name = f"bytes-{os.getpid()}-{scenario}-{size[0]}"
    record = tmp / "pane.bytes"
    try:
        time.sleep(0.3)
        (agent / "models.json").write_text(json.dumps({"providers": {"mock": {
            "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions", "apiKey": "mock",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000}]}}}))
        (agent / "settings.json").write_text(json.dumps({
            "quietStartup": True, "defaultProvider": "mock", "defaultModel": "mock-model",
            "lastChangelogVersion": "99.0.0"}))
        proj = tmp / "proj"
        proj.mkdir()
        env = f"env HOME={home} TERM=xterm-256color PI_OFFLINE=1"
        cmd = f"cd {proj} && {env} {' '.join(argv)}"
        tmux("new-session", "-d", "-s", name, "-x", str(size[0]), "-y", str(size[1]), cmd)
        wait_until(lambda: "mock-model" in pane(name), 60, "the footer")
        time.sleep(1.0)
        tmux("pipe-pane", "-o", "-t", name, f"cat >> {record}")
        tmux("send-keys", "-t", name, "-l", "go")
        tmux("send-keys", "-t", name, "Enter")
        wait_until(lambda: END in pane(name), 120, "the end of the answer")
        # Until the spinner stopped: the pane is the same for a second.
        last, still = pane(name), time.time()
        while time.time() - still < 1.5:
            time.sleep(0.25)
            now = pane(name)
            if now != last:
                last, still = now, time.time()
        tmux("pipe-pane", "-t", name)
        time.sleep(0.3)
        keep = os.environ.get("PI_BYTES_KEEP")
        if keep and record.exists():
            who = "pi-rs" if argv[0].endswith("/pi") else "pi"
            shutil.copy(record, Path(keep) / f"{who}-{scenario}-{size[0]}x{size[1]}.bytes")
        return record.stat().st_size if record.exists() else 0
    finally:
        tmux("kill-session", "-t", name, check=False)
        server.kill()
        server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pi-rs", default=str(ROOT / "target/debug/pi"))
    ap.add_argument("--mock", default=str(ROOT / "target/debug/examples/mock_llm"))
    ap.add_argument("--reference", default=shutil.which("reference-pi") or "/work/shared/tools/reference-pi")
    ap.add_argument("--only", help="one scenario")
    args = ap.parse_args()
    for p in (args.pi_rs, args.mock):
        if not Path(p).exists():
            sys.exit(f"missing {p}: cargo build --bin pi --example mock_llm")
    if not shutil.which("tmux"):
        sys.exit("needs tmux")
    ours = [args.pi_rs, "--provider", "mock", "--model", "mock-model"]
    ref = [args.reference, "--offline", "--provider", "mock", "--model", "mock-model"]
    print(f"{'scenario':12}{'size':>8}{'pi-rs':>10}{'pi':>10}{'ratio':>8}")
    worst = 0.0
    for scenario in [args.only] if args.only else SCENARIOS:
        for size in SIZES:
            a = run_once(ours, scenario, size, args.mock)
            b = run_once(ref, scenario, size, args.mock)
            ratio = a / b if b else float("inf")
            worst = max(worst, ratio)
            print(f"{scenario:12}{size[0]:>4}x{size[1]:<3}{a:>10}{b:>10}{ratio:>8.2f}", flush=True)
    print(f"worst ratio {worst:.2f} (goal <= 0.70)")


if __name__ == "__main__":
    main()
