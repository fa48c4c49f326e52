//! Opening a session on a connected stream: the server's greeting
//! (`Protocol::HandshakeV10`), the client's answer
//! (`Protocol::HandshakeResponse41`), and authentication with
//! `mysql_native_password` (MariaDB's default), `caching_sha2_password`
//! (MySQL 8's), MariaDB's `client_ed25519`, and `mysql_clear_password`
//! when the login allows it and the connection is private. A server that
//! asks for any other plugin is refused by name. The packets and the
//! arithmetic come from `mysql_common` ([`crate::wire::packets`]); the
//! decisions (what may be sent where) are made here.
//!
//! The password is used and dropped: it is in no error, no `Debug` output
//! and no field of what this returns, and it never leaves in the clear
//! over a connection that is neither TLS nor a unix socket.

use std::fmt;
use std::io::{Read, Write};

use crate::wire::error::WireError;
use crate::wire::packet::Framer;
use crate::wire::packets;
use crate::wire::parse::{caps, mariadb, parse_err, OkInfo, Reader};
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
    pub const CONNECT_ATTRS: u32 = 0x0010_0000;
}

/// An authentication plugin staunch speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthPlugin {
    /// `mysql_native_password`: a SHA-1 scramble of a nonce.
    NativePassword,
    /// `caching_sha2_password`: a SHA-256 scramble when the server has the
    /// user cached, else the password itself, over TLS or a unix socket or
    /// encrypted with the server's RSA key.
    CachingSha2Password,
    /// MariaDB's `client_ed25519`: an Ed25519 signature of a nonce.
    ClientEd25519,
    /// `mysql_clear_password`: the password itself (PAM, LDAP), only when
    /// [`Login::allow_cleartext`] and over TLS or a unix socket.
    ClearPassword,
}

impl AuthPlugin {
    /// The plugin's name as the protocol spells it.
    pub fn name(self) -> &'static str {
        match self {
            AuthPlugin::NativePassword => "mysql_native_password",
            AuthPlugin::CachingSha2Password => "caching_sha2_password",
            AuthPlugin::ClientEd25519 => "client_ed25519",
            AuthPlugin::ClearPassword => "mysql_clear_password",
        }
    }

    /// The plugin called `name`, or the sentence that refuses it.
    fn by_name(name: &[u8]) -> Result<AuthPlugin, WireError> {
        match name {
            b"mysql_native_password" => Ok(AuthPlugin::NativePassword),
            b"caching_sha2_password" => Ok(AuthPlugin::CachingSha2Password),
            b"client_ed25519" => Ok(AuthPlugin::ClientEd25519),
            b"mysql_clear_password" => Ok(AuthPlugin::ClearPassword),
            _ => Err(unsupported_plugin(name)),
        }
    }
}

/// Who logs in, to what, and what the login may do to get in.
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
    /// The stream is a unix socket: no one between the client and the
    /// server, so a password may be sent as it is
    /// (`caching_sha2_password`'s full authentication,
    /// `mysql_clear_password`), as over TLS. The caller knows what it
    /// connected; this layer takes its word.
    pub unix_socket: bool,
    /// The server's RSA public key (PEM), for `caching_sha2_password`'s
    /// full authentication over plain TCP: the password leaves encrypted
    /// with it (the client layer's `server_public_key`).
    pub server_public_key: Option<&'a [u8]>,
    /// Over plain TCP without [`Login::server_public_key`], ask the server
    /// for its RSA key and encrypt the password with it (MySQL's
    /// `get-server-public-key`; the client layer's
    /// `get_server_public_key`). Only on request: the key comes over the
    /// same unprotected connection, where a man in the middle can swap it
    /// for his own and read the password.
    pub get_server_public_key: bool,
    /// Let `mysql_clear_password` send the password as it is, over TLS or
    /// a unix socket only (the client layer's `allow_cleartext_password`).
    /// Plain TCP is refused even so, before the password is sent.
    pub allow_cleartext: bool,
    /// Connection attributes (`CLIENT_CONNECT_ATTRS`): name and value
    /// pairs the server shows in `performance_schema.session_connect_attrs`
    /// (`_client_name`, `_client_version`, `program_name`, the user's own).
    /// Sent only when the server offers the capability; nothing checks
    /// them here (the client layer refuses a password among them).
    pub connect_attrs: &'a [(&'a str, &'a str)],
    /// With TLS asked for, a server whose greeting offers none is logged
    /// into in plaintext instead of refused (`tls_mode=preferred`, which
    /// protects against eavesdropping only where the server can).
    pub tls_optional: bool,
}

