#![allow(clippy::unwrap_used)]

use super::*;

const MIB: usize = 1 << 20;

/// Feeds `bytes` in chunks of `size`; the events and the parser.
fn parse(bytes: &[u8], size: usize, limit: usize) -> (Result<Vec<SseEvent>, SseError>, SseParser) {
    let mut parser = SseParser::new(limit);
    let mut out = Vec::new();
    for chunk in bytes.chunks(size.max(1)) {
        if let Err(e) = parser.feed(chunk, &mut out) {
            return (Err(e), parser);
        }
    }
    (Ok(out), parser)
}

fn events(bytes: &[u8], size: usize) -> Vec<(String, String)> {
    parse(bytes, size, DEFAULT_MAX_SSE_EVENT_BYTES)
        .0
        .unwrap()
        .into_iter()
        .map(|e| (e.event, e.data))
        .collect()
}

fn pair(event: &str, data: &str) -> (String, String) {
    (event.to_owned(), data.to_owned())
}

#[test]
fn fields_follow_the_eventsource_rules_whatever_the_chunking() {
    let stream = "\u{feff}: a comment\nevent: first\ndata: a\ndata:b\nid: 7\nretry: 10\nunknown: x\nnocolon\n\n\
                  data: {\"x\": 1}\r\n\r\n\
                  event: empty\n\n\
                  data\rdata:  two spaces\r\revent: last\ndata: end\n\ndata: never dispatched";
    let want = vec![
        pair("first", "a\nb"),
        pair("", "{\"x\": 1}"),
        pair("", "\n two spaces"),
        pair("last", "end"),
    ];
    for size in [1, 2, 3, 5, 7, 64, stream.len()] {
        assert_eq!(events(stream.as_bytes(), size), want, "chunks of {size}");
    }
}

#[test]
fn a_character_split_across_chunks_is_read_whole() {
    let stream = "data: héllo → ✓\n\n".as_bytes();
    for size in 1..stream.len() {
        assert_eq!(events(stream, size), vec![pair("", "héllo → ✓")]);
    }
}

#[test]
fn data_that_is_not_utf8_is_an_error() {
    let (result, _) = parse(b"data: \xff\xfe\n\n", 3, 1024);
    assert!(matches!(result, Err(SseError::Utf8(_))), "{result:?}");
}

#[test]
fn a_four_mib_line_parses() {
    let text = "y".repeat(4 * MIB);
    let stream = format!("event: big\ndata: {text}\n\ndata: after\n\n");
    let got = events(stream.as_bytes(), 16 * 1024);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].0, "big");
    assert_eq!(got[0].1.len(), 4 * MIB);
    assert_eq!(got[1], pair("", "after"));
}

#[test]
fn an_event_past_the_limit_is_too_large_however_it_is_split() {
    let limit = 1000;
    // One long line, never ended.
    let line = format!("data: {}", "z".repeat(2000));
    // Many short data lines in one event.
    let lines = "data: 0123456789\n".repeat(100);
    for stream in [line, lines] {
        for size in [1, 10, 4096] {
            let (result, parser) = parse(stream.as_bytes(), size, limit);
            assert_eq!(
                result,
                Err(SseError::TooLarge { limit }),
                "chunks of {size}"
            );
            // It stopped near the limit (the `data: ` of each line is not counted), not at
            // the end of the stream.
            assert!(
                parser.scanned() <= (2 * limit + size) as u64,
                "{}",
                parser.scanned()
            );
        }
    }
    // Just under the limit: fine, and the next event starts from nothing.
    let under = format!("data: {}\n\n", "z".repeat(limit - 10));
    let stream = format!("{under}{under}");
    let (result, _) = parse(stream.as_bytes(), 7, limit);
    assert_eq!(result.unwrap().len(), 2);
}

#[test]
fn each_byte_is_scanned_once_so_work_grows_linearly() {
    // The work counter for 1 MiB and 4 MiB in 8 KiB chunks: exactly the stream's length, so
    // four times the size is four times the work (the old parser re-scanned its buffer for
    // every chunk: about size² / (2 · chunk) bytes, 64 MiB for 1 MiB and 1 GiB for 4 MiB).
    let mut work = Vec::new();
    for mib in [1, 4] {
        let stream = format!("data: {}\n\n", "w".repeat(mib * MIB));
        let (result, parser) = parse(stream.as_bytes(), 8 * 1024, DEFAULT_MAX_SSE_EVENT_BYTES);
        assert_eq!(result.unwrap()[0].data.len(), mib * MIB);
        assert_eq!(parser.scanned(), stream.len() as u64);
        work.push(parser.scanned());
    }
    let ratio = work[1] as f64 / work[0] as f64;
    assert!((3.99..4.01).contains(&ratio), "{ratio}");
}
