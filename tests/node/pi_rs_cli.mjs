// Stands in for pi's `dist/cli.js` when pi 1.6's own `RpcClient` drives pi-rs: the client
// always starts `node <cliPath> --mode rpc ...`, so this script starts the pi-rs binary
// named by PI_RS_BIN with the same arguments and the same stdin, stdout and stderr, passes
// termination signals on, and exits as the binary did.
import { spawn } from "node:child_process";
import { constants } from "node:os";

const bin = process.env.PI_RS_BIN;
if (!bin) {
  console.error("pi_rs_cli.mjs: set PI_RS_BIN to the pi-rs binary");
  process.exit(2);
}
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  console.error(`pi_rs_cli.mjs: cannot start ${bin}: ${error.message}`);
  process.exit(127);
});
child.on("exit", (code, signal) => {
  process.exit(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1));
});
