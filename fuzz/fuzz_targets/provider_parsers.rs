//! Fuzzes the parsers the providers apply to bytes from the network: Chat Completions and
//! Messages response bodies, error bodies, and both providers' server-sent event streams
//! (aggregated into an output). A panic or a broken invariant is a finding; see
//! docs/fuzzing.md.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    actuator_providers::__fuzz::parse_everything(data);
});
