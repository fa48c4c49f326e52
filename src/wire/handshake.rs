//! Opening a session on a connected stream: the server's greeting
//! (`Protocol::HandshakeV10`), the client's answer
//! (`Protocol::HandshakeResponse41`), and authentication, so far with
//! `mysql_native_password` only (MariaDB's default plugin). A server that
//! asks for another plugin is refused by name.
//!
//! The password is used for the scramble and dropped: it is in no error,
//! no `Debug` output and no field of what this returns.

use std::fmt;
use std::io::{Read, Write};

use sha1::{Digest, Sha1};

use crate::wire::error::WireError;
use crate::wire::packet::Framer;
use crate::wire::parse::{caps, parse_err, OkInfo, Reader};
use crate::wire::stream::{Stream, Tls};

/// Capability flags of the handshake that only this module reads.
mod flag {
    pub const LONG_PASSWORD: u32 = 0x0000_0001;
    pub const LONG_FLAG: u32 = 0x0000_0004;
    pub const CONNECT_WITH_DB: u32 = 0x0000_0008;
    pub const SSL: u32 = 0x0000_0800;
    pub const TRANSACTIONS: u32 = 0x0000_2000;
    pub const SECURE_CONNECTION: u32 = 0x0000_8000;
    pub const MULTI_RESULTS: u32 = 0x0002_0000;
    pub const PLUGIN_AUTH: u32 = 0x0008_0000;
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 0x0020_0000;
}

/// `utf8mb4_general_ci`: the connection's character set and collation.
const UTF8MB4_GENERAL_CI: u8 = 45;

const NATIVE_PASSWORD: &[u8] = b"mysql_native_password";

/// Who logs in, and to what.
#[derive(Clone, Default)]
pub struct Login<'a> {
    /// The user name.
    pub user: &'a str,
    /// The password; empty for none.
    pub password: &'a str,
    /// The default database, if any.
    pub database: Option<&'a str>,
    /// Capability flags asked for on top of what this layer always asks
    /// for (`CLIENT_PROTOCOL_41`, `CLIENT_SESSION_TRACK`,
    /// `CLIENT_DEPRECATE_EOF`, ...), e.g. [`caps::FOUND_ROWS`] or
    /// [`caps::MULTI_STATEMENTS`]. The session gets those the server also
    /// has.
    pub extra_caps: u32,
}

impl fmt::Debug for Login<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Login")
            .field("user", &self.user)
            .field("password", &"<hidden>")
            .field("database", &self.database)
            .field("extra_caps", &self.extra_caps)
            .finish()
    }
}

/// What the server said of itself in its greeting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Greeting {
    /// Its version text (`"10.11.19-MariaDB-0+deb12u1"`; MariaDB's old
    /// `"5.5.5-"` prefix removed).
    pub version: String,
    /// The connection's id on the server (what `KILL` takes).
    pub connection_id: u32,
    /// The server's capability flags.
    pub server_caps: u32,
}

/// The capability flags this layer always asks for (those the server has).
const WANTED: u32 = flag::LONG_PASSWORD
    | flag::LONG_FLAG
    | caps::PROTOCOL_41
    | flag::TRANSACTIONS
    | flag::SECURE_CONNECTION
    | flag::MULTI_RESULTS
    | flag::PLUGIN_AUTH
    | flag::PLUGIN_AUTH_LENENC_CLIENT_DATA
    | caps::SESSION_TRACK
    | caps::DEPRECATE_EOF;

