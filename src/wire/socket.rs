//! The socket a session runs on, connected by staunch itself: TCP or a unix
//! socket, under one time limit, with its descriptor in the caller's hands
//! before the first byte is read, so that a watchdog on another thread can
//! cut a connect that stalls anywhere (the greeting that never comes of
//! incident A, a TLS handshake, an authentication exchange) by shutting
//! that very socket down. With the `mysql` crate the socket was created
//! inside the crate, and the watchdog had to find it from outside
//! (`/proc/net/tcp`).

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use crate::sys;

/// Where to connect.
#[derive(Clone, Copy, Debug)]
pub enum Target<'a> {
    /// A TCP address (already resolved: resolution is the caller's, with
    /// its own bound).
    Tcp(SocketAddr),
    /// A unix socket's path.
    Unix(&'a Path),
}

/// A connected socket: TCP or unix.
#[derive(Debug)]
pub enum Socket {
    /// TCP, with `TCP_NODELAY` (a command is one write; Nagle would hold
    /// the next one back for the previous one's acknowledgement).
    Tcp(TcpStream),
    /// A unix socket: a private transport (the password may cross it, as
    /// over TLS).
    Unix(UnixStream),
}

impl Socket {
    /// Connects to `target` within `within`, then bounds every read and
    /// write by `within` too (the caller narrows it later). A TCP connect
    /// that gets no answer fails with `TimedOut` at the limit; a zero limit
    /// is refused (`InvalidInput`), not taken as "none".
    pub fn connect(target: Target<'_>, within: Duration) -> io::Result<Socket> {
        if within.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no time left to connect",
            ));
        }
        let s = match target {
            Target::Tcp(addr) => {
                let s = TcpStream::connect_timeout(&addr, within)?;
                s.set_nodelay(true)?;
                Socket::Tcp(s)
            }
            Target::Unix(path) => Socket::Unix(UnixStream::connect(path)?),
        };
        s.set_timeouts(Some(within))?;
        Ok(s)
    }

    /// Whether it is a unix socket (what [`Login::unix_socket`] says).
    ///
    /// [`Login::unix_socket`]: crate::wire::Login::unix_socket
    pub fn is_unix(&self) -> bool {
        matches!(self, Socket::Unix(_))
    }

    /// A second handle on the same socket (a `dup`): for the watchdog,
    /// which [`shutdown`](Socket::shutdown)s it to cut whatever the owner
    /// is blocked in. Holding the duplicate keeps the descriptor's number
    /// from being reused by another socket under the watchdog.
    pub fn try_clone(&self) -> io::Result<Socket> {
        Ok(match self {
            Socket::Tcp(s) => Socket::Tcp(s.try_clone()?),
            Socket::Unix(s) => Socket::Unix(s.try_clone()?),
        })
    }

    /// Shuts the socket down both ways: a read or write blocked on it, on
    /// any handle, returns at once. Errors are ignored (the socket may
    /// already be closed by the peer).
    pub fn shutdown(&self) {
        let _ = match self {
            Socket::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Socket::Unix(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }

    /// Bounds each read and each write (`SO_RCVTIMEO`/`SO_SNDTIMEO`);
    /// `None`: unbounded.
    pub fn set_timeouts(&self, d: Option<Duration>) -> io::Result<()> {
        sys::set_socket_timeouts(self.as_raw_fd(), d)
    }
}

impl AsRawFd for Socket {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Socket::Tcp(s) => s.as_raw_fd(),
            Socket::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            Socket::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.flush(),
            Socket::Unix(s) => s.flush(),
        }
    }
}

/// A read of what has arrived, without waiting (`MSG_DONTWAIT`).
impl crate::wire::ReadNow for Socket {
    fn read_now(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        sys::recv_now(self.as_raw_fd(), buf)
    }
}
