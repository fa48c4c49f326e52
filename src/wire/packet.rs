//! Packets on a stream: the 4-byte header (3 bytes of length, little-endian,
//! and a sequence id), payloads of 16 MiB - 1 and more split into chunks,
//! sequence ids checked on the way in.
//!
//! One read buffer and one write buffer per connection. The read buffer
//! starts at [`FIRST_READ`] bytes and doubles, up to [`MAX_READ`], while
//! reads fill it (a long answer arriving), or to the largest packet seen;
//! [`Framer::give_back`] takes it back to its first size between commands,
//! and gives back the write and join buffers past [`RETAIN`] bytes, so an
//! idle connection holds a few KiB whatever it carried (issue 50). A packet that fits in one chunk is handed
//! out as a slice of the read buffer: no copy, no allocation. A packet of
//! several chunks is joined in a second buffer.

use std::io::{self, ErrorKind, Read, Write};

use crate::wire::error::WireError;

/// The largest payload of one chunk: a payload of this length is followed
/// by another chunk of the same packet (possibly empty).
pub const MAX_CHUNK: usize = 0xFF_FFFF;

/// What each read asks the socket for at least at first, and the read
/// buffer's first size: a short answer (an OK, one row) fits in one read.
const FIRST_READ: usize = 4 * 1024;

/// The most a read asks for once reads keep filling the buffer (a long
/// answer): fewer system calls per row, and still one buffer a connection
/// can afford while it is borrowed.
const MAX_READ: usize = 64 * 1024;

/// Join and write buffers larger than this are given back between commands.
const RETAIN: usize = 16 * 1024;

/// The server's own ceiling for `max_allowed_packet` (1 GiB).
pub(crate) const DEFAULT_MAX_PACKET: usize = 1 << 30;

#[derive(Clone, Copy, Debug)]
enum Last {
    Buf(usize, usize),
    Joined,
}

/// A connection's packet layer over a stream the caller opened and
/// configured (time limits included).
#[derive(Debug)]
pub struct Framer<S> {
    stream: S,
    /// The read buffer; `buf[start..end]` has been read and not consumed.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// A packet of several chunks, joined.
    joined: Vec<u8>,
    /// The bytes of the command being sent.
    out: Vec<u8>,
    /// Where the last packet read is: in `joined`, or at `buf[from..to]`.
    last: Last,
    /// The sequence id the next packet, either way, must carry.
    seq: u8,
    /// The open result set's column count, while its rows are being read.
    pub(crate) open_cells: Option<usize>,
    max_packet: usize,
    pub(crate) caps: u32,
    /// MariaDB's extended capability flags the connection agreed on
    /// ([`crate::wire::parse::mariadb`]).
    pub(crate) mariadb_caps: u32,
    /// The server status flags of the last OK or EOF packet read (0 before
    /// the first): see [`Framer::status`].
    pub(crate) status: u16,
    /// Bytes read from the stream so far.
    received: u64,
    /// What the next read asks for at least: [`FIRST_READ`], doubled up to
    /// [`MAX_READ`] each time a read fills the room it had.
    read_size: usize,
}

impl<S: Read + Write> Framer<S> {
    /// A packet layer over `stream`, on a connection whose handshake agreed
    /// on the capability flags `caps` ([`crate::wire::caps`]); the stream must be
    /// between commands.
    pub fn new(stream: S, caps: u32) -> Framer<S> {
        Framer {
            stream,
            buf: Vec::new(),
            start: 0,
            end: 0,
            joined: Vec::new(),
            out: Vec::new(),
            last: Last::Buf(0, 0),
            seq: 0,
            open_cells: None,
            max_packet: DEFAULT_MAX_PACKET,
            caps,
            mariadb_caps: 0,
            status: 0,
            received: 0,
            read_size: FIRST_READ,
        }
    }

    /// Bytes this layer has read from its stream (for a session to tell
    /// its own reads from another reader's on the same socket).
    pub fn received(&self) -> u64 {
        self.received
    }

    /// The server status flags ([`crate::wire::status`]) of the last OK or
    /// EOF packet this layer read: after a command's answer is read to its
    /// end, the session's state as the server left it, without asking it.
    /// `IN_TRANS` is how a return knows whether a transaction is open (the
    /// server sets it from a transaction's first statement that touches a
    /// transactional table, under autocommit=0 too, and clears it at its
    /// end); `AUTOCOMMIT` is the session's autocommit.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Whether the server said a transaction is open ([`Framer::status`]'s
    /// `IN_TRANS`).
    pub fn in_transaction(&self) -> bool {
        self.status & crate::wire::status::IN_TRANS != 0
    }

