//! What can go wrong on the wire, and whether the connection survives it.

use std::fmt;
use std::io;

/// An error the server sent (an ERR packet): the statement failed, the
/// connection is fine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerError {
    /// The MySQL/MariaDB error number (`1146` for a missing table).
    pub code: u16,
    /// The SQLSTATE, five characters (`"42S02"`), or `"HY000"` when the
    /// server sent none.
    pub state: [u8; 5],
    /// The server's message, as sent (lossily decoded if not UTF-8).
    pub message: String,
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "server error {} ({}): {}",
            self.code,
            String::from_utf8_lossy(&self.state),
            self.message
        )
    }
}

/// An error from this layer.
#[derive(Debug)]
#[non_exhaustive]
pub enum WireError {
    /// The socket failed, timed out, or closed (`UnexpectedEof`). The
    /// connection is lost: part of a packet may have been sent or read.
    Io(io::Error),
    /// The server answered with an error. The connection is usable.
    Server(ServerError),
    /// The server sent bytes that are not the protocol this layer expects
    /// at this point (the text names what). The connection cannot be
    /// trusted any more: the next packet might belong to this answer.
    Protocol(String),
    /// A packet would exceed the limit the caller set
    /// ([`crate::wire::Framer::set_max_packet`]); nothing of it was kept. The
    /// connection is lost (the rest of the packet is still in the socket).
    PacketTooLarge {
        /// The packet's size so far, in bytes.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The server asked for a local file (`LOAD DATA LOCAL INFILE`), which
    /// this layer refuses; it told the server so, and the connection is
    /// usable.
    LocalInfileRefused,
    /// TLS could not be set up: a setting is wrong, the server's
    /// certificate was refused, or the server refused the handshake or our
    /// certificate. The text is a sentence naming the cause and the knob
    /// (`tls_ca`, `tls_fingerprint`, ...; see [`crate::wire::Tls::new`]).
    /// The connection, if there was one, is lost.
    Tls(String),
    /// The login cannot go on the way the server asks: a plugin staunch
    /// does not speak, the password in the clear where that is not
    /// allowed, `caching_sha2_password`'s full exchange over plain TCP
    /// without the server's key. The text names the plugin and the knob
    /// that would change it. Retrying cannot help; the connection is lost.
    AuthRefused(String),
    /// The caller asked for something this layer refused before sending a
    /// byte (a prepared statement executed with the wrong number of
    /// parameters); the text names what. The connection is unchanged.
    Refused(String),
}

impl WireError {
    /// Whether the connection must be closed: true for a socket error, a
    /// protocol violation, a packet over the limit or a TLS failure; false
    /// for an error the server reported, a refused local file and a request
    /// refused before sending, after which the connection is idle and ready
    /// for the next command.
    pub fn is_fatal(&self) -> bool {
        match self {
            WireError::Io(_)
            | WireError::Protocol(_)
            | WireError::PacketTooLarge { .. }
            | WireError::Tls(_)
            | WireError::AuthRefused(_) => true,
            WireError::Server(_) | WireError::LocalInfileRefused | WireError::Refused(_) => false,
        }
    }

    pub(crate) fn protocol(what: impl Into<String>) -> WireError {
        WireError::Protocol(what.into())
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Io(e) => write!(f, "connection failed: {e}"),
            WireError::Server(e) => e.fmt(f),
            WireError::Protocol(what) => write!(f, "protocol error: {what}"),
            WireError::PacketTooLarge { size, max } => {
                write!(f, "packet of at least {size} bytes exceeds the limit of {max} bytes")
            }
            WireError::Tls(what) | WireError::AuthRefused(what) => f.write_str(what),
            WireError::LocalInfileRefused => {
                f.write_str("the server asked for a local file (LOAD DATA LOCAL INFILE), which is not supported")
            }
            WireError::Refused(what) => write!(f, "refused before sending: {what}"),
        }
    }
}

impl std::error::Error for WireError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WireError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for WireError {
    /// A socket error, or, when rustls' error is inside it (the TLS
    /// handshake, or the server's alert on a later read, which is where a
    /// refused client certificate arrives with TLS 1.3), [`WireError::Tls`]
    /// with the sentence for it.
    fn from(e: io::Error) -> WireError {
        match e.get_ref().and_then(|r| r.downcast_ref::<rustls::Error>()) {
            Some(t) => WireError::Tls(crate::wire::tls::failure_text(t)),
            None => WireError::Io(e),
        }
    }
}
