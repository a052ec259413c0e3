//! What a command prints for the person who ran it.

#[allow(clippy::print_stdout)] // what the command was asked to print
pub(super) fn print(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