    /// The capability flags the connection agreed on.
    pub fn caps(&self) -> u32 {
        self.caps
    }

    /// MariaDB's extended capability flags the connection agreed on (0 with
    /// MySQL): [`crate::wire::parse::mariadb`].
    pub fn mariadb_caps(&self) -> u32 {
        self.mariadb_caps
    }

    /// The largest packet this side accepts, in bytes; a larger one is
    /// [`WireError::PacketTooLarge`]. Defaults to 1 GiB (the server's own
    /// ceiling for `max_allowed_packet`).
    pub fn set_max_packet(&mut self, max: usize) {
        self.max_packet = max;
    }

    /// The stream, for setting its options.
    pub fn stream(&self) -> &S {
        &self.stream
    }

    /// The stream, for what only it can tell (TLS plaintext held,
    /// `Stream::holds_plaintext`) and for the tests to see what was
    /// written.
    pub fn stream_mut(&mut self) -> &mut S {
        &mut self.stream
    }

    /// The same packet layer over the stream `m` makes of this one (TLS
    /// over the socket), the sequence and buffers carried over.
    pub(crate) fn map_stream<T>(
        self,
        m: impl FnOnce(S) -> io::Result<T>,
    ) -> Result<Framer<T>, WireError> {
        Ok(Framer {
            stream: m(self.stream)?,
            buf: self.buf,
            start: self.start,
            end: self.end,
            joined: self.joined,
            out: self.out,
            last: self.last,
            seq: self.seq,
            open_cells: self.open_cells,
            max_packet: self.max_packet,
            caps: self.caps,
            mariadb_caps: self.mariadb_caps,
            status: self.status,
            received: self.received,
            read_size: self.read_size,
        })
    }

    /// Whether bytes have arrived that no read has consumed. Between
    /// commands that is input the server should not have sent.
    pub fn has_buffered_input(&self) -> bool {
        self.start != self.end
    }

    /// Whether the next packet has arrived whole (a packet of one chunk,
    /// every byte of it read): reading it then waits for nothing.
    pub fn next_packet_buffered(&self) -> bool {
        self.missing() == 0 && self.next_len() < MAX_CHUNK
    }

    /// Whether the next packet's first chunk lacks bytes that have not
    /// arrived in the buffer: a socket to wait on for them is then worth
    /// waiting on (a packet of several chunks whose first chunk is whole
    /// is not: reading it may wait, but not for this chunk).
    pub fn needs_input(&self) -> bool {
        self.missing() > 0
    }

    /// The bytes the buffer lacks of the next packet's first chunk (its
    /// header, then its payload).
    fn missing(&self) -> usize {
        let have = self.end - self.start;
        if have < 4 {
            return 4 - have;
        }
        (4 + self.next_len()).saturating_sub(have)
    }

    /// The next chunk's payload length (its header is in the buffer).
    fn next_len(&self) -> usize {
        let h = &self.buf[self.start..self.end];
        if h.len() < 4 {
            return 0;
        }
        h[0] as usize | (h[1] as usize) << 8 | (h[2] as usize) << 16
    }

    /// Sends one command: `cmd` and its payload, as the first packet of a
    /// new sequence, in one write. Returns once the bytes are written; the
    /// answer is read by the caller ([`Framer::read_packet`],
    /// [`Framer::read_response`]).
    pub fn send_command(&mut self, cmd: u8, payload: &[u8]) -> Result<(), WireError> {
        self.give_back();
        self.seq = 0;
        self.open_cells = None;
        self.out.clear();
        let total = 1 + payload.len();
        self.out.reserve(total + 4 * (total / MAX_CHUNK + 1));
        let mut done = 0;
        loop {
            let n = (total - done).min(MAX_CHUNK);
            self.push_header(n);
            if done == 0 {
                self.out.push(cmd);
                self.out.extend_from_slice(&payload[..n - 1]);
            } else {
                self.out.extend_from_slice(&payload[done - 1..done - 1 + n]);
            }
            done += n;
            if n < MAX_CHUNK {
                break;
            }
        }
        self.flush_out()
    }

    /// Sends one command whose payload `write` puts straight into the
    /// write buffer after `cmd` (a prepared statement's parameters: no
    /// buffer of their own). A payload that does not fit in one chunk is
    /// split as [`Framer::send_command`] splits one, at the cost of a copy.
    pub(crate) fn send_command_with(
        &mut self,
        cmd: u8,
        write: impl FnOnce(&mut Vec<u8>),
    ) -> Result<(), WireError> {
        self.give_back();
        self.seq = 0;
        self.open_cells = None;
        self.out.clear();
        self.out.extend_from_slice(&[0, 0, 0, 0, cmd]);
        write(&mut self.out);
        let n = self.out.len() - 4;
        if n >= MAX_CHUNK {
            let payload = std::mem::take(&mut self.out);
            return self.send_command(cmd, &payload[5..]);
        }
        self.out[..4].copy_from_slice(&[n as u8, (n >> 8) as u8, (n >> 16) as u8, 0]);
        self.seq = 1;
        self.flush_out()
    }