impl fmt::Debug for Login<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Login")
            .field("user", &self.user)
            .field("password", &"<hidden>")
            .field("database", &self.database)
            .field("extra_caps", &self.extra_caps)
            .field("unix_socket", &self.unix_socket)
            .field(
                "server_public_key",
                &self
                    .server_public_key
                    .map(|k| format!("<{} bytes>", k.len())),
            )
            .field("get_server_public_key", &self.get_server_public_key)
            .field("allow_cleartext", &self.allow_cleartext)
            .field("connect_attrs", &self.connect_attrs)
            .field("tls_optional", &self.tls_optional)
            .finish()
    }
}

/// What the server said of itself in its greeting, and how the login
/// went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Greeting {
    /// Its version text (`"10.11.19-MariaDB-0+deb12u1"`; MariaDB's old
    /// `"5.5.5-"` prefix removed).
    pub version: String,
    /// The connection's id on the server (what `KILL` takes).
    pub connection_id: u32,
    /// The server's capability flags.
    pub server_caps: u32,
    /// MariaDB's extended capability flags the server offers
    /// ([`crate::wire::mariadb`]; 0 from MySQL).
    pub server_mariadb_caps: u32,
    /// The plugin the session was authenticated with (the last one the
    /// server asked for).
    pub auth_plugin: AuthPlugin,
}

/// The most one packet may hold until the login is done.
pub const HANDSHAKE_MAX_PACKET: usize = 4 * 1024 * 1024;

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

/// MariaDB's extended capability flags this layer asks for (those the
/// server has): the definitions of a prepared statement's answer left out
/// when the client has them already (read in `text.rs`).
const WANTED_MARIADB: u32 = mariadb::CACHE_METADATA;

/// Where `caching_sha2_password` is in its exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sha2 {
    /// The scramble was sent: the server answers OK/ERR, "fast auth
    /// succeeded" (0x03) or "send the password" (0x04).
    Scrambled,
    /// 0x03 came: only the OK (or an ERR) may follow.
    Cached,
    /// The public key was asked for: it comes next.
    KeyAsked,
    /// The password was sent: only the verdict may follow.
    Sent,
}

