//! A driver for instruction counts (`valgrind --tool=callgrind`): `one_call on|off|rmcp N`
//! runs N `add(1, 2)` calls awaited inside one task, through Actuator's `execute_tools` with
//! a fresh event log per call (`on`) or none (`off`), or rmcp's `ToolRouter::call` (`rmcp`).

use actuator_peers::{VALID, mcp, ours, runtime};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "on".to_owned());
    let n: usize = args.next().map_or(Ok(100_000), |n| n.parse())?;
    let rt = runtime()?;
    let arguments = serde_json::from_str(VALID)?;
    let tools = ours::tools();
    let messages = ours::conversation(arguments);
    rt.block_on(async {
        match mode.as_str() {
            "rmcp" => {
                let harness = mcp::Harness::start();
                for _ in 0..n {
                    let params = mcp::params(VALID).ok_or("params")?;
                    std::hint::black_box(harness.call(params).await)?;
                }
            }
            "off" => {
                let options = ours::options_without_events();
                for _ in 0..n {
                    std::hint::black_box(
                        actuator_exec::execute_tools(&messages, &tools, &options).await?,
                    );
                }
            }
            _ => {
                for _ in 0..n {
                    let options = ours::options_with_events();
                    std::hint::black_box(
                        actuator_exec::execute_tools(&messages, &tools, &options).await?,
                    );
                }
            }
        }
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}