impl<S: Read + Write> Framer<Stream<S>> {
    /// Opens a session on `stream`, freshly connected to a server: reads
    /// its greeting, starts TLS when `tls` is given (a server that offers
    /// none is refused), logs in, and returns the packet layer, ready for
    /// commands, with the capability flags both sides agreed on. The
    /// stream's time limits bound every read and write.
    pub fn connect(
        stream: S,
        login: &Login<'_>,
        tls: Option<&Tls>,
    ) -> Result<(Framer<Stream<S>>, Greeting), WireError> {
        let mut f = Framer::new(Stream::Plain(stream), 0);
        f.advance()?;
        let (greeting, scramble) = parse_greeting(f.last_packet())?;
        let mut want = WANTED | login.extra_caps;
        want &= !flag::SSL;
        if login.database.is_some() {
            want |= flag::CONNECT_WITH_DB;
        }
        if tls.is_some() {
            if greeting.server_caps & flag::SSL == 0 {
                return Err(WireError::protocol(
                    "TLS was asked for, and the server offers none",
                ));
            }
            want |= flag::SSL;
        }
        let agreed = want & greeting.server_caps;
        for (needed, name) in [
            (caps::PROTOCOL_41, "CLIENT_PROTOCOL_41"),
            (flag::SECURE_CONNECTION, "CLIENT_SECURE_CONNECTION"),
            (flag::PLUGIN_AUTH, "CLIENT_PLUGIN_AUTH"),
        ] {
            if agreed & needed == 0 {
                return Err(WireError::protocol(format!(
                    "the server does not offer {name}"
                )));
            }
        }
        f.caps = agreed;

        if let Some(tls) = tls {
            // SSLRequest: the handshake response's first 32 bytes; then TLS,
            // and the whole response inside it.
            let mut p = Vec::with_capacity(32);
            p.extend_from_slice(&agreed.to_le_bytes());
            p.extend_from_slice(&(1u32 << 30).to_le_bytes());
            p.push(UTF8MB4_GENERAL_CI);
            p.extend_from_slice(&[0; 23]);
            f.send_packet(&p)?;
            if f.has_buffered_input() {
                return Err(WireError::protocol(
                    "the server sent data before TLS started",
                ));
            }
            f = f.map_stream(|s| s.start_tls(tls))?;
        }

        // Answer with native password whatever plugin the greeting names
        // (the server's default, not the user's): the server switches to
        // the user's plugin if it is another one.
        let auth = native_password(&scramble, login.password);
        let mut p = Vec::with_capacity(64 + login.user.len());
        p.extend_from_slice(&agreed.to_le_bytes());
        p.extend_from_slice(&(1u32 << 30).to_le_bytes());
        p.push(UTF8MB4_GENERAL_CI);
        p.extend_from_slice(&[0; 23]);
        p.extend_from_slice(login.user.as_bytes());
        p.push(0);
        // 0 or 20 bytes: the same one byte of length whether the server
        // reads it as length-encoded or not.
        p.push(auth.len() as u8);
        p.extend_from_slice(&auth);
        if let Some(db) = login.database {
            p.extend_from_slice(db.as_bytes());
            p.push(0);
        }
        p.extend_from_slice(NATIVE_PASSWORD);
        p.push(0);
        f.send_packet(&p)?;

        // The server's verdict; at most one switch of plugin.
        let mut switched = false;
        loop {
            f.advance()?;
            let caps = f.caps;
            let reply = f.last_packet();
            match reply.first() {
                Some(0x00) => {
                    OkInfo::parse(reply, caps)?;
                    return Ok((f, greeting));
                }
                Some(0xff) => {
                    return Err(match parse_err(reply, caps)? {
                        Some(e) => WireError::Server(e),
                        None => WireError::protocol("a progress report during authentication"),
                    })
                }
                Some(0xfe) if !switched => {
                    // AuthSwitchRequest: a plugin name, then its data.
                    let body = &reply[1..];
                    let nul = body.iter().position(|&b| b == 0).unwrap_or(body.len());
                    let (name, data) = (&body[..nul], body.get(nul + 1..).unwrap_or_default());
                    if name != NATIVE_PASSWORD {
                        return Err(unsupported_plugin(name));
                    }
                    let data = data.strip_suffix(&[0]).unwrap_or(data);
                    let auth = native_password(data, login.password);
                    switched = true;
                    f.send_packet(&auth)?;
                }
                Some(&b) => {
                    return Err(WireError::protocol(format!(
                        "unexpected packet 0x{b:02X} during authentication"
                    )))
                }
                None => return Err(WireError::protocol("an empty packet during authentication")),
            }
        }
    }
}

fn unsupported_plugin(name: &[u8]) -> WireError {
    WireError::protocol(format!(
        "the server asks for the authentication plugin {:?}; staunch's protocol layer speaks only mysql_native_password so far",
        String::from_utf8_lossy(name)
    ))
}