    /// Sends `payload` as the next packet of the current sequence (the
    /// answer to a server's request within a command).
    pub fn send_packet(&mut self, payload: &[u8]) -> Result<(), WireError> {
        self.out.clear();
        let mut rest = payload;
        loop {
            let n = rest.len().min(MAX_CHUNK);
            self.push_header(n);
            self.out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            if n < MAX_CHUNK {
                break;
            }
        }
        self.flush_out()
    }

    /// Overwrites the bytes last sent (a password, or what is made from
    /// it), so that they do not stay in the buffer until the next command.
    pub(crate) fn wipe_sent(&mut self) {
        self.out.fill(0);
        self.out.clear();
    }

    fn push_header(&mut self, n: usize) {
        self.out
            .extend_from_slice(&[n as u8, (n >> 8) as u8, (n >> 16) as u8, self.seq]);
        self.seq = self.seq.wrapping_add(1);
    }

    fn flush_out(&mut self) -> Result<(), WireError> {
        self.stream.write_all(&self.out)?;
        self.stream.flush()?;
        Ok(())
    }

    /// Reads the next packet of the current sequence and returns its
    /// payload, valid until the next call on this `Framer`.
    pub fn read_packet(&mut self) -> Result<&[u8], WireError> {
        self.advance()?;
        Ok(self.last_packet())
    }

    /// The payload [`Framer::advance`] read last.
    pub(crate) fn last_packet(&self) -> &[u8] {
        match self.last {
            Last::Buf(from, to) => &self.buf[from..to],
            Last::Joined => &self.joined,
        }
    }

    /// Reads the next packet of the current sequence ([`Framer::last_packet`]).
    pub(crate) fn advance(&mut self) -> Result<(), WireError> {
        let mut chunks = 0usize;
        loop {
            self.fill(4)?;
            let h = &self.buf[self.start..self.start + 4];
            let len = h[0] as usize | (h[1] as usize) << 8 | (h[2] as usize) << 16;
            if h[3] != self.seq {
                return Err(WireError::protocol(format!(
                    "packet out of order: sequence id {}, expected {}",
                    h[3], self.seq
                )));
            }
            let size = if chunks == 0 {
                len
            } else {
                self.joined.len() + len
            };
            if size > self.max_packet {
                return Err(WireError::PacketTooLarge {
                    size,
                    max: self.max_packet,
                });
            }
            self.seq = self.seq.wrapping_add(1);
            self.fill(4 + len)?;
            let from = self.start + 4;
            self.start = from + len;
            if chunks == 0 && len < MAX_CHUNK {
                self.last = Last::Buf(from, from + len);
                return Ok(());
            }
            if chunks == 0 {
                self.joined.clear();
            }
            self.joined.extend_from_slice(&self.buf[from..from + len]);
            chunks += 1;
            if len < MAX_CHUNK {
                self.last = Last::Joined;
                return Ok(());
            }
        }
    }

    /// Until at least `n` unread bytes are in the buffer. (Twice a packet:
    /// the check inline, the reading apart.)
    #[inline]
    fn fill(&mut self, n: usize) -> Result<(), WireError> {
        if self.end - self.start >= n {
            return Ok(());
        }
        self.fill_slow(n)
    }

    #[inline(never)]
    fn fill_slow(&mut self, n: usize) -> Result<(), WireError> {
        while self.end - self.start < n {
            self.room(n);
            match self.stream.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    return Err(WireError::Io(io::Error::new(
                        ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    )))
                }
                Ok(got) => self.got(got),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Counts a read of `got` bytes into `buf[end..]`; one that filled
    /// all the room it had doubles what the next read asks for.
    #[inline]
    fn got(&mut self, got: usize) {
        if self.end + got == self.buf.len() {
            self.read_size = (self.read_size * 2).min(MAX_READ);
        }
        self.end += got;
        self.received += got as u64;
    }

    /// Makes room after the unread bytes for a read that brings them to
    /// `n` (and for at least `read_size` bytes).
    fn room(&mut self, n: usize) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        let want = n.max(self.read_size);
        if self.buf.len() - self.start < want {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.buf.len() < want {
                let grown = want.max(self.buf.len().saturating_mul(2).min(MAX_READ));
                self.buf.resize(grown, 0);
            }
        }
    }

