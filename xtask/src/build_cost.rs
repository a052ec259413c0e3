//! The build-cost step of `cargo xtask bench`: clean builds timed in their own target
//! folders, after `cargo fetch`, in the dev profile.
//!
//! - `cargo build -p actuator` in the workspace (its profile), then the incremental rebuild of a
//!   small binary after an edit inside a `#[tool]` function's body.
//! - A first app (one `#[tool]`, a react agent, a real model by name: the facade's default
//!   features and `providers`) beside the same app on rig 0.44 (rig-core with `reqwest`, which
//!   its README installs for a provider client, and rig-agent), and beside rig-core 0.44 with
//!   its default features alone (the figure issue 39 quotes). Each is a crate of its own under
//!   `target/bench-build-cost/`, in the dev profile a new crate has; the builds run back to
//!   back, in turn (`--build-rounds N`: the order reverses every round), and each figure is
//!   the median of its rounds, wall time and CPU time (user + system of cargo and every
//!   compiler it ran).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::measure::{Measure, sh};

/// The key of the first app's clean build on Actuator (wall).
pub const FIRST_APP: &str = "build|first app, clean: facade default + providers";
/// The key of the same app's clean build on rig (wall).
pub const RIG_APP: &str = "build|first app, clean: rig-core 0.44 + reqwest, rig-agent";
/// The key of rig-core's clean build with its default features (wall).
pub const RIG_CORE: &str = "build|clean: rig-core 0.44, default features";
/// The CPU time (user + system) of [`FIRST_APP`]'s builds.
pub const FIRST_APP_CPU: &str = "build|first app, clean, CPU: facade default + providers";
/// The CPU time of [`RIG_APP`]'s builds.
pub const RIG_APP_CPU: &str = "build|first app, clean, CPU: rig-core 0.44 + reqwest, rig-agent";
/// The CPU time of [`RIG_CORE`]'s builds.
pub const RIG_CORE_CPU: &str = "build|clean, CPU: rig-core 0.44, default features";

/// One crate built clean: its folder's name, its source, and its dependencies.
struct App {
    /// The folder under `target/bench-build-cost/` (and the package's name).
    name: &'static str,
    /// `src/main.rs`.
    main: &'static str,
    /// The `[dependencies]` table's lines; `{facade}` is the facade's path.
    dependencies: &'static str,
    /// The lock file it starts from: `None` for the workspace's.
    lock: Option<&'static str>,
    /// The keys of its wall and CPU medians.
    keys: (&'static str, &'static str),
}

/// rig 0.44.0 is the newest that builds on Rust 1.95 (0.45 and 0.46 declare 1.97.1).
const APPS: [App; 3] = [
    App {
        name: "first-app-actuator",
        main: include_str!("../first-apps/actuator.rs"),
        dependencies: "actuator = { path = {facade}, features = [\"providers\"] }\n\
                       tokio = { version = \"1\", features = [\"rt-multi-thread\", \"macros\"] }\n",
        lock: None,
        keys: (FIRST_APP, FIRST_APP_CPU),
    },
    App {
        name: "first-app-rig",
        main: include_str!("../first-apps/rig.rs"),
        dependencies: "rig-core = { version = \"=0.44.0\", features = [\"reqwest\"] }\n\
                       rig-agent = \"=0.44.0\"\n\
                       tokio = { version = \"1\", features = [\"rt-multi-thread\", \"macros\"] }\n",
        lock: Some(include_str!("../first-apps/rig.Cargo.lock")),
        keys: (RIG_APP, RIG_APP_CPU),
    },
    App {
        name: "rig-core-default",
        main: include_str!("../first-apps/rig-core.rs"),
        dependencies: "rig-core = \"=0.44.0\"\n",
        lock: Some(include_str!("../first-apps/rig.Cargo.lock")),
        keys: (RIG_CORE, RIG_CORE_CPU),
    },
];

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// The median; of an even count, the mean of the two middle values.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match (n.checked_sub(1).map(|_| values[n / 2]), n % 2) {
        (None, _) => f64::NAN,
        (Some(upper), 0) => (values[n / 2 - 1] + upper) / 2.0,
        (Some(middle), _) => middle,
    }
}

