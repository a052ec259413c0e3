//! The Python side: copies the read-only reference to `target/python-reference`, makes its
//! virtualenv (`requirements.lock`, falling back to `inspect_ai==0.3.285`), runs `run_all.py`
//! and reads `results/latest.json`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::measure::{Measure, sh};

/// How to run the Python reference.
#[derive(Debug, Clone)]
pub struct PythonOptions {
    /// The reference folder (read-only is fine).
    pub reference: PathBuf,
    /// The Python 3.11 interpreter that makes the virtualenv.
    pub python: String,
    /// Pass `--quick` to `run_all.py`.
    pub quick: bool,
    /// Recreate the virtualenv even when it matches the lock file.
    pub fresh_venv: bool,
    /// Also run the openai-agents peer.
    pub peer: bool,
    /// Only these workloads (`w0`, `w6` …, as `--only` of `cargo xtask bench`).
    pub only: Option<Vec<String>>,
    /// Extra environment for `run_all.py` (W6's server address).
    pub env: Vec<(String, String)>,
}

/// Files and folders of the reference that are not copied (made by its runs).
const SKIPPED: &[&str] = &[
    ".venv",
    "results",
    ".logs",
    ".xdg",
    ".pip-cache",
    "__pycache__",
];

/// The marker recording which lock file the virtualenv was installed from.
const MARKER: &str = ".venv/actuator-installed-from.lock";

/// Runs the reference in a writable copy under `target/`; returns the path of its results.
pub fn run(root: &Path, options: &PythonOptions) -> Result<PathBuf, String> {
    let reference = &options.reference;
    if !reference.join("run_all.py").is_file() {
        return Err(format!(
            "no run_all.py in {}; pass --python-ref DIR",
            reference.display()
        ));
    }
    let dest = root.join("target").join("python-reference");
    eprintln!(
        "== python: copying {} to {}",
        reference.display(),
        dest.display()
    );
    copy_dir(reference, &dest)?;
    ensure_venv(&dest, options)?;

    let mut cmd = Command::new(dest.join(".venv/bin/python"));
    cmd.arg("run_all.py").current_dir(&dest);
    if options.quick {
        cmd.arg("--quick");
    }
    if !options.peer {
        cmd.arg("--no-peer");
    }
    if let Some(only) = &options.only {
        cmd.args(["--only", &python_only(only)]);
    }
    cmd.envs(options.env.iter().map(|(k, v)| (k, v)));
    let log = dest.join("run_all.stdout.log");
    let file = fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    cmd.stdout(Stdio::from(file)).stderr(Stdio::inherit());
    eprintln!(
        "== python: run_all.py{} (progress below; the table goes to {})",
        if options.quick { " --quick" } else { "" },
        log.display()
    );
    sh(&mut cmd)?;
    Ok(dest.join("results").join("latest.json"))
}

/// `--only` of `run_all.py`: its workload names (`W0`, `W6` …) for the steps of `cargo xtask
/// bench --only` (`w5` also selects `W5b`, whose script starts with `w5`; `sse`, `checkpoint`
/// and `merge` have no Python counterpart).
fn python_only(only: &[String]) -> String {
    only.iter()
        .filter(|s| !matches!(s.as_str(), "sse" | "checkpoint" | "merge"))
        .map(|s| s.to_uppercase())
        .collect::<Vec<_>>()
        .join(",")
}

/// Copies `from` into `to` (files overwritten and left writable), skipping run products.
fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let entries = fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.file_name();
        if SKIPPED.iter().any(|s| name == *s) {
            continue;
        }
        let src = entry.path();
        let dst = to.join(&name);
        if src.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            if dst.exists() {
                make_writable(&dst)?;
            }
            fs::copy(&src, &dst).map_err(|e| format!("{}: {e}", src.display()))?;
            make_writable(&dst)?;
        }
    }
    Ok(())
}

fn make_writable(path: &Path) -> Result<(), String> {
    let meta = fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut perms = meta.permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        perms.set_mode(perms.mode() | 0o200);
    }
    #[cfg(not(unix))]
    perms.set_readonly(false);
    fs::set_permissions(path, perms).map_err(|e| format!("{}: {e}", path.display()))
}

/// Makes `.venv` from the lock file, unless one made from the same lock file is there.
fn ensure_venv(dest: &Path, options: &PythonOptions) -> Result<(), String> {
    let lock = fs::read_to_string(dest.join("requirements.lock")).unwrap_or_default();
    let venv = dest.join(".venv");
    let marker = dest.join(MARKER);
    let reusable = venv.join("bin/python").is_file()
        && fs::read_to_string(&marker).is_ok_and(|m| m == lock && !lock.is_empty());
    if reusable && !options.fresh_venv {
        eprintln!("== python: reusing {} (same lock file)", venv.display());
        return Ok(());
    }
    if venv.exists() {
        fs::remove_dir_all(&venv).map_err(|e| format!("{}: {e}", venv.display()))?;
    }
    eprintln!(
        "== python: creating {} with {}",
        venv.display(),
        options.python
    );
    sh(Command::new(&options.python)
        .args(["-m", "venv", ".venv"])
        .current_dir(dest))?;
    let pip = |args: &[&str]| {
        let mut cmd = Command::new(venv.join("bin/python"));
        cmd.args(["-m", "pip"])
            .args(args)
            .current_dir(dest)
            .env("PIP_CACHE_DIR", dest.join(".pip-cache"));
        sh(&mut cmd)
    };
    if let Err(e) = pip(&["install", "-q", "--upgrade", "pip"]) {
        eprintln!("warning: upgrading pip failed ({e}); going on with the bundled pip");
    }
    eprintln!("== python: pip install -r requirements.lock");
    match pip(&["install", "-q", "-r", "requirements.lock"]) {
        Ok(()) => {
            fs::write(&marker, &lock).map_err(|e| format!("{}: {e}", marker.display()))?;
        }
        Err(e) => {
            eprintln!(
                "warning: the lock file did not install ({e}); falling back to inspect_ai==0.3.285"
            );
            pip(&["install", "-q", "inspect_ai==0.3.285"])?;
            if options.peer && pip(&["install", "-q", "openai-agents==0.24.0"]).is_err() {
                eprintln!("warning: openai-agents not installed; the peer is skipped");
            }
        }
    }
    Ok(())
}

/// Reads `results/latest.json`: every row keyed `"{workload}|{case}"`, and the run's metadata.
pub fn read_results(path: &Path) -> Result<(BTreeMap<String, Measure>, Value), String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for row in json["rows"].as_array().into_iter().flatten() {
        let (Some(workload), Some(case), Some(median), Some(unit)) = (
            row["workload"].as_str(),
            row["case"].as_str(),
            row["median"].as_f64(),
            row["unit"].as_str(),
        ) else {
            continue;
        };
        let Some(measure) = Measure::from_unit(median, unit) else {
            continue;
        };
        out.insert(format!("{workload}|{}", case.trim()), measure);
    }
    Ok((out, json["meta"].clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_the_python_workloads() {
        let only = ["w6".to_owned(), "checkpoint".to_owned(), "w2".to_owned()];
        assert_eq!(python_only(&only), "W6,W2");
    }
}
