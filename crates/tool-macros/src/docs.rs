//! Descriptions from rustdoc comments.
//!
//! The tool description is the doc text before the first `# ` heading, with an `# Examples`
//! section appended as `"\n\nExamples\n\n" + text`. Parameter descriptions come from the bullets
//! of an `# Arguments` section (`` * `x` - text `` or `- x: text`, with indented continuation
//! lines). Every other section (`# Returns`, `# Errors`, `# Panics`, …) is left out: it is
//! written for Rust callers, not for a model.
//!
//! The text is kept as the user wrote it: one leading space is removed from each `///` line,
//! lines inside a paragraph stay joined by `\n`, runs of blank lines become one paragraph break,
//! and blank lines at either end go. Lines rustdoc hides in Rust code blocks (`# use foo;`) are
//! hidden here too.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Lit, Meta};

/// One line of doc text, with the span of the attribute (the `///` line) it came from.
#[derive(Debug, Clone)]
pub(crate) struct DocLine {
    pub(crate) text: String,
    pub(crate) span: Span,
}

/// A parameter description from an `# Arguments` bullet.
#[derive(Debug, Clone)]
pub(crate) struct ArgDoc {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) span: Span,
}

/// An `# Arguments` line that is not a well-formed bullet.
#[derive(Debug, Clone)]
pub(crate) struct Problem {
    pub(crate) span: Span,
    pub(crate) message: String,
    /// The parameter the line seems to describe.
    pub(crate) name: Option<String>,
}

/// What a function's doc comment says.
#[derive(Debug, Default)]
pub(crate) struct FnDocs {
    /// The tool description: the text before the first heading, plus any `# Examples`.
    /// Empty when there is no text before the first heading.
    pub(crate) description: String,
    /// The `# Arguments` bullets, in order.
    pub(crate) arguments: Vec<ArgDoc>,
    /// Lines of an `# Arguments` section that could not be read as a parameter bullet, with
    /// the parameter name when one could be read.
    pub(crate) problems: Vec<Problem>,
}

/// Whether an attribute is a doc comment (`///`, `/** */` or `#[doc = …]`).
pub(crate) fn is_doc(attr: &Attribute) -> bool {
    attr.path().is_ident("doc")
}

/// The doc lines of some attributes. `#[doc = "…"]` counts the same as `///`; doc attributes
/// whose value is not a string literal (`#[doc = include_str!(…)]`) and `#[doc(hidden)]` are
/// skipped.
pub(crate) fn doc_lines(attrs: &[Attribute]) -> Vec<DocLine> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| is_doc(a)) {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        let Expr::Lit(expr) = &nv.value else {
            continue;
        };
        let Lit::Str(lit) = &expr.lit else {
            continue;
        };
        let span = attr.span();
        let value = lit.value();
        if value.contains('\n') {
            lines.extend(
                unindent_block(&value)
                    .into_iter()
                    .map(|text| DocLine { text, span }),
            );
        } else {
            let text = value.strip_prefix(' ').unwrap_or(&value).to_owned();
            lines.push(DocLine { text, span });
        }
    }
    lines
}

