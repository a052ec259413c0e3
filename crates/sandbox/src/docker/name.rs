//! The names of the compose projects this module makes, and how they are recognised.

use std::sync::LazyLock;

/// The pattern every project name this module makes matches (the reference's
/// `inspect-{task}-i{id}` with this crate's prefix); [`cleanup_orphans`](super::cleanup_orphans)
/// takes down exactly the projects that match it.
pub const PROJECT_NAME_PATTERN: &str = r"^actuator-[a-z0-9\-_]*-i[a-z0-9]{6,}$";

static PROJECT_NAME: LazyLock<Option<regex::Regex>> =
    LazyLock::new(|| regex::Regex::new(PROJECT_NAME_PATTERN).ok());

/// Whether `name` is a project name this module makes ([`PROJECT_NAME_PATTERN`]).
///
/// ```
/// use actuator_sandbox::docker::is_project_name;
/// assert!(is_project_name("actuator-my-task-iab12cd"));
/// assert!(!is_project_name("inspect-my-task-iab12cd"));
/// assert!(!is_project_name("actuator-my-task"));
/// ```
pub fn is_project_name(name: &str) -> bool {
    PROJECT_NAME.as_ref().is_some_and(|re| re.is_match(name))
}

/// A new project name for a sample of `task`: `actuator-{slug}-i{6 random [a-z0-9]}`, where
/// the slug is the task name lowercased, with anything but `[a-z0-9-_]` turned into `-`, runs
/// of `-` folded, cut to 12 characters, without trailing `_` (the reference's rule, which
/// keeps the name within Docker's constraints).
///
/// ```
/// use actuator_sandbox::docker::{is_project_name, project_name};
/// let name = project_name("My Task: Hard!");
/// assert!(name.starts_with("actuator-my-task-hard-i"), "{name}");
/// assert!(is_project_name(&name));
/// assert_ne!(project_name("t"), project_name("t"));
/// ```
pub fn project_name(task: &str) -> String {
    let mut slug = String::new();
    for c in task.to_lowercase().chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_' {
            c
        } else {
            '-'
        };
        if !(c == '-' && slug.ends_with('-')) {
            slug.push(c);
        }
    }
    if slug.is_empty() {
        slug.push_str("task");
    }
    let slug: String = slug.chars().take(12).collect();
    let slug = slug.trim_end_matches('_');
    let id: String = (0..6)
        .map(|_| fastrand::digit(36).to_ascii_lowercase())
        .collect();
    format!("actuator-{slug}-i{id}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn project_names_follow_the_pattern() {
        for task in ["", "___", "A/B:C", "x".repeat(100).as_str(), "тест", "a__"] {
            let name = project_name(task);
            assert!(is_project_name(&name), "{task:?} -> {name}");
        }
        assert!(project_name("a__").starts_with("actuator-a-i"));
        assert!(project_name("").starts_with("actuator-task-i"));
    }
}