/// The CPU seconds (user + system) of this process's children that have been waited for,
/// from `/proc/self/stat` (`cutime`, `cstime`; in USER_HZ, 100 a second on Linux).
fn children_cpu() -> Result<f64, String> {
    let stat =
        fs::read_to_string("/proc/self/stat").map_err(|e| format!("/proc/self/stat: {e}"))?;
    // The fields after the command's name, which is in parentheses and may hold spaces.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or("no ')' in /proc/self/stat")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `state` is field 3 of proc(5), `cutime` 16 and `cstime` 17: indexes 0, 13 and 14 here.
    let ticks = |i: usize| -> Result<f64, String> {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .ok_or_else(|| format!("field {} of /proc/self/stat", i + 3))
    };
    Ok((ticks(13)? + ticks(14)?) / 100.0)
}

/// Runs `cmd` with `target` as its target folder, its output to `log`; wall and CPU seconds.
fn timed(cmd: &mut Command, target: &Path, log: &Path) -> Result<(f64, f64), String> {
    let file = fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    cmd.env("CARGO_TARGET_DIR", target)
        .stdout(Stdio::null())
        .stderr(Stdio::from(file));
    let cpu0 = children_cpu()?;
    let t0 = Instant::now();
    sh(cmd).map_err(|e| format!("{e} (see {})", log.display()))?;
    let wall = t0.elapsed().as_secs_f64();
    Ok((wall, children_cpu()? - cpu0))
}

fn remove(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    Ok(())
}

/// Writes an app's crate (manifest, main.rs, lock) under `dir` and fetches its dependencies.
fn write_app(app: &App, root: &Path, dir: &Path) -> Result<PathBuf, String> {
    let crate_dir = dir.join(app.name);
    fs::create_dir_all(crate_dir.join("src")).map_err(|e| e.to_string())?;
    let facade = format!(
        "{:?}",
        root.join("crates").join("actuator").display().to_string()
    );
    let manifest = format!(
        "[package]\nname = \"{}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n{}\n[workspace]\n",
        app.name,
        app.dependencies.replace("{facade}", &facade)
    );
    fs::write(crate_dir.join("Cargo.toml"), manifest).map_err(|e| e.to_string())?;
    fs::write(crate_dir.join("src").join("main.rs"), app.main).map_err(|e| e.to_string())?;
    let lock = match app.lock {
        Some(text) => text.to_owned(),
        None => fs::read_to_string(root.join("Cargo.lock")).map_err(|e| e.to_string())?,
    };
    fs::write(crate_dir.join("Cargo.lock"), lock).map_err(|e| e.to_string())?;
    // Fetching crates is not building: every build below starts with them downloaded.
    sh(Command::new(cargo()).current_dir(&crate_dir).arg("fetch"))?;
    Ok(crate_dir)
}

/// The first apps' clean builds, `rounds` times each, in turn.
fn first_apps(
    root: &Path,
    dir: &Path,
    rounds: usize,
    rust: &mut BTreeMap<String, Measure>,
) -> Result<(), String> {
    let crates = APPS
        .iter()
        .map(|app| write_app(app, root, dir))
        .collect::<Result<Vec<_>, _>>()?;
    let mut walls = vec![Vec::new(); APPS.len()];
    let mut cpus = vec![Vec::new(); APPS.len()];
    for round in 0..rounds {
        let mut order: Vec<usize> = (0..APPS.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let target = crates[i].join("target");
            remove(&target)?;
            let (wall, cpu) = timed(
                Command::new(cargo()).current_dir(&crates[i]).arg("build"),
                &target,
                &crates[i].join("build.log"),
            )?;
            eprintln!(
                "   round {}: {}: {wall:.1} s wall, {cpu:.1} s CPU",
                round + 1,
                APPS[i].name
            );
            walls[i].push(wall);
            cpus[i].push(cpu);
        }
    }
    for (i, app) in APPS.iter().enumerate() {
        rust.insert(app.keys.0.into(), Measure::seconds(median(&mut walls[i])));
        rust.insert(app.keys.1.into(), Measure::seconds(median(&mut cpus[i])));
    }
    let ratio = |a: &str, b: &str| match (rust.get(a), rust.get(b)) {
        (Some(a), Some(b)) if a.value > 0.0 => b.value / a.value,
        _ => f64::NAN,
    };
    eprintln!(
        "   medians of {rounds}: rig's first app ÷ ours {:.2} (wall), {:.2} (CPU); \
         rig-core's defaults ÷ ours {:.2} (wall), {:.2} (CPU)",
        ratio(FIRST_APP, RIG_APP),
        ratio(FIRST_APP_CPU, RIG_APP_CPU),
        ratio(FIRST_APP, RIG_CORE),
        ratio(FIRST_APP_CPU, RIG_CORE_CPU),
    );
    Ok(())
}

