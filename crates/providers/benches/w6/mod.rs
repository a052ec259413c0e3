//! W6's pieces, shared by the bench `provider` and the test `w6_bench`: the canned completion,
//! the server that returns it, and the conversation.
#![allow(dead_code)]

pub mod breakdown;
pub mod canned;
pub mod conversation;
pub mod server;
