//! The few operating-system calls the pool needs that std does not offer.
//!
//! This is the one place outside `ffi` where `unsafe` is allowed: each function
//! is a thin wrapper over one libc call with its arguments checked here.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

/// Nanoseconds on a coarse monotonic clock (CLOCK_MONOTONIC_COARSE: a vDSO read
/// with no syscall, a few ns, resolution of a scheduler tick, 1 to 4 ms). The
/// pool's hot path reads it at most once per checkout and once per return; every
/// window it compares against (bypass, idle, lifetime) is far longer than a tick.
#[inline]
pub fn coarse_now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec; the clock id is a constant the
    // kernel supports since 2.6.32.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    if rc != 0 {
        return precise_now_ns();
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The calling thread's name as the kernel knows it (`comm`, at most 15
/// bytes: the JVM sets it to the Java thread's name), for a thread the
/// Rust runtime did not name (a host language's); None when it has none.
pub fn os_thread_name() -> Option<String> {
    let mut buf = [0u8; 16];
    // SAFETY: PR_GET_NAME writes at most 16 bytes, NUL-terminated, into buf.
    let rc = unsafe {
        libc::prctl(
            libc::PR_GET_NAME,
            buf.as_mut_ptr() as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).into_owned();
    (!name.is_empty()).then_some(name)
}

/// Nanoseconds on CLOCK_MONOTONIC, for deadlines that need precision.
pub fn precise_now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn timeval(d: Option<Duration>) -> libc::timeval {
    match d {
        // A zero timeval means "no timeout" to the kernel, so round up.
        Some(d) => libc::timeval {
            tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
            tv_usec: (d.subsec_micros().max(if d.as_secs() == 0 { 1 } else { 0 }))
                as libc::suseconds_t,
        },
        None => libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
    }
}

fn set_timeout(fd: RawFd, opt: libc::c_int, d: Option<Duration>) -> io::Result<()> {
    let tv = timeval(d);
    // SAFETY: tv is a valid timeval and its size is passed; a bad fd gives EBADF.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            &tv as *const libc::timeval as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sets SO_RCVTIMEO and SO_SNDTIMEO on a socket (`None`: block without bound).
pub fn set_socket_timeouts(fd: RawFd, d: Option<Duration>) -> io::Result<()> {
    set_timeout(fd, libc::SO_RCVTIMEO, d)?;
    set_timeout(fd, libc::SO_SNDTIMEO, d)
}

fn set_int(fd: RawFd, level: libc::c_int, opt: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: v is a valid c_int and its size is passed; a bad fd gives EBADF.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// TCP keepalive (first probe after `idle`, then every `interval`, `count`
/// probes) and, on Linux, `TCP_USER_TIMEOUT` (`user_timeout`: data sent and
/// not acknowledged for that long, keepalive probes included, ends the
/// connection with ETIMEDOUT): the kernel's own watch for a dead peer.
pub fn set_tcp_keepalive(
    fd: RawFd,
    idle: Duration,
    interval: Duration,
    count: u32,
    user_timeout: Duration,
) -> io::Result<()> {
    let secs = |d: Duration| d.as_secs().clamp(1, i32::MAX as u64) as libc::c_int;
    set_int(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1)?;
    set_int(fd, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, secs(idle))?;
    set_int(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, secs(interval))?;
    set_int(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_KEEPCNT,
        count.clamp(1, 127) as libc::c_int,
    )?;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    set_int(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_USER_TIMEOUT,
        user_timeout.as_millis().min(i32::MAX as u128) as libc::c_int,
    )?;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = user_timeout;
    Ok(())
}

/// Shuts a socket down in both directions, so that every thread blocked on it
/// returns at once. Errors (already closed, not connected) are ignored: the
/// goal is only that nobody stays blocked.
pub fn shutdown(fd: RawFd) {
    // SAFETY: shutdown on any fd is memory-safe; a wrong fd gives an error.
    unsafe {
        libc::shutdown(fd, libc::SHUT_RDWR);
    }
}

/// Reads what has arrived on socket `fd` into `buf` without waiting
/// (`recv` with `MSG_DONTWAIT`): the count (0: the peer closed), or a
/// `WouldBlock` error at once when nothing has arrived.
pub fn recv_now(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: buf is writable for its length; MSG_DONTWAIT makes the call
    // return at once whatever the socket holds.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// What a non-blocking peek finds on a connection that should be quiet (no
/// command in flight, so the server has nothing to send): None when nothing
/// is waiting, else why the connection is out of step with the server.
pub fn unexpected_input(fd: RawFd) -> Option<&'static str> {
    let mut b = [0u8; 1];
    // SAFETY: b is writable for the one byte asked; MSG_PEEK leaves it
    // queued and MSG_DONTWAIT makes the call return at once.
    let n = unsafe {
        libc::recv(
            fd,
            b.as_mut_ptr().cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    match n {
        1.. => Some("unread data is waiting (the rest of an answer the client did not take)"),
        0 => Some("the server closed the connection"),
        _ => match io::Error::last_os_error().kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => None,
            _ => Some("the socket is in error"),
        },
    }
}

/// The syscall numbers of a blocking read of a socket (read, readv,
/// recvfrom, recvmsg) on this architecture; empty where not known here.
#[cfg(target_arch = "x86_64")]
const READ_SYSCALLS: &[u64] = &[0, 19, 45, 47];
#[cfg(target_arch = "aarch64")]
const READ_SYSCALLS: &[u64] = &[63, 65, 207, 212];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const READ_SYSCALLS: &[u64] = &[];

/// Whether a thread of this process is blocked right now in a read of
/// `fd`: the first two fields of `/proc/self/task/<tid>/syscall` are the
/// number of the system call a thread is in and its first argument (the fd
/// for a read). False when that cannot be read (no /proc, an unknown
/// architecture). Costs a file read per thread: for rare checks only.
pub fn thread_reading(fd: RawFd) -> bool {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return false;
    };
    tasks.flatten().any(|t| {
        let Ok(text) = std::fs::read_to_string(t.path().join("syscall")) else {
            return false;
        };
        let mut f = text.split_whitespace();
        let nr = f.next().and_then(|v| v.parse::<u64>().ok());
        let arg0 = f
            .next()
            .and_then(|v| u64::from_str_radix(v.trim_start_matches("0x"), 16).ok());
        matches!((nr, arg0), (Some(nr), Some(a)) if READ_SYSCALLS.contains(&nr) && a == fd as u64)
    })
}

/// A duplicate of `fd` that is closed on drop: holding it keeps the socket
/// alive, so the fd number cannot be reused for something else meanwhile.
pub struct DupFd(RawFd);

impl DupFd {
    pub fn new(fd: RawFd) -> Option<DupFd> {
        // SAFETY: dup on any fd is memory-safe.
        let d = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        (d >= 0).then_some(DupFd(d))
    }
    pub fn fd(&self) -> RawFd {
        self.0
    }
    /// The inode of the file behind the fd (for a socket, the number in
    /// `/proc/net/tcp`).
    pub fn inode(&self) -> Option<u64> {
        // SAFETY: st is a valid out-pointer for fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::fstat(self.0, &mut st) };
        (rc == 0).then_some(st.st_ino)
    }
    /// How long ago data was last sent and last received on this TCP socket
    /// (TCP_INFO tcpi_last_data_sent / tcpi_last_data_recv, in ms, at offsets
    /// 44 and 52 since the first Linux with TCP_INFO), or None if unknown.
    pub fn tcp_quiet_ms(&self) -> Option<TcpQuiet> {
        let (buf, len) = tcp_info(self.0)?;
        let at = |o: usize| u32::from_ne_bytes(buf[o..o + 4].try_into().expect("4 bytes"));
        (len >= 56).then(|| TcpQuiet {
            since_sent_ms: at(44),
            since_recv_ms: at(52),
        })
    }
}

/// The kernel's `struct tcp_info` for the socket `fd` (as many bytes as the
/// kernel wrote), or None if it is not a TCP socket.
fn tcp_info(fd: RawFd) -> Option<([u8; 256], usize)> {
    let mut buf = [0u8; 256];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf is writable for len bytes; the kernel writes at most len.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            buf.as_mut_ptr() as *mut libc::c_void,
            &mut len,
        )
    };
    (rc == 0).then_some((buf, len as usize))
}

/// Bytes the kernel has received on the TCP socket `fd` (TCP_INFO
/// tcpi_bytes_received, Linux 4.1+), or None if unknown (not TCP: a unix
/// socket).
pub fn tcp_bytes_received(fd: RawFd) -> Option<u64> {
    // The kernel's struct tcp_info only grows; tcpi_bytes_received sits at
    // offset 128 (after 8 one-byte fields, 24 u32 and 3 u64).
    let (buf, len) = tcp_info(fd)?;
    (len >= 136).then(|| u64::from_ne_bytes(buf[128..136].try_into().expect("8 bytes")))
}

/// See [`DupFd::tcp_quiet_ms`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpQuiet {
    pub since_sent_ms: u32,
    pub since_recv_ms: u32,
}