/// The lines of a block doc comment (`/** … */`) or a multi-line `#[doc = "…"]`: blank first and
/// last lines dropped, the common indentation removed, and a leading `*` column (as in
/// `/**\n * text\n */`) removed.
fn unindent_block(value: &str) -> Vec<String> {
    let mut lines: Vec<&str> = value.split('\n').collect();
    while lines.first().is_some_and(|l| l.trim().is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").to_owned())
        .collect();
    let starred = out
        .iter()
        .filter(|l| !l.trim().is_empty())
        .all(|l| l.starts_with('*'));
    if starred && out.iter().any(|l| !l.trim().is_empty()) {
        for line in &mut out {
            if let Some(rest) = line.strip_prefix('*') {
                *line = rest.strip_prefix(' ').unwrap_or(rest).to_owned();
            }
        }
    }
    out
}

/// A code fence: its character (`` ` `` or `~`), its length, and whether its content is Rust.
#[derive(Debug, Clone, Copy)]
struct Fence {
    ch: char,
    len: usize,
    rust: bool,
}

/// The number of leading spaces of a line (tabs count as four, as in Markdown).
fn indent_of(line: &str) -> usize {
    let mut n = 0;
    for ch in line.chars() {
        match ch {
            ' ' => n += 1,
            '\t' => n += 4,
            _ => break,
        }
    }
    n
}

/// The fence a line opens, if it opens one.
fn opening_fence(line: &str) -> Option<Fence> {
    if indent_of(line) > 3 {
        return None;
    }
    let t = line.trim_start();
    let ch = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = t.chars().take_while(|c| *c == ch).count();
    if len < 3 {
        return None;
    }
    let info = t[len..].trim();
    if ch == '`' && info.contains('`') {
        return None;
    }
    let rust = info
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .all(|w| {
            matches!(
                w,
                "rust"
                    | "ignore"
                    | "should_panic"
                    | "no_run"
                    | "compile_fail"
                    | "test_harness"
                    | "standalone_crate"
            ) || w.starts_with("edition")
                || w.starts_with("ignore-")
        });
    Some(Fence { ch, len, rust })
}

/// Whether a line closes `fence`.
fn closes(line: &str, fence: Fence) -> bool {
    if indent_of(line) > 3 {
        return false;
    }
    let t = line.trim();
    t.chars().take_while(|c| *c == fence.ch).count() >= fence.len
        && t.chars().all(|c| c == fence.ch)
}

/// The title of a level-1 heading (`# Arguments` → `Arguments`), if the line is one.
fn heading(line: &str) -> Option<&str> {
    if indent_of(line) > 3 {
        return None;
    }
    let t = line.trim();
    let rest = if t == "#" { "" } else { t.strip_prefix("# ")? };
    Some(
        rest.trim()
            .trim_end_matches('#')
            .trim()
            .trim_end_matches(':')
            .trim(),
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SectionKind {
    Intro,
    Arguments,
    Examples,
    Other,
}

fn section_kind(title: &str) -> SectionKind {
    match title.to_ascii_lowercase().as_str() {
        "arguments" | "args" | "parameters" | "params" => SectionKind::Arguments,
        "examples" | "example" => SectionKind::Examples,
        _ => SectionKind::Other,
    }
}

/// Splits doc lines into sections at level-1 headings outside code blocks.
fn sections(lines: &[DocLine]) -> Vec<(SectionKind, Vec<&DocLine>)> {
    let mut out: Vec<(SectionKind, Vec<&DocLine>)> = vec![(SectionKind::Intro, Vec::new())];
    let mut fence: Option<Fence> = None;
    for line in lines {
        if let Some(open) = fence {
            if closes(&line.text, open) {
                fence = None;
            }
        } else if let Some(open) = opening_fence(&line.text) {
            fence = Some(open);
        } else if let Some(title) = heading(&line.text) {
            out.push((section_kind(title), Vec::new()));
            continue;
        }
        if let Some(last) = out.last_mut() {
            last.1.push(line);
        }
    }
    out
}

/// Renders doc lines as description text: trailing whitespace and blank lines at either end
/// removed, runs of blank lines outside code blocks collapsed to one, and the lines rustdoc
/// hides in Rust code blocks dropped (`##` at their start becomes `#`, as rustdoc shows it).
pub(crate) fn render<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut fence: Option<Fence> = None;
    for line in lines {
        let line = line.trim_end();
        if let Some(open) = fence {
            if closes(line, open) {
                fence = None;
            } else if open.rust {
                let t = line.trim_start();
                if t == "#" || t.starts_with("# ") {
                    continue;
                }
                if t.starts_with("##") {
                    let indent = line.len() - t.len();
                    out.push(format!("{}{}", &line[..indent], &t[1..]));
                    continue;
                }
            }
            out.push(line.to_owned());
            continue;
        }
        if let Some(open) = opening_fence(line) {
            fence = Some(open);
        }
        if line.is_empty() && out.last().is_none_or(String::is_empty) {
            continue;
        }
        out.push(line.to_owned());
    }
    while out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    out.join("\n")
}

/// Reads a function's doc lines.
pub(crate) fn parse_fn_docs(lines: &[DocLine]) -> FnDocs {
    let mut docs = FnDocs::default();
    let mut intro = String::new();
    let mut examples: Vec<String> = Vec::new();
    for (kind, section) in sections(lines) {
        match kind {
            SectionKind::Intro => intro = render(section.iter().map(|l| l.text.as_str())),
            SectionKind::Examples => {
                let text = render(section.iter().map(|l| l.text.as_str()));
                if !text.is_empty() {
                    examples.push(text);
                }
            }
            SectionKind::Arguments => parse_arguments(&section, &mut docs),
            SectionKind::Other => {}
        }
    }
    if !intro.is_empty() && !examples.is_empty() {
        intro.push_str("\n\nExamples\n\n");
        intro.push_str(&examples.join("\n\n"));
    }
    docs.description = intro;
    docs
}

/// Reads the bullets of an `# Arguments` section. A bullet is `* ` / `- ` / `+ ` at the start of
/// a line followed by a name (optionally in backticks), a separator (`-`, `:`, `–` or `—`) and
/// the text; lines indented under a bullet continue it. Other lines are prose and are skipped.
fn parse_arguments(section: &[&DocLine], docs: &mut FnDocs) {
    let mut current: Option<ArgDoc> = None;
    let mut fence: Option<Fence> = None;
    for line in section {
        let text = line.text.trim_end();
        if let Some(open) = fence {
            if closes(text, open) {
                fence = None;
            }
            if let Some(arg) = &mut current {
                arg.text.push('\n');
                arg.text.push_str(text.trim_start());
            }
            continue;
        }
        if text.trim().is_empty() {
            finish_arg(&mut current, docs);
            continue;
        }
        let indent = indent_of(text);
        let t = text.trim_start();
        let bullet = indent < 2
            && ["* ", "- ", "+ "]
                .iter()
                .any(|m| t.starts_with(m) || t == m.trim_end());
        if bullet {
            finish_arg(&mut current, docs);
            match parse_bullet(t[1..].trim_start()) {
                Ok((name, rest)) => {
                    current = Some(ArgDoc {
                        name,
                        text: rest.to_owned(),
                        span: line.span,
                    });
                }
                Err((name, message)) => docs.problems.push(Problem {
                    span: line.span,
                    message,
                    name,
                }),
            }
        } else if indent >= 2 && current.is_some() {
            if let Some(arg) = &mut current {
                if let Some(open) = opening_fence(t) {
                    fence = Some(open);
                }
                if !arg.text.is_empty() {
                    arg.text.push('\n');
                }
                arg.text.push_str(t);
            }
        } else {
            finish_arg(&mut current, docs);
        }
    }
    finish_arg(&mut current, docs);
}

fn finish_arg(current: &mut Option<ArgDoc>, docs: &mut FnDocs) {
    if let Some(mut arg) = current.take() {
        arg.text = render(arg.text.lines());
        docs.arguments.push(arg);
    }
}

/// Splits `` `x` - text `` / `x: text` into the name and the text. On failure, returns the
/// message and the name if one could be read.
fn parse_bullet(rest: &str) -> Result<(String, &str), (Option<String>, String)> {
    const EXPECTED: &str = "expected an argument description such as ``* `x` - What x is.`` or \
                            `- x: What x is.` in the `# Arguments` section";
    let (name, after) = if let Some(quoted) = rest.strip_prefix('`') {
        let end = quoted
            .find('`')
            .ok_or_else(|| (None, EXPECTED.to_owned()))?;
        // `` `x: i64` `` names `x`.
        let inside = quoted[..end].split(':').next().unwrap_or_default();
        (inside.trim(), &quoted[end + 1..])
    } else {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#'))
            .unwrap_or(rest.len());
        (&rest[..end], &rest[end..])
    };
    let name = name.strip_prefix("r#").unwrap_or(name);
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !valid {
        return Err((None, EXPECTED.to_owned()));
    }
    let after = after.trim_start();
    if after.is_empty() {
        return Ok((name.to_owned(), ""));
    }
    for sep in ["-", ":", "\u{2013}", "\u{2014}"] {
        if let Some(text) = after.strip_prefix(sep) {
            return Ok((name.to_owned(), text.trim()));
        }
    }
    Err((
        Some(name.to_owned()),
        format!("expected `-` or `:` between the argument name `{name}` and its description"),
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn lines(text: &str) -> Vec<DocLine> {
        text.lines()
            .map(|l| DocLine {
                text: l.to_owned(),
                span: Span::call_site(),
            })
            .collect()
    }

    fn docs(text: &str) -> FnDocs {
        parse_fn_docs(&lines(text))
    }

    fn args(d: &FnDocs) -> Vec<(&str, &str)> {
        d.arguments
            .iter()
            .map(|a| (a.name.as_str(), a.text.as_str()))
            .collect()
    }

    #[test]
    fn intro_stops_at_the_first_heading() {
        let d = docs("Adds.\nSecond line.\n\n\nNext paragraph.\n\n# Returns\nThe sum.");
        assert_eq!(d.description, "Adds.\nSecond line.\n\nNext paragraph.");
    }

    #[test]
    fn examples_are_appended_and_other_sections_dropped() {
        let d = docs(
            "Adds.\n\n# Errors\nNever.\n# Examples\n```\n# use x::add;\nadd(1, 2);\n```\n# Panics\nNo.",
        );
        assert_eq!(d.description, "Adds.\n\nExamples\n\n```\nadd(1, 2);\n```");
    }

    #[test]
    fn headings_inside_code_blocks_do_not_split() {
        let d = docs("Runs.\n\n```sh\n# comment\n```\nAfter.");
        assert_eq!(d.description, "Runs.\n\n```sh\n# comment\n```\nAfter.");
    }

    #[test]
    fn both_bullet_styles_and_continuations() {
        let d = docs(
            "Adds.\n\n# Arguments\n\n* `x` - First addend.\n* y - Second\n  addend.\n- z: Third.\n- `w`: Fourth\n    with more.\nSome prose.\n* `v` — Fifth.\n* `u: u8` - Sixth.",
        );
        assert!(d.problems.is_empty(), "{:?}", d.problems);
        assert_eq!(
            args(&d),
            vec![
                ("x", "First addend."),
                ("y", "Second\naddend."),
                ("z", "Third."),
                ("w", "Fourth\nwith more."),
                ("v", "Fifth."),
                ("u", "Sixth."),
            ]
        );
        assert_eq!(d.description, "Adds.");
    }

    #[test]
    fn malformed_bullets_are_problems() {
        let d = docs("Adds.\n# Arguments\n* `x` First addend.\n* - nothing");
        assert_eq!(d.problems.len(), 2);
        assert!(d.arguments.is_empty());
    }

    #[test]
    fn block_comments_are_unindented() {
        assert_eq!(
            unindent_block("\n     * One\n     *   two\n     "),
            vec!["One", "  two"]
        );
        assert_eq!(unindent_block("\n    A\n      B\n"), vec!["A", "  B"]);
    }

    #[test]
    fn hidden_rust_lines() {
        assert_eq!(
            render(["```rust,no_run", "# hidden", "## shown", "code", "```"]),
            "```rust,no_run\n# shown\ncode\n```"
        );
        assert_eq!(render(["```text", "# kept", "```"]), "```text\n# kept\n```");
    }

    #[test]
    fn no_intro_means_no_description() {
        let d = docs("# Examples\nadd(1, 2)");
        assert_eq!(d.description, "");
    }
}
