//! The five commands, each in the reference's words, on files read and written inside the
//! sandbox.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use actuator_sandbox::{ExecRequest, Sandbox};
use actuator_tool_core::ToolError;

use super::format::{count, expandtabs, make_output, normpath, py_list};

/// The most undo entries kept per file (the reference's `MAX_HISTORY_ENTRIES_PER_FILE`).
const MAX_HISTORY_ENTRIES_PER_FILE: usize = 10;
/// Lines of context around an edit.
const SNIPPET_LINES: usize = 4;

/// The undo history of one sandbox: per resolved path, earlier contents (`None`: the file
/// was created, so undo deletes it).
#[derive(Debug, Default)]
pub(crate) struct History(Mutex<HashMap<String, Vec<Option<String>>>>);

impl History {
    fn push(&self, path: &str, entry: Option<String>) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let entries = map.entry(path.to_owned()).or_default();
        entries.push(entry);
        if entries.len() > MAX_HISTORY_ENTRIES_PER_FILE {
            let excess = entries.len() - MAX_HISTORY_ENTRIES_PER_FILE;
            entries.drain(..excess);
        }
    }

    fn pop(&self, path: &str) -> Option<Option<String>> {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let entries = map.get_mut(path)?;
        let entry = entries.pop();
        if entries.is_empty() {
            map.remove(path);
        }
        entry
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Missing,
}

pub(crate) struct Editor<'a> {
    pub sandbox: &'a dyn Sandbox,
    pub user: Option<String>,
    pub history: Arc<History>,
}

/// Resolves `$1` (symlinks followed, missing parts allowed) and prints it, the working
/// directory, and what the path is.
const RESOLVE: &str = r#"p=$(realpath -m -- "$1") || exit 1
printf '%s\n' "$p"
realpath -m -- .
if [ -d "$p" ]; then echo dir; elif [ -e "$p" ] || [ -L "$p" ]; then echo file; else echo missing; fi"#;

/// Whether the resolved `path` is `workdir` or under it (every path is under `/`, a
/// container's usual working directory).
fn inside(path: &str, workdir: &str) -> bool {
    workdir == "/" || path == workdir || path.starts_with(&format!("{workdir}/"))
}

