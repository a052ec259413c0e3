//! What every step of `cargo xtask bench` shares: a figure in its unit ([`Measure`]), running
//! a command, reading a bench binary's `RESULT` lines, and writing a figure for the table.
//! Everything else in the xtask lies above this file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// What a figure measures, which fixes its canonical unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A duration, in seconds.
    Seconds,
    /// A size, in bytes.
    Bytes,
    /// A rate of turns, per second.
    PerSecond,
    /// A rate of samples, per second.
    SamplesPerSecond,
    /// One figure divided by another (`x`).
    Ratio,
}

/// The key of W9's memory per sample in flight, derived from its two runs (by the bench step,
/// reported by the table).
pub const W9_PER_SAMPLE: &str = "W9|eval 10 000 samples, yielding model: peak-RSS growth per sample in flight (1000 vs 100 at once)";

/// One median, in its canonical unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measure {
    /// The value.
    pub value: f64,
    /// Its unit.
    pub unit: Unit,
}

impl Measure {
    pub(crate) fn seconds(value: f64) -> Self {
        Measure {
            value,
            unit: Unit::Seconds,
        }
    }

    pub(crate) fn bytes(value: f64) -> Self {
        Measure {
            value,
            unit: Unit::Bytes,
        }
    }

    /// A value in one of the units the benchmark scripts report, made canonical.
    pub fn from_unit(value: f64, unit: &str) -> Option<Measure> {
        let (scale, unit) = match unit {
            "s" => (1.0, Unit::Seconds),
            "ms" => (1e-3, Unit::Seconds),
            "us" => (1e-6, Unit::Seconds),
            "ns" => (1e-9, Unit::Seconds),
            "MiB" => (1024.0 * 1024.0, Unit::Bytes),
            "KiB" => (1024.0, Unit::Bytes),
            "turns/s" => (1.0, Unit::PerSecond),
            "samples/s" => (1.0, Unit::SamplesPerSecond),
            "x" => (1.0, Unit::Ratio),
            _ => return None,
        };
        Some(Measure {
            value: value * scale,
            unit,
        })
    }
}

/// The workspace root (this crate's parent folder).
pub fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
}

/// Runs a command to completion; fails on a non-zero exit.
pub fn sh(cmd: &mut Command) -> Result<(), String> {
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed: {status}"))
    }
}

/// Runs a command and returns its stdout (stderr goes to the terminal).
pub fn capture(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{cmd:?} failed: {}", out.status));
    }
    String::from_utf8(out.stdout).map_err(|e| e.to_string())
}

/// Records the `RESULT {json}` lines of a plain-loop bench binary as `{workload}|{case}`.
pub fn results(stdout: &str, rust: &mut BTreeMap<String, Measure>) {
    for line in stdout.lines() {
        let Some(json) = line.strip_prefix("RESULT ") else {
            if !line.trim().is_empty() && line != "HOLD" {
                eprintln!("   {line}");
            }
            continue;
        };
        let Ok(row) = serde_json::from_str::<Value>(json) else {
            continue;
        };
        let (Some(workload), Some(case), Some(median), Some(unit)) = (
            row["workload"].as_str(),
            row["case"].as_str(),
            row["median"].as_f64(),
            row["unit"].as_str(),
        ) else {
            continue;
        };
        eprintln!("   {workload} {case}: {median:.4} {unit}");
        if let Some(m) = Measure::from_unit(median, unit) {
            rust.insert(format!("{workload}|{case}"), m);
        }
    }
}

/// The label the `react` binary gives a configuration.
pub fn w5_label(k: usize, yielding: bool, events: bool) -> String {
    format!(
        "react K={k}{}{}",
        if yielding { ", yielding model" } else { "" },
        if events { ", events counted" } else { "" }
    )
}

/// A value with a readable unit, three significant digits.
pub fn show(m: Measure) -> String {
    match m.unit {
        Unit::Seconds => {
            let v = m.value;
            let (x, unit) = if v.abs() < 1e-6 {
                (v * 1e9, "ns")
            } else if v.abs() < 1e-3 {
                (v * 1e6, "µs")
            } else if v.abs() < 1.0 {
                (v * 1e3, "ms")
            } else {
                (v, "s")
            };
            format!("{} {unit}", sig3(x))
        }
        Unit::Bytes => {
            let v = m.value;
            if v.abs() < 1024.0 * 1024.0 {
                format!("{} KiB", sig3(v / 1024.0))
            } else {
                format!("{} MiB", sig3(v / 1048576.0))
            }
        }
        Unit::PerSecond => format!("{} turns/s", thousands(m.value.round())),
        Unit::SamplesPerSecond => format!("{} samples/s", thousands(m.value.round())),
        Unit::Ratio => format!("{:.2}×", m.value),
    }
}

fn sig3(x: f64) -> String {
    if x.abs() >= 100.0 {
        thousands(x.round())
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

fn thousands(x: f64) -> String {
    let digits = format!("{}", x.abs() as u64);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 { format!("-{out}") } else { out }
}

/// How many times better Actuator is (> 1: Actuator is faster, smaller or higher in rate).
pub fn ratio(rust: Measure, inspect: Measure) -> Option<f64> {
    if rust.unit != inspect.unit || rust.value <= 0.0 || inspect.value <= 0.0 {
        return None;
    }
    Some(match rust.unit {
        Unit::PerSecond | Unit::SamplesPerSecond => rust.value / inspect.value,
        _ => inspect.value / rust.value,
    })
}

/// A ratio as the table writes it (`2.4×`, `37×`, `1,200×`).
pub fn show_ratio(r: f64) -> String {
    if r >= 100.0 {
        format!("{}×", thousands(r.round()))
    } else if r >= 10.0 {
        format!("{r:.0}×")
    } else {
        format!("{r:.1}×")
    }
}