impl Drop for DupFd {
    fn drop(&mut self) {
        // SAFETY: we own this fd (it came from our own dup).
        unsafe {
            libc::close(self.0);
        }
    }
}

/// A Linux eventfd: a descriptor that turns readable once [`signal`]led and
/// stays so until [`clear`]ed. What a host's event loop (Go's netpoller,
/// asyncio's `add_reader`, a JVM poller thread) waits on for a borrow that
/// waits in the pool's queue without a thread of its own.
///
/// [`signal`]: EventFd::signal
/// [`clear`]: EventFd::clear
#[derive(Debug)]
pub struct EventFd {
    fd: RawFd,
    /// Closed on drop (made here), or a host's own, which it closes.
    owned: bool,
}

impl Drop for EventFd {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(self.fd) };
        }
    }
}

impl EventFd {
    /// A new, unsignalled eventfd (non-blocking, close-on-exec).
    pub fn new() -> crate::error::Result<EventFd> {
        // SAFETY: eventfd takes no pointers; a descriptor >= 0 is ours.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(crate::error::Error::new(
                crate::error::ErrorKind::Io,
                format!(
                    "cannot make the eventfd a waiting borrow signals: {}",
                    io::Error::last_os_error()
                ),
            ));
        }
        Ok(EventFd { fd, owned: true })
    }

    /// A host's own eventfd (which it keeps open while this lives, and
    /// closes): signalled and cleared, never closed, here.
    pub fn borrowed(fd: RawFd) -> EventFd {
        EventFd { fd, owned: false }
    }

    /// The descriptor (valid while `self` lives).
    pub fn raw(&self) -> RawFd {
        self.fd
    }

    /// Makes the descriptor readable. Never blocks: the counter saturating
    /// (2^64 - 2 signals unread) leaves it readable, which is all a signal
    /// means.
    pub fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64.
        unsafe { libc::write(self.raw(), (&one as *const u64).cast(), 8) };
    }

    /// Makes the descriptor unreadable again (until the next signal).
    pub fn clear(&self) {
        let mut n: u64 = 0;
        // SAFETY: reads at most 8 bytes into a live u64; EAGAIN (nothing
        // signalled) leaves it as it was.
        unsafe { libc::read(self.raw(), (&mut n as *mut u64).cast(), 8) };
    }
}
