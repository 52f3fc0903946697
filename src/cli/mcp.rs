//! `pi mcp …`: pi 1.6 manages MCP servers with it; pi-rs has MCP in a later version, so
//! the command says so and changes nothing (exit code 1; 0 for `--help`). It never
//! becomes a prompt.

/// What `pi mcp` says.
pub const MCP_LATER: &str = "pi mcp: MCP servers come with a later version of pi-rs. Nothing was changed (mcp.json files are kept as they are).";

/// Runs `pi mcp <args…>` (`args` without the `mcp`); returns the exit code.
pub fn run_mcp_command(args: &[String]) -> u8 {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{MCP_LATER}");
        return 0;
    }
    eprintln!("{MCP_LATER}");
    1
}
