"""Setup shared by the scripts that compare pi-rs with the reference pi: the common
command-line options, the check that the release binaries exist, and a temporary HOME
with an agent folder."""
import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def parse_args(runs):
    """`--runs`, `--pi-rs`, `--mock`, `--reference`; exits when a binary is missing."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--pi-rs", default=str(ROOT / "target/release/pi"))
    ap.add_argument("--mock", default=str(ROOT / "target/release/examples/mock_llm"))
    ap.add_argument("--reference", default=str(ROOT / "tests/support/reference-pi.sh"))
    args = ap.parse_args()
    for p in (args.pi_rs, args.mock):
        if not Path(p).exists():
            sys.exit(f"missing {p}: run cargo build --release --example mock_llm --bin pi")
    return args


def temp_home(prefix):
    """(tmp, home, agent): a fresh temporary folder with `home/.pi/agent` created."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    home = tmp / "home"
    agent = home / ".pi/agent"
    agent.mkdir(parents=True)
    return tmp, home, agent
