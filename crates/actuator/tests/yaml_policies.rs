//! The facade's `yaml` feature reaches actuator-exec's: a facade user reads the reference's
//! YAML approval policy files, by path or by `file://` URI.

#![cfg(feature = "yaml")]
#![allow(clippy::unwrap_used)]

use actuator::exec::ApproverRegistry;

#[test]
fn a_yaml_policy_file_reads_through_the_facade_by_path_and_by_uri() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("approval.yaml");
    std::fs::write(
        &file,
        "approvers:\n  - name: auto\n    tools: [\"read_*\"]\n    decision: approve\n  - name: auto\n    tools: \"*\"\n    decision: reject\n",
    )
    .unwrap();
    let registry = ApproverRegistry::new();
    assert_eq!(registry.read_policies(&file).unwrap().len(), 2);
    let uri = format!("file://{}", file.display());
    assert_eq!(registry.read_policies(&uri).unwrap().len(), 2);
}

#[test]
fn a_yaml_review_policy_file_reads_through_the_facade() {
    use std::sync::Arc;

    use actuator::exec::{Review, ReviewRequest, Reviewer, ReviewerRegistry};
    use actuator::model::BoxFuture;

    struct Pass;
    impl Reviewer for Pass {
        fn review<'a>(&'a self, _r: ReviewRequest<'a>) -> BoxFuture<'a, Review> {
            Box::pin(async { Review::proceed() })
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("review.yml");
    std::fs::write(
        &file,
        "reviewers:\n  - name: monitor\n    tools: bash, python\n",
    )
    .unwrap();
    let mut registry = ReviewerRegistry::new();
    registry.register("monitor", |_| Ok(Arc::new(Pass)));
    let policies = registry.read_policies(&file).unwrap();
    assert_eq!(policies.len(), 1);
    assert_eq!(policies[0].reviewer_name(), "monitor");
}
