//! Reads the medians out of divan's text output (divan 0.1 has no machine-readable format).
//!
//! divan prints a tree, one benchmark or group per line:
//!
//! ```text
//! execute                       fastest       │ slowest       │ median        │ mean  …
//! ├─ w2_execute_tools                         │               │               │       …
//! │  ├─ add_1_call              4.1 µs        │ 9.2 µs        │ 4.5 µs        │ 4.6 µs …
//! ╰─ w2_parts                                 │               │               │       …
//!    ├─ validate_add            1.2 µs        │ …
//! ```
//!
//! Each level of the tree is three characters wide; a line's name is joined to its parents'
//! with `/` (`execute/w2_parts/validate_add`).

/// One benchmark's median, in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Median {
    /// The path in the tree, `/`-separated, starting with the binary's root node.
    pub path: String,
    /// The median time, in seconds.
    pub seconds: f64,
}

/// Parses divan's output (run with `--color never`).
pub fn parse(output: &str) -> Vec<Median> {
    let mut stack: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for line in output.lines() {
        // The tree's `│` is the column separator's character too: take the prefix off first.
        let Some(start) = line
            .char_indices()
            .find(|(_, c)| !matches!(c, '├' | '╰' | '─' | ' ' | '│'))
            .map(|(i, _)| i)
        else {
            continue;
        };
        let depth = line[..start].chars().count() / 3;
        let columns: Vec<&str> = line[start..].split('│').collect();
        if columns.len() < 4 {
            continue;
        }
        let Some(name) = columns[0].split_whitespace().next() else {
            continue;
        };
        stack.truncate(depth);
        stack.push(name.to_owned());
        if let Some(seconds) = parse_time(columns[2]) {
            out.push(Median {
                path: stack.join("/"),
                seconds,
            });
        }
    }
    out
}

/// `"589.8 ns"` → seconds.
fn parse_time(text: &str) -> Option<f64> {
    let mut parts = text.split_whitespace();
    let value: f64 = parts.next()?.parse().ok()?;
    let scale = match parts.next()? {
        "ps" => 1e-12,
        "ns" => 1e-9,
        "µs" | "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        _ => return None,
    };
    Some(value * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nested_medians() {
        let text = "\
Timer precision: 20 ns
schema                      fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ add_tool_constructor     10 ns         │ 20 ns         │ 12.5 ns       │ 13 ns         │ 100     │ 51200
├─ w1_parts                               │               │               │               │         │
│  ├─ validate              1.1 µs        │ 3 µs          │ 1.2 µs        │ 1.3 µs        │ 100     │ 400
│  ╰─ to_value              2 µs          │ 5 µs          │ 2.5 µs        │ 2.6 µs        │ 100     │ 200
╰─ search_info_arc          1 ns          │ 2 ns          │ 1.5 ns        │ 1.6 ns        │ 100     │ 51200
";
        let got = parse(text);
        let paths: Vec<_> = got.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "schema/add_tool_constructor",
                "schema/w1_parts/validate",
                "schema/w1_parts/to_value",
                "schema/search_info_arc"
            ]
        );
        assert!((got[1].seconds - 1.2e-6).abs() < 1e-12);
    }
}