impl Editor<'_> {
    fn request<I, S>(&self, argv: I) -> ExecRequest
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ExecRequest::new(argv).user(self.user.clone())
    }

    /// The resolved path and what it is, refusing anything outside the working directory.
    async fn resolve(&self, path_str: &str) -> Result<(String, Kind), ToolError> {
        let out = self
            .sandbox
            .exec(self.request(["bash", "-c", RESOLVE, "resolve", path_str]))
            .await?;
        let mut lines = out.stdout.lines();
        let (Some(path), Some(workdir), Some(kind)) = (lines.next(), lines.next(), lines.next())
        else {
            return Err(ToolError::new(format!(
                "Invalid path {path_str:?}: {}",
                out.stderr.trim()
            )));
        };
        if !inside(path, workdir) {
            return Err(ToolError::permission(
                &format!(
                    "The path {path} is outside the working directory {workdir}; text_editor only works on files inside it"
                ),
                None,
            ));
        }
        let kind = match kind {
            "dir" => Kind::Dir,
            "file" => Kind::File,
            _ => Kind::Missing,
        };
        Ok((path.to_owned(), kind))
    }

    /// The reference's `_validated_path`.
    async fn validated(&self, path_str: &str, command: &str) -> Result<(String, Kind), ToolError> {
        let (path, kind) = self.resolve(path_str).await?;
        if kind == Kind::Missing && command != "create" {
            return Err(ToolError::new(format!(
                "The path {path} does not exist. Please provide a valid path."
            )));
        }
        if kind != Kind::Missing && command == "create" {
            return Err(ToolError::new(format!(
                "File already exists at: {path}. Cannot overwrite files using command `create`."
            )));
        }
        if kind == Kind::Dir && command != "view" {
            return Err(ToolError::new(format!(
                "The path {path} is a directory and only the `view` command can be used on directories"
            )));
        }
        Ok((path, kind))
    }

    async fn read(&self, path: &str) -> Result<String, ToolError> {
        let fail = |e: String| ToolError::new(format!("Ran into {e} while trying to read {path}"));
        let out = self
            .sandbox
            .exec(self.request(["cat", "--", path]))
            .await
            .map_err(|e| fail(e.to_string()))?;
        if !out.success() {
            return Err(fail(out.stderr.trim().to_owned()));
        }
        Ok(out.stdout)
    }

    async fn write(&self, path: &str, text: &str) -> Result<(), ToolError> {
        let fail =
            |e: String| ToolError::new(format!("Ran into {e} while trying to write to {path}"));
        let out = self
            .sandbox
            .exec(
                self.request(["sh", "-c", r#"cat > "$1""#, "sh", path])
                    .stdin(text.as_bytes().to_vec()),
            )
            .await
            .map_err(|e| fail(e.to_string()))?;
        if !out.success() {
            return Err(fail(out.stderr.trim().to_owned()));
        }
        Ok(())
    }

    pub async fn view(
        &self,
        path_str: &str,
        view_range: Option<&[i64]>,
    ) -> Result<String, ToolError> {
        let (path, kind) = self.validated(path_str, "view").await?;
        if kind == Kind::Dir {
            let dir = format!("{}/", path.trim_end_matches('/'));
            let out = self
                .sandbox
                .exec(self.request(["find", &dir, "-maxdepth", "2", "-not", "-path", r"*/\.*"]))
                .await?;
            if !out.stderr.is_empty() {
                return Err(ToolError::new(format!(
                    "Encountered error attempting to view {path}: '{}'",
                    out.stderr
                )));
            }
            let listing: Vec<String> = out.stdout.trim().split('\n').map(normpath).collect();
            return Ok(format!(
                "Here are the files and directories up to 2 levels deep in {path}, excluding hidden items:\n{}\n",
                listing.join("\n")
            ));
        }
        let mut content = self.read(&path).await?;
        let mut init_line = 1;
        if let Some(range) = view_range.filter(|r| !r.is_empty()) {
            let &[start, end] = range else {
                return Err(ToolError::new(
                    "Invalid `view_range`. It should be a list of two integers.",
                ));
            };
            let lines: Vec<&str> = content.split('\n').collect();
            let n = lines.len() as i64;
            if start < 1 || start > n {
                return Err(ToolError::new(format!(
                    "Invalid `view_range`: {}. Its first element `{start}` should be within the range of lines of the file: {}",
                    py_list(range),
                    py_list(&[1, n])
                )));
            }
            let end = if end > n { -1 } else { end };
            if end != -1 && end < start {
                return Err(ToolError::new(format!(
                    "Invalid `view_range`: {}. Its second element `{end}` should be larger or equal than its first `{start}`",
                    py_list(range)
                )));
            }
            let from = (start - 1) as usize;
            let to = if end == -1 {
                lines.len()
            } else {
                (end as usize).min(lines.len())
            };
            content = lines[from..to.max(from)].join("\n");
            init_line = start;
        }
        Ok(make_output(&content, &path, init_line))
    }

    pub async fn create(&self, path_str: &str, file_text: &str) -> Result<String, ToolError> {
        let (path, _) = self.validated(path_str, "create").await?;
        self.write(&path, file_text).await?;
        self.history.push(&path, None);
        Ok(format!("File created successfully at: {path}"))
    }

    pub async fn str_replace(
        &self,
        path_str: &str,
        old_str: &str,
        new_str: Option<&str>,
    ) -> Result<String, ToolError> {
        if old_str.is_empty() {
            return Err(ToolError::new(
                "str_replace: The `old_str` parameter cannot be empty. Consider using the `insert` command instead.",
            ));
        }
        let (path, _) = self.validated(path_str, "str_replace").await?;
        let content = expandtabs(&self.read(&path).await?);
        let old = expandtabs(old_str);
        let new = new_str.map(expandtabs).unwrap_or_default();
        match count(&content, &old) {
            0 => {
                return Err(ToolError::new(format!(
                    "No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
                )));
            }
            1 => {}
            _ => {
                let lines: Vec<i64> = content
                    .split('\n')
                    .enumerate()
                    .filter(|(_, line)| line.contains(old.as_str()))
                    .map(|(i, _)| i as i64 + 1)
                    .collect();
                return Err(ToolError::new(format!(
                    "No replacement was performed. Multiple occurrences of old_str `{old}` in lines {}. Please ensure it is unique",
                    py_list(&lines)
                )));
            }
        }
        let new_content = content.replacen(&old, &new, 1);
        self.write(&path, &new_content).await?;
        self.history.push(&path, Some(content.clone()));
        let replacement_line = content
            .split(old.as_str())
            .next()
            .unwrap_or_default()
            .matches('\n')
            .count();
        let start = replacement_line.saturating_sub(SNIPPET_LINES);
        let end = replacement_line + SNIPPET_LINES + new.matches('\n').count();
        let snippet: Vec<&str> = new_content
            .split('\n')
            .skip(start)
            .take(end + 1 - start)
            .collect();
        Ok(format!(
            "The file {path} has been edited. {}Review the changes and make sure they are as expected. Edit the file again if necessary.",
            make_output(
                &snippet.join("\n"),
                &format!("a snippet of {path}"),
                start as i64 + 1
            )
        ))
    }

    pub async fn insert(
        &self,
        path_str: &str,
        insert_line: i64,
        new_str: &str,
    ) -> Result<String, ToolError> {
        let (path, _) = self.validated(path_str, "insert").await?;
        let text = expandtabs(&self.read(&path).await?);
        let new = expandtabs(new_str);
        let lines: Vec<&str> = text.split('\n').collect();
        let n = lines.len() as i64;
        if insert_line < 0 || insert_line > n {
            return Err(ToolError::new(format!(
                "Invalid `insert_line` parameter: {insert_line}. It should be within the range of lines of the file: {}",
                py_list(&[0, n])
            )));
        }
        let at = insert_line as usize;
        let new_lines: Vec<&str> = new.split('\n').collect();
        let mut all: Vec<&str> = lines[..at].to_vec();
        all.extend(&new_lines);
        all.extend(&lines[at..]);
        let mut snippet: Vec<&str> = lines[at.saturating_sub(SNIPPET_LINES)..at].to_vec();
        snippet.extend(&new_lines);
        snippet.extend(lines[at..].iter().take(SNIPPET_LINES));
        self.write(&path, &all.join("\n")).await?;
        self.history.push(&path, Some(text.clone()));
        Ok(format!(
            "The file {path} has been edited. {}Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
            make_output(
                &snippet.join("\n"),
                "a snippet of the edited file",
                (insert_line - SNIPPET_LINES as i64 + 1).max(1)
            )
        ))
    }

    pub async fn undo_edit(&self, path_str: &str) -> Result<String, ToolError> {
        let (path, _) = self.validated(path_str, "undo_edit").await?;
        match self.history.pop(&path) {
            None => Err(ToolError::new(format!(
                "No edit history found for {path}. The text editor only retains the last {MAX_HISTORY_ENTRIES_PER_FILE} edits per file."
            ))),
            Some(None) => {
                let out = self
                    .sandbox
                    .exec(self.request(["rm", "-f", "--", &path]))
                    .await?;
                if !out.success() {
                    return Err(ToolError::new(out.stderr.trim().to_owned()));
                }
                Ok(format!("File deleted at: {path}"))
            }
            Some(Some(old)) => {
                self.write(&path, &old).await?;
                Ok(format!(
                    "Last edit to {path} undone successfully. {}",
                    make_output(&old, &path, 1)
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::inside;

    #[test]
    fn a_path_is_inside_its_working_directory_and_every_path_inside_root() {
        assert!(inside("/work/a.txt", "/work"));
        assert!(inside("/work", "/work"));
        assert!(!inside("/workshop/a.txt", "/work"));
        assert!(!inside("/etc/passwd", "/work"));
        // A container whose working directory is `/`.
        assert!(inside("/tmp/plan.txt", "/"));
        assert!(inside("/", "/"));
    }
}
