"""Setup shared by the scripts that compare pi-rs with the reference pi (1.6.0 unless
PI_REFERENCE_VERSION says otherwise): the common command-line options, the check that the
release binaries exist, a temporary HOME with an agent folder whose models.json points at
the loopback mock model, a fresh mock server per run, measured runs (wall time, peak RSS,
CPU time) and the machine load printed next to the figures."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_VERSION = os.environ.get("PI_REFERENCE_VERSION", "1.6.0")
# The machine's shared installer of the reference pi (any version); the repository's own
# script installs the 0.x packages only.
SHARED_REFERENCE = Path("/work/shared/tools/reference-pi")


def default_reference():
    if SHARED_REFERENCE.exists():
        return str(SHARED_REFERENCE)
    return str(ROOT / "tests/support/reference-pi.sh")


def add_common(ap, runs):
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--pi-rs", default=str(ROOT / "target/release/pi"))
    ap.add_argument("--mock", default=str(ROOT / "target/release/examples/mock_llm"))
    ap.add_argument("--reference", default=default_reference())
    ap.add_argument("--skip-reference", action="store_true")


def check_binaries(args, *extra):
    for p in (args.pi_rs, args.mock, *extra):
        if not Path(p).exists():
            sys.exit(f"missing {p}: run cargo build --release --example mock_llm --bin pi")


def parse_args(runs):
    """`--runs`, `--pi-rs`, `--mock`, `--reference`; exits when a binary is missing."""
    ap = argparse.ArgumentParser()
    add_common(ap, runs)
    args = ap.parse_args()
    check_binaries(args)
    return args


def temp_home(prefix):
    """(tmp, home, agent): a fresh temporary folder with `home/.pi/agent` created."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    home = tmp / "home"
    agent = home / ".pi/agent"
    agent.mkdir(parents=True)
    return tmp, home, agent


def write_models(agent, port):
    """models.json pointing the provider `mock` at the loopback server on `port`."""
    (agent / "models.json").write_text(json.dumps({"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions", "apiKey": "mock",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000}]}}}))


def bench_env(home):
    env = dict(os.environ, HOME=str(home), PI_OFFLINE="1", PI_REFERENCE_VERSION=REFERENCE_VERSION)
    env.pop("PI_CODING_AGENT_DIR", None)
    return env


MOCK_FLAGS = ["--offline", "--provider", "mock", "--model", "mock-model"]


class Mock:
    """The loopback mock model on `port`, restarted with its script for every run (a
    script's `sequence` is used up by one run)."""

    def __init__(self, binary, script_file, port):
        self.binary, self.script_file, self.port, self.proc = binary, script_file, port, None

    def restart(self):
        self.stop()
        self.proc = subprocess.Popen([self.binary, "--port", str(self.port), "--script", str(self.script_file)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Ready once it accepts a connection.
        import socket
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                return
            except OSError:
                time.sleep(0.01)
        sys.exit("the mock model server did not start")

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def measured(cmd, env, cwd, expect=None):
    """One run: (wall s, peak RSS MB, CPU s user + system). Exits when it fails or its
    output lacks `expect`."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or (expect is not None and expect not in out):
        sys.exit(f"run failed ({code}): {' '.join(map(str, cmd))}\n{out.decode()[:500]}\n{err.decode()[:2000]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def load():
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} (1/5/15 min), {os.cpu_count()} cores"


def med(xs):
    return statistics.median(xs)