impl<S: Read + Write> Framer<Stream<S>> {
    /// Opens a session on `stream`, freshly connected to a server: reads
    /// its greeting, starts TLS when `tls` is given (a server that offers
    /// none is refused), logs in, and returns the packet layer, ready for
    /// commands, with the capability flags both sides agreed on, and what
    /// the greeting said with the plugin that authenticated. The stream's
    /// time limits bound every read and write.
    ///
    /// The first answer uses the plugin the greeting names when it is
    /// `mysql_native_password` or `caching_sha2_password`, and
    /// `mysql_native_password` otherwise (`client_ed25519` signs a nonce
    /// the greeting does not carry; `mysql_clear_password` would send the
    /// password before anyone asked): the server switches to the user's
    /// plugin if it is another one, once.
    pub fn connect(
        stream: S,
        login: &Login<'_>,
        tls: Option<&Tls>,
    ) -> Result<(Framer<Stream<S>>, Greeting), WireError> {
        let mut f = Framer::new(Stream::Plain(stream), 0);
        // The greeting and the authentication exchange are small: a peer
        // that sends more is refused before it is buffered (the caller sets
        // the session's own limit once it is logged in).
        f.set_max_packet(HANDSHAKE_MAX_PACKET);
        f.advance()?;
        let Hello {
            mut greeting,
            scramble,
            plugin: offered,
        } = parse_greeting(f.last_packet())?;
        let mut want = WANTED | login.extra_caps;
        want &= !flag::SSL;
        if login.database.is_some() {
            want |= flag::CONNECT_WITH_DB;
        }
        let tls = match tls {
            Some(_) if greeting.server_caps & flag::SSL == 0 && login.tls_optional => None,
            Some(_) if greeting.server_caps & flag::SSL == 0 => {
                return Err(WireError::Tls(
                    "the server does not offer TLS (its greeting lacks CLIENT_SSL; is it started with ssl_cert and ssl_key?)".into(),
                ));
            }
            other => other,
        };
        if tls.is_some() {
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
        // MariaDB reads its extended flags only from a client that, like
        // it, leaves CLIENT_MYSQL (LONG_PASSWORD) out.
        let agreed_mariadb = if agreed & flag::LONG_PASSWORD == 0 {
            WANTED_MARIADB & greeting.server_mariadb_caps
        } else {
            0
        };
        f.mariadb_caps = agreed_mariadb;

        if let Some(tls) = tls {
            // SSLRequest: the handshake response's first 32 bytes; then TLS,
            // and the whole response inside it.
            f.send_packet(&packets::ssl_request(agreed, agreed_mariadb))?;
            if f.has_buffered_input() {
                return Err(WireError::protocol(
                    "the server sent data before TLS started",
                ));
            }
            f = f.map_stream(|s| s.start_tls(tls))?;
        }
        let private = f.stream().is_tls() || login.unix_socket;

        let plugin = match offered.as_deref() {
            Some(b"caching_sha2_password") => AuthPlugin::CachingSha2Password,
            _ => AuthPlugin::NativePassword,
        };
        let auth = match plugin {
            AuthPlugin::CachingSha2Password => packets::sha256(&scramble, login.password),
            _ => packets::native(&scramble, login.password),
        };
        // Attributes only to a server that reads them (the library would
        // set the capability whatever the server offered).
        let attrs = (greeting.server_caps & flag::CONNECT_ATTRS != 0
            && !login.connect_attrs.is_empty())
        .then_some(login.connect_attrs);
        let p = packets::handshake_response(
            agreed,
            agreed_mariadb,
            login.user,
            &auth,
            login.database,
            plugin.name().as_bytes(),
            attrs,
        );
        f.send_packet(&p)?;
        greeting.auth_plugin = authenticate(&mut f, login, plugin, scramble, private)?;
        // Logged in: the limit of any session until its caller sets its
        // own (the client layer sets the server's max_allowed_packet).
        f.set_max_packet(crate::wire::packet::DEFAULT_MAX_PACKET);
        Ok((f, greeting))
    }
}

/// The exchange after the handshake response, which answered `plugin`
/// with `nonce`: the plugin that authenticated, or why not.
fn authenticate<S: Read + Write>(
    f: &mut Framer<Stream<S>>,
    login: &Login<'_>,
    mut plugin: AuthPlugin,
    mut nonce: Vec<u8>,
    private: bool,
) -> Result<AuthPlugin, WireError> {
    let mut switched = false;
    let mut sha2 = Sha2::Scrambled;
    loop {
        f.advance()?;
        let caps = f.caps;
        let reply = f.last_packet();
        match reply.first() {
            Some(0x00) => {
                f.status = OkInfo::parse(reply, caps)?.status;
                return Ok(plugin);
            }
            Some(0xff) => {
                return Err(match parse_err(reply, caps)? {
                    Some(e) => WireError::Server(e),
                    None => WireError::protocol("a progress report during authentication"),
                })
            }
            Some(0xfe) if sha2 != Sha2::Scrambled => {
                return Err(WireError::protocol(
                    "an auth switch request in the middle of caching_sha2_password's exchange",
                ))
            }
            Some(0xfe) if switched => {
                return Err(WireError::protocol(
                    "the server asked to switch authentication plugins a second time",
                ))
            }
            Some(0xfe) => {
                let (name, data) = packets::auth_switch(reply)?;
                plugin = AuthPlugin::by_name(&name)?;
                switched = true;
                sha2 = Sha2::Scrambled;
                let answer = match plugin {
                    AuthPlugin::NativePassword | AuthPlugin::CachingSha2Password => {
                        // 20 bytes, and the NUL MySQL and MariaDB add.
                        let data = data.strip_suffix(&[0]).unwrap_or(data);
                        if data.len() != 20 {
                            return Err(WireError::protocol(format!(
                                "{} asked with a nonce of {} bytes, not 20",
                                plugin.name(),
                                data.len()
                            )));
                        }
                        nonce = data.to_vec();
                        if plugin == AuthPlugin::NativePassword {
                            packets::native(&nonce, login.password)
                        } else {
                            packets::sha256(&nonce, login.password)
                        }
                    }
                    AuthPlugin::ClientEd25519 => {
                        if data.len() != 32 {
                            return Err(WireError::protocol(format!(
                                "client_ed25519 asked with a nonce of {} bytes, not 32",
                                data.len()
                            )));
                        }
                        packets::ed25519(data, login.password)
                    }
                    AuthPlugin::ClearPassword => {
                        if !login.allow_cleartext {
                            return Err(WireError::AuthRefused(
                                "the server asks for the password in the clear \
                                 (mysql_clear_password), which is not allowed: set \
                                 allow_cleartext_password=true, over TLS or a unix socket"
                                    .into(),
                            ));
                        }
                        if !private {
                            return Err(WireError::AuthRefused(
                                "the server asks for the password in the clear \
                                 (mysql_clear_password), and the connection is neither TLS \
                                 nor a unix socket: staunch sends it only over those, even \
                                 with allow_cleartext_password=true"
                                    .into(),
                            ));
                        }
                        login.password.bytes().chain([0]).collect()
                    }
                };
                send_secret(f, answer)?;
            }
            Some(0x01) if plugin == AuthPlugin::CachingSha2Password => {
                let data = packets::more_data(reply)?;
                match (sha2, data) {
                    (Sha2::Scrambled, [0x03]) => sha2 = Sha2::Cached,
                    (Sha2::Scrambled, [0x04]) => {
                        if private {
                            sha2 = Sha2::Sent;
                            send_secret(f, login.password.bytes().chain([0]).collect())?;
                        } else if let Some(pem) = login.server_public_key {
                            let sealed = packets::rsa_password(pem, &nonce, login.password)
                                .map_err(|e| in_knob(e, "server_public_key"))?;
                            sha2 = Sha2::Sent;
                            f.send_packet(&sealed)?;
                        } else if login.get_server_public_key {
                            sha2 = Sha2::KeyAsked;
                            f.send_packet(&packets::public_key_request())?;
                        } else {
                            return Err(WireError::AuthRefused(
                                "caching_sha2_password needs the full exchange, and the \
                                 connection is neither TLS nor a unix socket: give the \
                                 server's RSA public key (server_public_key) or allow \
                                 fetching it (get_server_public_key=true)"
                                    .into(),
                            ));
                        }
                    }
                    (Sha2::KeyAsked, pem) => {
                        let sealed = packets::rsa_password(pem, &nonce, login.password)
                            .map_err(|e| in_knob(e, "fetched: get_server_public_key"))?;
                        sha2 = Sha2::Sent;
                        f.send_packet(&sealed)?;
                    }
                    (_, data) => {
                        return Err(WireError::protocol(format!(
                            "caching_sha2_password: an unexpected more-data packet of {} bytes{}",
                            data.len(),
                            match data.first() {
                                Some(b) if data.len() == 1 => format!(" (0x{b:02X})"),
                                _ => String::new(),
                            }
                        )))
                    }
                }
            }
            Some(&b) => {
                return Err(WireError::protocol(format!(
                    "unexpected packet 0x{b:02X} during authentication with {}",
                    plugin.name()
                )))
            }
            None => return Err(WireError::protocol("an empty packet during authentication")),
        }
    }
}

/// Sends `secret` (a password, or what is made from it) and wipes it and
/// the framer's copy of it.
fn send_secret<S: Read + Write>(
    f: &mut Framer<Stream<S>>,
    mut secret: Vec<u8>,
) -> Result<(), WireError> {
    let sent = f.send_packet(&secret);
    secret.fill(0);
    f.wipe_sent();
    sent
}

/// `e`, a key that would not do, said to come from the knob `knob`.
fn in_knob(e: WireError, knob: &str) -> WireError {
    match e {
        WireError::Protocol(what) => WireError::Protocol(format!("{what} ({knob})")),
        e => e,
    }
}

fn unsupported_plugin(name: &[u8]) -> WireError {
    let name = String::from_utf8_lossy(name);
    let what = match &*name {
        "dialog" => " (MariaDB's PAM)",
        "auth_gssapi_client" => " (Kerberos)",
        "parsec" => " (MariaDB's PARSEC)",
        "sha256_password" => " (MySQL's older RSA plugin)",
        "mysql_old_password" => " (the pre-4.1 hash)",
        _ => "",
    };
    WireError::AuthRefused(format!(
        "the server asks for the authentication plugin {name:?}{what}; staunch speaks \
         mysql_native_password, caching_sha2_password, client_ed25519 and, when allowed, \
         mysql_clear_password"
    ))
}

/// What a greeting holds for the login.
#[derive(Debug)]
struct Hello {
    greeting: Greeting,
    /// The 20-byte scramble (nonce).
    scramble: Vec<u8>,
    /// The plugin the greeting names (the server's default), if any.
    plugin: Option<Vec<u8>>,
}

/// The greeting, read.
fn parse_greeting(p: &[u8]) -> Result<Hello, WireError> {
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
    let reserved = r.bytes(10, "the greeting's reserved bytes")?;
    // MariaDB's extended flags: the last 4 reserved bytes of a server
    // that leaves CLIENT_MYSQL (LONG_PASSWORD) out.
    let server_mariadb_caps = if server_caps & flag::LONG_PASSWORD == 0 {
        u32::from_le_bytes([reserved[6], reserved[7], reserved[8], reserved[9]])
    } else {
        0
    };
    if server_caps & flag::SECURE_CONNECTION != 0 {
        let n = data_len.saturating_sub(8).max(13);
        let part = r.bytes(n.min(r.rest.len()), "the greeting's scramble")?;
        scramble.extend_from_slice(part.strip_suffix(&[0]).unwrap_or(part));
    }
    // The default plugin's name, NUL-terminated (MySQL 5.5.10 and later
    // may leave the NUL out at the packet's end).
    let plugin = (server_caps & flag::PLUGIN_AUTH != 0 && !r.rest.is_empty()).then(|| {
        let end = r.rest.iter().position(|&b| b == 0).unwrap_or(r.rest.len());
        r.rest[..end].to_vec()
    });
    let version = text.strip_prefix("5.5.5-").unwrap_or(&text).to_string();
    Ok(Hello {
        greeting: Greeting {
            version,
            connection_id,
            server_caps,
            server_mariadb_caps,
            auth_plugin: AuthPlugin::NativePassword,
        },
        scramble,
        plugin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_password_scramble() {
        // SHA1 of the empty password is not sent: an empty answer.
        assert!(packets::native(b"12345678901234567890", "").is_empty());
        // Against the formula computed by hand with Python's hashlib:
        // a = sha1(b"secret"); b = sha1(nonce + sha1(a)); a XOR b.
        let got = packets::native(b"abcdefghijklmnopqrst", "secret");
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

/// The exchanges against scripted servers: the byte sequences of MySQL's
/// protocol documentation (`caching_sha2_password`, which the MariaDB of
/// the test kit does not speak) and of the cases no server sends on
/// purpose. tests/wire_auth.rs runs the rest against a real MariaDB.
#[cfg(test)]
mod exchanges {
    use super::*;
    use std::cell::RefCell;
    use std::io::{self, Cursor};
    use std::path::PathBuf;
    use std::process::Command;
    use std::rc::Rc;
    use std::sync::OnceLock;

    const PASSWORD: &str = "sha2-hunter2-secret";
    const NONCE: &[u8; 20] = b"0123456789abcdefghij";

    /// A server's bytes, and a log of what the client wrote, kept after
    /// the framer is gone.
    struct Script {
        input: Cursor<Vec<u8>>,
        written: Rc<RefCell<Vec<u8>>>,
    }

    impl Read for Script {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.input.read(buf)
        }
    }

    impl Write for Script {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.written.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A MySQL 8 greeting naming `plugin`, with [`NONCE`].
    fn greeting(plugin: &str) -> Vec<u8> {
        let caps = WANTED | flag::CONNECT_WITH_DB;
        let mut p = vec![10];
        p.extend_from_slice(b"8.0.40\0");
        p.extend_from_slice(&7u32.to_le_bytes());
        p.extend_from_slice(&NONCE[..8]);
        p.push(0);
        p.extend_from_slice(&(caps as u16).to_le_bytes());
        p.push(255);
        p.extend_from_slice(&2u16.to_le_bytes());
        p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0; 10]);
        p.extend_from_slice(&NONCE[8..]);
        p.push(0);
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
        p
    }

    const OK: &[u8] = &[0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00];

    /// A packet the client sent: its sequence id and payload.
    type Sent = (u8, Vec<u8>);

    /// Runs a login against a server that sends `greeting` and then
    /// `replies`, one per client packet: the outcome, and the client's
    /// packets (sequence id, payload).
    fn exchange(
        login: &Login<'_>,
        greeting: &[u8],
        replies: &[&[u8]],
    ) -> (Result<AuthPlugin, WireError>, Vec<Sent>) {
        let mut input = crate::wire::packet::testing::packet(0, greeting);
        // Each reply answers a client packet, but the OK that follows "fast
        // authentication succeeded" (0x01 0x03) follows it directly.
        let mut seq = 2u8;
        for r in replies {
            input.extend(crate::wire::packet::testing::packet(seq, r));
            seq += if *r == [0x01, 0x03] { 1 } else { 2 };
        }
        let written = Rc::new(RefCell::new(Vec::new()));
        let script = Script {
            input: Cursor::new(input),
            written: written.clone(),
        };
        let got = Framer::connect(script, login, None).map(|(_, g)| g.auth_plugin);
        let bytes = written.borrow().clone();
        let mut sent = Vec::new();
        let mut rest = &bytes[..];
        while rest.len() >= 4 {
            let n = rest[0] as usize | (rest[1] as usize) << 8 | (rest[2] as usize) << 16;
            sent.push((rest[3], rest[4..4 + n].to_vec()));
            rest = &rest[4 + n..];
        }
        if let Err(e) = &got {
            let text = format!("{e} {e:?}");
            assert!(!text.contains(login.password), "{text}");
            assert!(!text.trim().is_empty());
        }
        (got, sent)
    }

    fn login(unix_socket: bool) -> Login<'static> {
        Login {
            user: "sha2",
            password: PASSWORD,
            unix_socket,
            ..Login::default()
        }
    }

    fn contains(hay: &[u8], needle: &[u8]) -> bool {
        hay.windows(needle.len()).any(|w| w == needle)
    }

    /// The handshake response: it names `plugin` and carries `auth`.
    fn assert_response(p: &[u8], plugin: &str, auth: &[u8]) {
        assert!(contains(p, plugin.as_bytes()), "{p:?}");
        if !auth.is_empty() {
            assert!(contains(p, auth), "{p:?}");
        }
        assert!(!contains(p, PASSWORD.as_bytes()));
    }

    #[test]
    fn caching_sha2_fast_path() {
        // Fast authentication succeeded (0x01 0x03), then the OK.
        let (got, sent) = exchange(
            &login(false),
            &greeting("caching_sha2_password"),
            &[&[0x01, 0x03], OK],
        );
        assert_eq!(got.unwrap(), AuthPlugin::CachingSha2Password);
        assert_eq!(sent.len(), 1, "only the handshake response: {sent:?}");
        let scramble = packets::sha256(NONCE, PASSWORD);
        assert_eq!(scramble.len(), 32);
        assert_response(&sent[0].1, "caching_sha2_password", &scramble);
    }

    #[test]
    fn caching_sha2_full_over_a_unix_socket_sends_the_password() {
        let (got, sent) = exchange(
            &login(true),
            &greeting("caching_sha2_password"),
            &[&[0x01, 0x04], OK],
        );
        assert_eq!(got.unwrap(), AuthPlugin::CachingSha2Password);
        let mut want = PASSWORD.as_bytes().to_vec();
        want.push(0);
        assert_eq!(sent[1], (3, want));
    }

    #[test]
    fn caching_sha2_full_over_tcp_without_a_key_is_refused_before_the_password() {
        let (got, sent) = exchange(
            &login(false),
            &greeting("caching_sha2_password"),
            &[&[0x01, 0x04], OK],
        );
        let e = got.unwrap_err();
        assert_eq!(
            e.to_string(),
            "caching_sha2_password needs the full exchange, and the connection \
             is neither TLS nor a unix socket: give the server's RSA public key \
             (server_public_key) or allow fetching it (get_server_public_key=true)"
        );
        assert_eq!(sent.len(), 1, "nothing after the handshake response");
        assert!(!sent.iter().any(|(_, p)| contains(p, PASSWORD.as_bytes())));
    }

    /// An RSA key pair made by `openssl` once per test process: the
    /// private key's path and the public key (PEM).
    fn key_pair() -> &'static (PathBuf, Vec<u8>) {
        static PAIR: OnceLock<(PathBuf, Vec<u8>)> = OnceLock::new();
        PAIR.get_or_init(|| {
            let dir = std::env::temp_dir().join(format!("staunch-rsa-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let key = dir.join("key.pem");
            let public = dir.join("public.pem");
            openssl(
                &[
                    "genpkey",
                    "-algorithm",
                    "RSA",
                    "-pkeyopt",
                    "rsa_keygen_bits:2048",
                ],
                &key,
            );
            let st = Command::new("openssl")
                .args(["pkey", "-pubout", "-in"])
                .arg(&key)
                .arg("-out")
                .arg(&public)
                .status()
                .expect("openssl");
            assert!(st.success());
            (key, std::fs::read(&public).unwrap())
        })
    }

    fn openssl(args: &[&str], out: &std::path::Path) {
        let st = Command::new("openssl")
            .args(args)
            .arg("-out")
            .arg(out)
            .status()
            .expect("openssl (the RSA test key is made with it)");
        assert!(st.success(), "openssl {args:?}");
    }

    /// What `blob` decrypts to under the test key (RSA-OAEP, SHA-1).
    fn decrypt(blob: &[u8]) -> Vec<u8> {
        let (key, _) = key_pair();
        let dir = key.parent().unwrap();
        let name = format!("blob-{:?}", std::thread::current().id())
            .replace(|c: char| !c.is_ascii_alphanumeric(), "");
        let (inp, out) = (dir.join(&name), dir.join(format!("{name}.out")));
        std::fs::write(&inp, blob).unwrap();
        let st = Command::new("openssl")
            .args([
                "pkeyutl",
                "-decrypt",
                "-pkeyopt",
                "rsa_padding_mode:oaep",
                "-inkey",
            ])
            .arg(key)
            .arg("-in")
            .arg(&inp)
            .arg("-out")
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success(), "the blob does not decrypt");
        std::fs::read(&out).unwrap()
    }

    /// The password, NUL-terminated, XOR the nonce: what the blob holds.
    fn xored() -> Vec<u8> {
        let mut p: Vec<u8> = PASSWORD.bytes().chain([0]).collect();
        for (b, n) in p.iter_mut().zip(NONCE.iter().cycle()) {
            *b ^= n;
        }
        p
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs openssl: Miri does not spawn processes")]
    fn caching_sha2_full_over_tcp_with_a_configured_key_sends_an_rsa_blob() {
        let pem = &key_pair().1;
        let l = Login {
            server_public_key: Some(pem),
            ..login(false)
        };
        let (got, sent) = exchange(&l, &greeting("caching_sha2_password"), &[&[0x01, 0x04], OK]);
        assert_eq!(got.unwrap(), AuthPlugin::CachingSha2Password);
        assert_eq!(sent.len(), 2);
        let (seq, blob) = &sent[1];
        assert_eq!((*seq, blob.len()), (3, 256), "a 2048-bit key's block");
        assert!(!sent.iter().any(|(_, p)| contains(p, PASSWORD.as_bytes())));
        assert_eq!(decrypt(blob), xored());
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs openssl: Miri does not spawn processes")]
    fn caching_sha2_full_over_tcp_fetches_the_key_when_asked() {
        let pem = &key_pair().1;
        let mut key_packet = vec![0x01];
        key_packet.extend_from_slice(pem);
        let l = Login {
            get_server_public_key: true,
            ..login(false)
        };
        let (got, sent) = exchange(
            &l,
            &greeting("caching_sha2_password"),
            &[&[0x01, 0x04], &key_packet, OK],
        );
        assert_eq!(got.unwrap(), AuthPlugin::CachingSha2Password);
        assert_eq!(sent[1], (3, vec![0x02]), "the public key request");
        assert_eq!((sent[2].0, sent[2].1.len()), (5, 256));
        assert_eq!(decrypt(&sent[2].1), xored());
        assert!(!sent.iter().any(|(_, p)| contains(p, PASSWORD.as_bytes())));
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs openssl: Miri does not spawn processes")]
    fn a_bad_key_is_an_error_naming_it_never_a_panic() {
        let pem = key_pair().1.clone();
        let text = String::from_utf8(pem.clone()).unwrap();
        let mut bad: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----".to_vec(),
            b"-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----".to_vec(),
            text.replace("PUBLIC KEY", "RSA PUBLIC KEY").into_bytes(),
        ];
        // Every truncation of the DER, re-armoured.
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("-----")).collect();
        let b64: String = lines.concat();
        for cut in (0..b64.len()).step_by(4) {
            bad.push(
                format!(
                    "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----",
                    &b64[..cut]
                )
                .into_bytes(),
            );
        }
        for key in &bad {
            let l = Login {
                server_public_key: Some(key),
                ..login(false)
            };
            let (got, sent) =
                exchange(&l, &greeting("caching_sha2_password"), &[&[0x01, 0x04], OK]);
            let e = got.unwrap_err().to_string();
            assert!(e.contains("server_public_key"), "{e}");
            assert!(e.contains("RSA public key"), "{e}");
            assert_eq!(sent.len(), 1);
        }
        // A fetched one that is not a key: named, nothing sent after the
        // request.
        let l = Login {
            get_server_public_key: true,
            ..login(false)
        };
        let (got, sent) = exchange(
            &l,
            &greeting("caching_sha2_password"),
            &[&[0x01, 0x04], &[0x01, b'x'], OK],
        );
        assert!(got.unwrap_err().to_string().contains("RSA public key"));
        assert_eq!(sent.len(), 2);
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs openssl: Miri does not spawn processes")]
    fn an_rsa_key_parses_as_openssl_wrote_it() {
        let (n, e) = packets::rsa_key_for_tests(&key_pair().1).unwrap();
        assert_eq!((n.len(), e), (256, vec![1, 0, 1]));
    }

    /// A switch request to `plugin` with `data`.
    fn switch(plugin: &str, data: &[u8]) -> Vec<u8> {
        let mut p = vec![0xfe];
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
        p.extend_from_slice(data);
        p
    }

    #[test]
    fn a_switch_to_caching_sha2_uses_its_nonce() {
        let mut nonce = b"ABCDEFGHIJKLMNOPQRST".to_vec();
        let sw = switch("caching_sha2_password", &[&nonce[..], &[0]].concat());
        let (got, sent) = exchange(
            &login(false),
            &greeting("mysql_native_password"),
            &[&sw, &[0x01, 0x03], OK],
        );
        assert_eq!(got.unwrap(), AuthPlugin::CachingSha2Password);
        assert_response(
            &sent[0].1,
            "mysql_native_password",
            &packets::native(NONCE, PASSWORD),
        );
        assert_eq!(sent[1], (3, packets::sha256(&nonce, PASSWORD)));
        nonce.clear();
    }

    #[test]
    fn cleartext_only_when_allowed_and_private() {
        let sw = switch("mysql_clear_password", &[]);
        for (unix_socket, allow, sends) in [
            (false, false, false),
            (false, true, false),
            (true, false, false),
            (true, true, true),
        ] {
            let l = Login {
                allow_cleartext: allow,
                ..login(unix_socket)
            };
            let (got, sent) = exchange(&l, &greeting("mysql_native_password"), &[&sw, OK]);
            if sends {
                assert_eq!(got.unwrap(), AuthPlugin::ClearPassword);
                assert_eq!(sent[1].1, PASSWORD.bytes().chain([0]).collect::<Vec<u8>>());
            } else {
                let e = got.unwrap_err().to_string();
                assert!(e.contains("mysql_clear_password"), "{e}");
                assert!(e.contains("allow_cleartext_password"), "{e}");
                assert_eq!(sent.len(), 1, "{unix_socket} {allow}");
            }
        }
    }

    #[test]
    fn other_plugins_are_refused_by_name() {
        for (plugin, what) in [
            ("dialog", "(MariaDB's PAM)"),
            ("auth_gssapi_client", "(Kerberos)"),
            ("sha256_password", "sha256_password"),
            ("no_such_plugin", "no_such_plugin"),
        ] {
            let (got, sent) = exchange(
                &login(true),
                &greeting("mysql_native_password"),
                &[&switch(plugin, b"data\0"), OK],
            );
            let e = got.unwrap_err().to_string();
            assert!(e.contains(&format!("{plugin:?}")), "{e}");
            assert!(e.contains(what), "{e}");
            assert!(e.contains("staunch speaks mysql_native_password"), "{e}");
            assert_eq!(sent.len(), 1);
        }
        // The old form: a lone 0xFE.
        let (got, _) = exchange(
            &login(true),
            &greeting("mysql_native_password"),
            &[&[0xfe], OK],
        );
        assert!(got
            .unwrap_err()
            .to_string()
            .contains("\"mysql_old_password\""));
    }

    #[test]
    fn broken_exchanges_are_named() {
        let native = switch("mysql_native_password", &[&NONCE[..], &[0]].concat());
        let ed = switch("client_ed25519", &[7; 32]);
        for (replies, want) in [
            (vec![&native[..], &native[..]], "a second time"),
            (
                vec![&switch("mysql_native_password", b"short\0")[..]],
                "not 20",
            ),
            (vec![&switch("client_ed25519", &[7; 31])[..]], "not 32"),
            (vec![&ed[..], &[0x01, 0x03][..]], "unexpected packet 0x01"),
            (
                vec![&[0x01, 0x03][..]],
                "unexpected packet 0x01 during authentication with mysql_native_password",
            ),
            (vec![&[0xfe, b'x'][..]], "plugin name has no end"),
            (vec![&[][..]], "an empty packet"),
            (vec![&[0x07][..]], "unexpected packet 0x07"),
        ] {
            let (got, _) = exchange(&login(true), &greeting("mysql_native_password"), &replies);
            let e = got.unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
        let sha2 = greeting("caching_sha2_password");
        for (replies, want) in [
            (
                vec![&[0x01, 0x03][..], &[0x01, 0x04][..]],
                "unexpected more-data packet of 1 bytes (0x04)",
            ),
            (vec![&[0x01, 0x05][..]], "(0x05)"),
            (
                vec![&[0x01, 0x03][..], &native[..]],
                "in the middle of caching_sha2_password",
            ),
        ] {
            let (got, _) = exchange(&login(true), &sha2, &replies);
            let e = got.unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
        // The stream ends mid-exchange: an I/O error, not a hang.
        let (got, _) = exchange(&login(true), &sha2, &[&[0x01, 0x04]]);
        assert!(matches!(got.unwrap_err(), WireError::Io(_)));
    }

    #[test]
    fn an_ed25519_switch_signs_the_nonce_as_sent() {
        // A nonce ending in NUL keeps it: that byte is signed too.
        let mut nonce = [9u8; 32];
        nonce[31] = 0;
        let (got, sent) = exchange(
            &login(false),
            &greeting("mysql_native_password"),
            &[&switch("client_ed25519", &nonce), OK],
        );
        assert_eq!(got.unwrap(), AuthPlugin::ClientEd25519);
        assert_eq!(sent[1].1, packets::ed25519(&nonce, PASSWORD));
        assert_ne!(sent[1].1, packets::ed25519(&nonce[..31], PASSWORD));
    }
}
