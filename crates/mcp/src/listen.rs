//! The listening socket of [`serve_http`](crate::serve_http): bound with an explicit backlog,
//! and an accept loop that outlives transient errors.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket, TcpStream};

/// The listen backlog [`HttpOptions`](crate::HttpOptions) asks for by default.
pub const DEFAULT_BACKLOG: u32 = 1024;

/// The first pause after an accept error that is not about one connection (`EMFILE`,
/// `ENFILE`, `ENOBUFS`, `ENOMEM`); each further error in a row doubles it, up to
/// [`MAX_ACCEPT_BACKOFF`].
const MIN_ACCEPT_BACKOFF: Duration = Duration::from_millis(5);
/// The longest pause between accepts after errors.
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// Binds `addr` and listens with `backlog` (the kernel caps it at `net.core.somaxconn`).
/// `SO_REUSEADDR` is set, as `TcpListener::bind` does on Unix.
pub(crate) fn bind(addr: SocketAddr, backlog: u32) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog)
}

/// A listener for `axum::serve` whose accept loop never ends on an error: an error about one
/// connection (reset or aborted before it was accepted) is skipped; any other (out of file
/// descriptors, of memory) is logged and retried after a pause that grows from 5 ms to 1 s
/// while the errors go on, so a full file table is not spun on.
pub(crate) struct AcceptLoop {
    listener: TcpListener,
    backoff: Duration,
}

impl AcceptLoop {
    pub(crate) fn new(listener: TcpListener) -> Self {
        AcceptLoop {
            listener,
            backoff: MIN_ACCEPT_BACKOFF,
        }
    }
}

impl axum::serve::Listener for AcceptLoop {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.listener.accept().await {
                Ok(accepted) => {
                    self.backoff = MIN_ACCEPT_BACKOFF;
                    return accepted;
                }
                Err(e) if is_connection_error(&e) => {}
                Err(e) => {
                    tracing::warn!(
                        error = %e,
                        retry_in = ?self.backoff,
                        "the MCP HTTP server could not accept a connection"
                    );
                    tokio::time::sleep(self.backoff).await;
                    self.backoff = (self.backoff * 2).min(MAX_ACCEPT_BACKOFF);
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}

/// An error about the one connection being accepted, not the listener.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}