    /// The answer read to its end was to the first of two commands sent
    /// back to back (pipelined): the next packets are the second one's
    /// answer, numbered from 1 again.
    pub(crate) fn next_answer(&mut self) {
        self.seq = 1;
        self.open_cells = None;
    }

    /// Between commands (the next one's start, and a pooled connection's
    /// return): the read buffer back to its first size once nothing unread
    /// is in it, and the join and write buffers given back past [`RETAIN`].
    pub(crate) fn give_back(&mut self) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            self.read_size = FIRST_READ;
            if self.buf.len() > FIRST_READ {
                self.buf.truncate(FIRST_READ);
                self.buf.shrink_to_fit();
            }
        }
        if self.joined.capacity() > RETAIN {
            self.joined = Vec::new();
        }
        if self.out.capacity() > RETAIN {
            self.out = Vec::new();
        }
    }
}

/// A stream that can be read without waiting: what has arrived, or
/// `WouldBlock` at once when nothing has (for a socket: `recv` with
/// `MSG_DONTWAIT`). The caller implements it for its stream; this layer
/// makes no system call of its own.
pub trait ReadNow {
    /// Reads what has arrived into `buf` without waiting: the count (0:
    /// the peer closed), or `WouldBlock` when nothing is there.
    fn read_now(&mut self, buf: &mut [u8]) -> io::Result<usize>;
}

