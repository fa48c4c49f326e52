//! The stream a session runs on: the connected socket as it is, or TLS over
//! it (rustls), which [`Framer::connect`](crate::wire::Framer::connect) sets up
//! when asked to, after the server's greeting, as the protocol wants.

use std::io::{self, Read, Write};
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};

use crate::wire::packet::ReadNow;

/// TLS for a session: the rustls configuration (trust store, client
/// certificate, verification) and the name the server's certificate must
/// carry. [`Tls::new`] makes one with staunch's verifier and MySQL's
/// `ssl-mode` meanings; a caller may also bring its own configuration.
#[derive(Clone, Debug)]
pub struct Tls {
    /// The client configuration.
    pub config: Arc<ClientConfig>,
    /// The server's name (a DNS name or an IP address).
    pub server_name: ServerName<'static>,
}

/// A socket, or TLS over it.
#[derive(Debug)]
pub enum Stream<S: Read + Write> {
    /// Plain bytes.
    Plain(S),
    /// TLS (boxed: rustls' state is large).
    Tls(Box<StreamOwned<ClientConnection, S>>),
}

impl<S: Read + Write> Stream<S> {
    /// The socket under it, for its options (time limits) and its fd.
    pub fn socket(&self) -> &S {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => t.get_ref(),
        }
    }

    /// Whether the session is encrypted.
    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }
}

impl<S: Read + Write> Stream<S> {
    /// TLS over this plain socket, its handshake completed (bounded by the
    /// socket's time limits). A certificate that does not verify is an
    /// `InvalidData` error holding rustls' error, which becomes
    /// [`WireError::Tls`](crate::wire::WireError::Tls) with its sentence.
    pub(crate) fn start_tls(self, tls: &Tls) -> io::Result<Stream<S>> {
        let Stream::Plain(mut sock) = self else {
            return Err(io::Error::other("TLS was already started"));
        };
        let mut conn = ClientConnection::new(tls.config.clone(), tls.server_name.clone())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        while conn.is_handshaking() {
            conn.complete_io(&mut sock)?;
        }
        Ok(Stream::Tls(Box::new(StreamOwned::new(conn, sock))))
    }
}

impl<S: Read + Write> Read for Stream<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl<S: Read + Write> Write for Stream<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(t) => t.flush(),
        }
    }
}

/// What has arrived, without waiting: on a plain socket, the socket's own
/// non-blocking read; over TLS, plaintext rustls already holds, else the
/// TLS records that have arrived, decrypted (`WouldBlock` while a record
/// is still incomplete).
impl<S: Read + Write + ReadNow> ReadNow for Stream<S> {
    fn read_now(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let t = match self {
            Stream::Plain(s) => return s.read_now(buf),
            Stream::Tls(t) => t,
        };
        loop {
            match t.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            struct Now<'a, S>(&'a mut S);
            impl<S: ReadNow> Read for Now<'_, S> {
                fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                    self.0.read_now(buf)
                }
            }
            if t.conn.read_tls(&mut Now(&mut t.sock))? == 0 {
                return Ok(0);
            }
            t.conn
                .process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
    }
}

impl<S: Read + Write> Stream<S> {
    /// Whether decrypted bytes wait inside TLS, which no wait on the
    /// socket would announce: read them before waiting. Always false on a
    /// plain socket.
    pub fn holds_plaintext(&mut self) -> bool {
        match self {
            Stream::Plain(_) => false,
            Stream::Tls(t) => t
                .conn
                .process_new_packets()
                .is_ok_and(|s| s.plaintext_bytes_to_read() > 0),
        }
    }
}
