//! Server-sent events read in time linear in the stream's size, one event at most a given
//! number of bytes.
//!
//! `eventsource-stream` re-parsed its whole buffer for every chunk that arrived, so one long
//! `data:` line cost time quadratic in its length (1 MiB took seconds, 4 MiB did not finish).
//! `sse-stream` (rmcp's) is linear but has no size limit and rejects lines the specification
//! says to ignore (unknown fields, a field without a colon). This parser scans each byte once
//! for line ends, keeps the unfinished line to append to, and stops an event that grows past
//! its limit with [`SseError::TooLarge`].
//!
//! Field handling follows the WHATWG `EventSource` rules: `\n`, `\r\n` and `\r` end lines, a
//! leading byte-order mark is dropped, a line starting with `:` is a comment, `data` lines
//! are joined with `\n`, `event` names the event, other fields (`id`, `retry`, unknown ones)
//! are ignored, and a blank line dispatches the event when it has data.

/// The default limit on one event's size (16 MiB).
pub const DEFAULT_MAX_SSE_EVENT_BYTES: usize = 16 << 20;

/// One event: its name (empty when the stream gave none) and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: String,
    pub data: String,
}

/// Why a stream cannot be read as events.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SseError {
    /// One event passed the limit.
    #[error("one server-sent event is larger than the limit of {limit} bytes")]
    TooLarge { limit: usize },
    /// An event's data or name is not UTF-8.
    #[error("a server-sent event is not UTF-8")]
    Utf8(#[from] std::str::Utf8Error),
}

/// The incremental parser: [`feed`](Self::feed) it chunks as they arrive.
#[derive(Debug)]
pub(crate) struct SseParser {
    limit: usize,
    /// The current line so far (its end not seen yet).
    line: Vec<u8>,
    /// The current event's name and data (each data line followed by `\n`).
    event: Vec<u8>,
    data: Vec<u8>,
    /// A `\r` ended the last chunk: a `\n` starting the next one belongs to it.
    after_cr: bool,
    /// Nothing read yet (a byte-order mark may start the stream).
    at_start: bool,
    /// Bytes examined for line ends, for the linearity test.
    scanned: u64,
}

impl SseParser {
    /// A parser whose events may be at most `limit` bytes: name and data, with the line being
    /// read (field names of finished lines are not counted).
    pub(crate) fn new(limit: usize) -> Self {
        SseParser {
            limit,
            line: Vec::new(),
            event: Vec::new(),
            data: Vec::new(),
            after_cr: false,
            at_start: true,
            scanned: 0,
        }
    }

    /// How many bytes have been examined for line ends: each byte fed, once.
    #[cfg(test)]
    pub(crate) fn scanned(&self) -> u64 {
        self.scanned
    }

    /// Reads `chunk`, pushing each event it completes onto `out`.
    pub(crate) fn feed(
        &mut self,
        mut chunk: &[u8],
        out: &mut Vec<SseEvent>,
    ) -> Result<(), SseError> {
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
        }
        while !chunk.is_empty() {
            let end = chunk.iter().position(|&b| b == b'\n' || b == b'\r');
            self.scanned += end.map_or(chunk.len(), |e| e + 1) as u64;
            let Some(end) = end else {
                self.grow(chunk.len())?;
                self.line.extend_from_slice(chunk);
                return Ok(());
            };
            self.grow(end)?;
            if self.line.is_empty() {
                self.line_done(&chunk[..end], out)?;
            } else {
                self.line.extend_from_slice(&chunk[..end]);
                let line = std::mem::take(&mut self.line);
                let result = self.line_done(&line, out);
                self.line = line;
                self.line.clear();
                result?;
            }
            let cr = chunk[end] == b'\r';
            chunk = &chunk[end + 1..];
            if cr {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        Ok(())
    }

    /// Fails when `more` bytes would take the current event past the limit.
    fn grow(&self, more: usize) -> Result<(), SseError> {
        let size = self.event.len() + self.data.len() + self.line.len() + more;
        if size > self.limit {
            return Err(SseError::TooLarge { limit: self.limit });
        }
        Ok(())
    }

    fn line_done(&mut self, mut line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if self.at_start {
            self.at_start = false;
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            return self.dispatch(out);
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return Ok(()),
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                self.grow(1)?;
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let name = std::mem::take(&mut self.event);
        if self.data.is_empty() {
            return Ok(());
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        let data = String::from_utf8(data).map_err(|e| e.utf8_error())?;
        let event = String::from_utf8(name).map_err(|e| e.utf8_error())?;
        out.push(SseEvent { event, data });
        Ok(())
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
