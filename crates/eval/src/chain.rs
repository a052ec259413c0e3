//! A chain of solvers: each works on the task state in turn (the reference's `chain`).

use std::sync::Arc;

use actuator_agent::{AgentError, RunContext};
use actuator_model::BoxFuture;
use actuator_multi::{Solver, TaskState};
use actuator_tool_core::ToolRequirement;

/// Solvers run one after another on the same state; a solver that marks the state
/// `completed` (or fails) ends the chain, as in the reference.
///
/// ```
/// use std::sync::Arc;
/// use actuator_eval::chain;
/// use actuator_multi::{Solver, TaskState};
/// # let a: Arc<dyn Solver> = Arc::new(chain(Vec::new()));
/// let both = chain(vec![a.clone(), a]);
/// # let _ = both;
/// ```
pub fn chain(solvers: Vec<Arc<dyn Solver>>) -> Chain {
    Chain { solvers }
}

/// A chain of solvers. Build one with [`chain`].
#[derive(Clone)]
pub struct Chain {
    solvers: Vec<Arc<dyn Solver>>,
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain")
            .field("solvers", &self.solvers.len())
            .finish()
    }
}

impl Solver for Chain {
    fn requirements(&self) -> Vec<ToolRequirement> {
        let mut all: Vec<ToolRequirement> = Vec::new();
        for need in self.solvers.iter().flat_map(|s| s.requirements()) {
            if !all.contains(&need) {
                all.push(need);
            }
        }
        all
    }

    fn solve<'a>(
        &'a self,
        state: &'a mut TaskState,
        cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(async move {
            for solver in &self.solvers {
                if state.completed {
                    break;
                }
                solver.solve(state, cx).await?;
            }
            Ok(())
        })
    }
}