/// Clean `cargo build -p actuator` in its own target folder, the incremental rebuild of a small
/// binary after an edit inside a `#[tool]` function's body, then the first apps' clean builds
/// (`rounds` rounds).
pub fn run(root: &Path, rounds: usize, rust: &mut BTreeMap<String, Measure>) -> Result<(), String> {
    let dir = root.join("target").join("bench-build-cost");
    let target = dir.join("target");
    remove(&target)?;
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;

    // Fetching crates is not building: make sure they are downloaded first.
    sh(Command::new(cargo()).current_dir(root).arg("fetch"))?;
    let (clean, _) = timed(
        Command::new(cargo())
            .current_dir(root)
            .args(["build", "-p", "actuator"]),
        &target,
        &dir.join("clean-build.log"),
    )?;
    eprintln!("   clean build: {clean:.1} s");
    rust.insert(
        "build|clean cargo build -p actuator".into(),
        Measure::seconds(clean),
    );

    // A crate outside the workspace, using the facade by path, whose main.rs is the W0 example.
    let scratch = dir.join("scratch");
    fs::create_dir_all(scratch.join("src")).map_err(|e| e.to_string())?;
    let facade = root.join("crates").join("actuator");
    let manifest = format!(
        "[package]\nname = \"w0-incremental\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nactuator = {{ path = {:?} }}\nserde_json = \"1\"\n\
         tokio = {{ version = \"1\", features = [\"rt\"] }}\n\n[workspace]\n",
        facade.display().to_string()
    );
    fs::write(scratch.join("Cargo.toml"), manifest).map_err(|e| e.to_string())?;
    fs::copy(root.join("Cargo.lock"), scratch.join("Cargo.lock")).map_err(|e| e.to_string())?;
    let source = fs::read_to_string(facade.join("examples").join("w0_first_call.rs"))
        .map_err(|e| e.to_string())?;
    let body = "    x + y\n";
    if source.matches(body).count() != 1 {
        return Err("w0_first_call.rs should contain `x + y` once, as add's body".into());
    }
    let main_rs = scratch.join("src").join("main.rs");
    fs::write(&main_rs, &source).map_err(|e| e.to_string())?;
    let build = || {
        timed(
            Command::new(cargo()).current_dir(&scratch).arg("build"),
            &target,
            &dir.join("incremental-build.log"),
        )
        .map(|(wall, _)| wall)
    };
    build()?;
    let mut rebuilds = Vec::new();
    for i in 0..3 {
        let edited = if i % 2 == 0 {
            source.replace(body, "    y + x\n")
        } else {
            source.clone()
        };
        fs::write(&main_rs, edited).map_err(|e| e.to_string())?;
        rebuilds.push(build()?);
    }
    let incremental = median(&mut rebuilds);
    eprintln!("   incremental rebuild: {incremental:.2} s");
    rust.insert(
        "build|incremental rebuild after editing a #[tool] body".into(),
        Measure::seconds(incremental),
    );

    first_apps(root, &dir, rounds, rust)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_cpu_reads_this_process_stat() {
        let before = children_cpu().expect("readable");
        assert!(before >= 0.0);
        sh(&mut Command::new("true")).expect("true runs");
        assert!(children_cpu().expect("readable") >= before);
    }

    #[test]
    fn median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(&mut [3.0, 1.0]), 2.0);
        assert_eq!(median(&mut [5.0, 1.0, 3.0]), 3.0);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn every_app_has_a_main_and_distinct_keys() {
        let mut keys = std::collections::BTreeSet::new();
        for app in &APPS {
            assert!(app.main.contains("fn main"), "{}", app.name);
            assert!(keys.insert(app.keys.0) && keys.insert(app.keys.1));
        }
        assert!(APPS[0].dependencies.contains("{facade}"));
    }
}