/// The greeting and the 20-byte scramble.
fn parse_greeting(p: &[u8]) -> Result<(Greeting, Vec<u8>), WireError> {
    if p.first() == Some(&0xff) {
        // Refused before any handshake (too many connections, a blocked
        // host): an ERR packet without a SQLSTATE.
        return Err(match parse_err(p, 0)? {
            Some(e) => WireError::Server(e),
            None => WireError::protocol("a progress report instead of a greeting"),
        });
    }
    let mut r = Reader::new(p);
    let version = r.u8("the greeting's protocol version")?;
    if version != 10 {
        return Err(WireError::protocol(format!(
            "the server speaks protocol version {version}, not 10"
        )));
    }
    let nul = r
        .rest
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| WireError::protocol("the greeting's server version has no end"))?;
    let text = String::from_utf8_lossy(&r.rest[..nul]).into_owned();
    r.bytes(nul + 1, "the greeting's server version")?;
    let connection_id = r.u32("the greeting's connection id")?;
    let mut scramble = r.bytes(8, "the greeting's scramble")?.to_vec();
    r.u8("the greeting's filler")?;
    let low = u32::from(r.u16("the greeting's capability flags")?);
    r.u8("the greeting's character set")?;
    r.u16("the greeting's status")?;
    let high = u32::from(r.u16("the greeting's capability flags")?);
    let server_caps = low | high << 16;
    let data_len = usize::from(r.u8("the greeting's scramble length")?);
    r.bytes(10, "the greeting's reserved bytes")?;
    if server_caps & flag::SECURE_CONNECTION != 0 {
        let n = data_len.saturating_sub(8).max(13);
        let part = r.bytes(n.min(r.rest.len()), "the greeting's scramble")?;
        scramble.extend_from_slice(part.strip_suffix(&[0]).unwrap_or(part));
    }
    let version = text.strip_prefix("5.5.5-").unwrap_or(&text).to_string();
    Ok((
        Greeting {
            version,
            connection_id,
            server_caps,
        },
        scramble,
    ))
}

/// `mysql_native_password`: SHA1(password) XOR SHA1(scramble +
/// SHA1(SHA1(password))); empty for an empty password.
fn native_password(scramble: &[u8], password: &str) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let once = Sha1::digest(password.as_bytes());
    let twice = Sha1::digest(once);
    let mut h = Sha1::new();
    h.update(scramble);
    h.update(twice);
    let salted = h.finalize();
    once.iter().zip(salted.iter()).map(|(a, b)| a ^ b).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_password_scramble() {
        // SHA1 of the empty password is not sent: an empty answer.
        assert!(native_password(b"12345678901234567890", "").is_empty());
        // Against the formula computed by hand with Python's hashlib:
        // a = sha1(b"secret"); b = sha1(nonce + sha1(a)); a XOR b.
        let got = native_password(b"abcdefghijklmnopqrst", "secret");
        let want = [
            0x88, 0x17, 0xc5, 0x0f, 0xa7, 0x79, 0xda, 0xef, 0x01, 0x0e, 0xe7, 0x57, 0x78, 0x25,
            0xb0, 0x84, 0x7d, 0xf9, 0x84, 0x2e,
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn a_login_never_shows_its_password() {
        let l = Login {
            user: "app",
            password: "hunter2-secret",
            ..Login::default()
        };
        assert!(!format!("{l:?}").contains("hunter2"));
    }

    #[test]
    fn a_short_or_foreign_greeting_is_an_error() {
        for (p, what) in [
            (&[9u8, b'x', 0][..], "protocol version 9"),
            (&[10, b'1', b'0'][..], "has no end"),
            (&[10, b'1', 0, 1, 2][..], "connection id"),
        ] {
            let e = parse_greeting(p).unwrap_err();
            assert!(e.to_string().contains(what), "{e}");
        }
        let mut refused = vec![0xff, 0x10, 0x04];
        refused.extend_from_slice(b"Too many connections");
        match parse_greeting(&refused).unwrap_err() {
            WireError::Server(e) => {
                assert_eq!((e.code, e.message.as_str()), (1040, "Too many connections"))
            }
            e => panic!("{e}"),
        }
    }
}