impl<S: Read + Write + ReadNow> Framer<S> {
    /// Reads what has arrived without waiting for more (one
    /// [`ReadNow::read_now`] into the read buffer), when the next packet's
    /// first chunk is not whole in it ([`Framer::needs_input`]). True when
    /// bytes came, false when none had. The stream closed or in error is an
    /// error, as a read that waits would find it.
    pub fn read_arrived(&mut self) -> Result<bool, WireError> {
        let missing = self.missing();
        if missing == 0 {
            return Ok(false);
        }
        self.room(self.end - self.start + missing);
        loop {
            match self.stream.read_now(&mut self.buf[self.end..]) {
                Ok(0) => {
                    return Err(WireError::Io(io::Error::new(
                        ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    )))
                }
                Ok(got) => {
                    self.got(got);
                    return Ok(true);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! An in-memory stream for the unit tests of this layer's parsing.
    use super::*;
    use std::io::Cursor;

    /// A stream that hands out its input a few bytes per read and keeps
    /// what is written.
    pub(crate) struct Trickle {
        input: Cursor<Vec<u8>>,
        per_read: usize,
        pub(crate) written: Vec<u8>,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.per_read);
            self.input.read(&mut buf[..n])
        }
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    pub(crate) fn framer(input: Vec<u8>, per_read: usize) -> Framer<Trickle> {
        Framer::new(
            Trickle {
                input: Cursor::new(input),
                per_read,
                written: Vec::new(),
            },
            0,
        )
    }

    pub(crate) fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let n = payload.len();
        let mut p = vec![n as u8, (n >> 8) as u8, (n >> 16) as u8, seq];
        p.extend_from_slice(payload);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn packets_arrive_whole_however_the_bytes_are_cut() {
        // Past the first read buffer (16 KiB); smaller under Miri, which
        // takes seconds per thousand reads of one byte.
        let big = vec![7u8; if cfg!(miri) { 2_000 } else { 40_000 }];
        let mut input = packet(1, b"first");
        input.extend(packet(2, b""));
        input.extend(packet(3, &big));
        for per_read in [1, 3, 4, 5, 4096, 1 << 20] {
            let mut f = framer(input.clone(), per_read);
            f.seq = 1;
            assert_eq!(f.read_packet().unwrap(), b"first");
            assert_eq!(f.read_packet().unwrap(), b"");
            assert_eq!(f.read_packet().unwrap(), &big[..]);
            assert!(!f.has_buffered_input());
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "a socket pair: system calls Miri does not run")]
    fn read_arrived_takes_what_came_and_never_waits() {
        use std::os::unix::net::UnixStream;
        /// A socket read without waiting the way std allows it.
        struct Sock(UnixStream);
        impl Read for Sock {
            fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
                self.0.read(b)
            }
        }
        impl Write for Sock {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.write(b)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        impl ReadNow for Sock {
            fn read_now(&mut self, b: &mut [u8]) -> io::Result<usize> {
                self.0.set_nonblocking(true)?;
                let got = self.0.read(b);
                self.0.set_nonblocking(false)?;
                got
            }
        }
        let (mine, mut server) = UnixStream::pair().unwrap();
        let mut f = Framer::new(Sock(mine), 0);
        f.seq = 1;
        // Nothing yet: the header is missing, and the read does not wait.
        assert!(f.needs_input());
        assert!(!f.read_arrived().unwrap());
        // Half a packet: read in, not whole, more still needed.
        let p = packet(1, b"hello, world");
        server.write_all(&p[..7]).unwrap();
        assert!(f.read_arrived().unwrap());
        assert!(f.needs_input() && !f.next_packet_buffered());
        assert!(!f.read_arrived().unwrap());
        // The rest, and the start of the next: the first is whole.
        let mut rest = p[7..].to_vec();
        rest.extend(&packet(2, b"next")[..2]);
        server.write_all(&rest).unwrap();
        assert!(f.read_arrived().unwrap());
        assert!(f.next_packet_buffered() && !f.needs_input());
        // A whole packet waiting: nothing is read.
        assert!(!f.read_arrived().unwrap());
        assert_eq!(f.read_packet().unwrap(), b"hello, world");
        assert!(f.needs_input());
        // The peer gone: an error, as a read that waits would find.
        drop(server);
        let e = f.read_arrived().unwrap_err();
        assert!(e.to_string().contains("closed"), "{e}");
    }

    #[test]
    #[cfg_attr(miri, ignore = "a 16 MiB buffer: minutes under Miri")]
    fn a_multi_chunk_header_is_not_input_to_wait_for() {
        // A chunk of MAX_CHUNK bytes is followed by another; its header and
        // payload in the buffer, it is not "buffered" (reading it may wait
        // for the next chunk) but it does not need input either.
        let mut f = framer(Vec::new(), 1);
        f.buf = vec![0xff, 0xff, 0xff, 0];
        f.buf.resize(4 + MAX_CHUNK, 1);
        f.end = f.buf.len();
        assert!(!f.next_packet_buffered());
        assert!(!f.needs_input());
        f.end -= 1;
        assert!(f.needs_input());
    }

    #[test]
    #[cfg_attr(miri, ignore = "16 MiB packets: minutes under Miri")]
    fn a_packet_of_several_chunks_is_joined() {
        let big: Vec<u8> = (0..MAX_CHUNK + 10).map(|i| (i % 251) as u8).collect();
        // Exactly one chunk's worth: an empty chunk ends it.
        let exact: Vec<u8> = big[..MAX_CHUNK].to_vec();
        let mut input = packet(0, &big[..MAX_CHUNK]);
        input.extend(packet(1, &big[MAX_CHUNK..]));
        input.extend(packet(2, &exact));
        input.extend(packet(3, b""));
        input.extend(packet(4, b"after"));
        let mut f = framer(input, 1 << 16);
        assert_eq!(f.read_packet().unwrap(), &big[..]);
        assert_eq!(f.read_packet().unwrap(), &exact[..]);
        assert_eq!(f.read_packet().unwrap(), b"after");
    }

    #[test]
    #[cfg_attr(miri, ignore = "16 MiB packets: minutes under Miri")]
    fn a_command_is_split_the_same_way() {
        for len in [0, 10, MAX_CHUNK - 1, MAX_CHUNK, MAX_CHUNK + 5] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 13) as u8).collect();
            let mut f = framer(Vec::new(), 1);
            f.send_command(0x03, &payload).unwrap();
            // Read back what was written as the server would.
            let written = std::mem::take(&mut f.stream.written);
            let mut back = framer(written, 1 << 20);
            let got = back.read_packet().unwrap().to_vec();
            assert_eq!(got[0], 0x03, "len {len}");
            assert_eq!(&got[1..], &payload[..], "len {len}");
            assert!(
                !back.has_buffered_input(),
                "len {len}: nothing after the packet"
            );
        }
    }

    #[test]
    fn out_of_order_truncated_and_oversized_packets_are_errors() {
        let mut f = framer(packet(5, b"x"), 64);
        let e = f.read_packet().unwrap_err();
        assert!(e.to_string().contains("sequence id 5, expected 0"), "{e}");
        assert!(e.is_fatal());

        let mut cut = packet(0, b"hello");
        cut.truncate(6);
        let e = framer(cut, 64).read_packet().unwrap_err();
        assert!(
            matches!(&e, WireError::Io(io) if io.kind() == ErrorKind::UnexpectedEof),
            "{e}"
        );

        let mut f = framer(packet(0, &[0u8; 100]), 64);
        f.set_max_packet(99);
        let e = f.read_packet().unwrap_err();
        assert!(
            matches!(e, WireError::PacketTooLarge { size: 100, max: 99 }),
            "{e}"
        );
    }
}
