//! The MySQL/MariaDB client/server protocol, the part a statement crosses:
//! packets framed on a stream the caller owns, a text-protocol command sent
//! on its own, and its answer read back as borrowed slices.
//!
//! # Why staunch has its own
//!
//! The `mysql` crate, which opened and ran staunch's connections before
//! version 2.0 (issue 45), writes a command and reads its answer in one
//! call, owns its socket, and parses every column definition into five
//! owned strings and an `Arc` before the first row. That cost two things
//! no change above it could win back:
//!
//! - a statement cannot be *sent* and its answer *awaited* elsewhere (Go's
//!   netpoller, a JVM virtual thread's park) and then read: the calling OS
//!   thread blocks inside the crate for the whole round trip;
//! - about 60 allocations for one row of five columns, most of them the
//!   column definitions, which most callers never look at.
//!
//! This module is the bottom layer of its replacement, built so that each
//! of those becomes possible: [`Framer::send_query`] only writes;
//! [`Framer::read_response`] only reads; a result set keeps its column
//! definitions as the server's bytes, in one buffer, and parses one when
//! asked ([`Columns::get`]); a row is a slice of the read buffer, and its
//! cells are slices of it ([`TextRow::cells`]). Nothing here allocates per
//! statement once the buffers have grown to the answer's size.
//!
//! It knows nothing of pools, sessions, values or time limits. The socket's
//! time limits are the caller's (staunch sets `SO_RCVTIMEO`/`SO_SNDTIMEO`
//! and cuts a stuck socket with `shutdown(2)`); every error here leaves the
//! caller to decide whether the connection is still usable, which
//! [`WireError::is_fatal`] tells.
//!
//! # Where it stands
//!
//! Framing (with packets of 16 MiB and more); a session opened on a
//! connected stream ([`Framer::connect`]) with `mysql_native_password`,
//! `caching_sha2_password`, `client_ed25519` or, when the login allows it
//! over a private connection, `mysql_clear_password` (another plugin is
//! refused by name), over TLS if asked (rustls, with the caller's
//! configuration); commands; text-protocol answers: OK,
//! ERR (with MariaDB's progress reports skipped), result sets with or
//! without `CLIENT_DEPRECATE_EOF`, several results of one command, `LOCAL
//! INFILE` requests refused without losing the connection; the binary
//! protocol of prepared statements (`binary.rs`: prepare, execute with
//! parameters written straight into the send buffer, long data, close,
//! rows walked cell by cell without allocating, a bounded statement
//! cache); the socket staunch connects itself (`socket.rs`). Not yet:
//! compression, and MariaDB's cached result metadata.
//!
//! What staunch uses it for so far: every text statement of the C ABI (and
//! so of every binding) on a plain session whose server reports its
//! variables (`Session::wire`), its answer read whole into the answer model
//! (`client::answer::collect_wire`) or, streamed (`STAUNCH_QUERY_STREAM`),
//! row by row as it arrives (`PooledConn::open_text_wire`), where a row
//! that has arrived can be read without waiting
//! ([`Framer::next_packet_buffered`]). The crate still opens the
//! connection and runs everything else (prepared statements, resets, the
//! Rust API's statements), on the same socket: the two take turns, each
//! reading every answer to its end.
//!
//! TLS policy (`tls.rs`): [`Tls::new`] builds the rustls configuration from
//! the knobs, with a verifier of staunch's own that gives MySQL's
//! `ssl-mode` meanings and pins by certificate or fingerprint.
//!
//! Reference: the MariaDB client/server protocol documentation
//! (<https://mariadb.com/kb/en/clientserver-protocol/>) and MySQL's
//! (`sql-common/client.cc`, `libmysql`), as read, not copied.
//!
//! [`Framer::send_query`]: crate::wire::Framer::send_query
//! [`Tls::new`]: crate::wire::Tls::new
//! [`Framer::read_response`]: crate::wire::Framer::read_response
//! [`Framer::connect`]: crate::wire::Framer::connect
//! [`Framer::next_packet_buffered`]: crate::wire::Framer::next_packet_buffered
//! [`Columns::get`]: crate::wire::Columns::get
//! [`TextRow::cells`]: crate::wire::TextRow::cells
//! [`WireError::is_fatal`]: crate::wire::WireError::is_fatal

#![forbid(unsafe_code)]

mod binary;
mod command;
mod error;
mod handshake;
mod packet;
mod packets;
mod parse;
mod socket;
mod stream;
mod text;
mod tls;

pub use binary::{
    types, BinaryCells, BinaryColumns, BinaryNext, BinaryRow, Cell, Date, DateTime, Param,
    Prepared, StmtCache, Time, COM_STMT_CLOSE, COM_STMT_EXECUTE, COM_STMT_PREPARE, COM_STMT_RESET,
    COM_STMT_SEND_LONG_DATA, ER_UNKNOWN_STMT_HANDLER,
};
pub use error::{ServerError, WireError};
pub use handshake::{AuthPlugin, Greeting, Login, HANDSHAKE_MAX_PACKET};
pub use packet::{Framer, ReadNow, MAX_CHUNK};
pub use parse::{caps, mariadb, status, EofInfo, OkInfo};
pub use socket::{Socket, Target};
pub use stream::{Stream, Tls};
pub use text::{Cells, ColumnDef, Columns, Next, Response, TextRow};
pub use tls::{Pem, TlsSettings, Verify};

/// `COM_QUERY`: run the statement text in the payload.
pub const COM_QUERY: u8 = 0x03;
