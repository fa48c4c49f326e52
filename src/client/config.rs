//! Where and how to connect: the MySQL side of the configuration.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::wire::{Pem, Tls, TlsSettings, Verify};

/// `liveness_threshold`'s default.
pub const DEFAULT_LIVENESS_THRESHOLD: Duration = Duration::from_secs(5);

/// Where and how to connect: the MySQL side of the configuration.
#[derive(Clone, PartialEq)]
pub struct ConnectConfig {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) socket: Option<String>,
    pub(crate) user: Option<String>,
    pub(crate) password: Option<String>,
    pub(crate) database: Option<String>,
    pub(crate) query_timeout: Option<Duration>,
    pub(crate) liveness_threshold: Option<Duration>,
    pub(crate) reset_on_return: bool,
    pub(crate) init_sql: Option<String>,
    pub(crate) found_rows: bool,
    /// `autocommit` of every session, set with the pool's settings (on a
    /// new session and after each reset): false turns it off, as PEP 249
    /// and JDBC's `setAutoCommit(false)` pools want from the start.
    pub(crate) autocommit: bool,
    pub(crate) interpolate_params: bool,
    /// A statement without parameters goes as text (see
    /// `Builder::text_without_params`).
    pub(crate) text_without_params: bool,
    pub(crate) tls_mode: TlsMode,
    pub(crate) tls_ca: Option<PathBuf>,
    pub(crate) tls_cert: Option<PathBuf>,
    pub(crate) tls_key: Option<PathBuf>,
    /// `tls_fingerprint`: SHA-256 fingerprints of the server's certificate
    /// (hex, colons allowed, several separated by commas), any one of
    /// which must match.
    pub(crate) tls_fingerprint: Option<String>,
    /// `server_public_key`: a PEM file of the server's RSA public key, for
    /// `caching_sha2_password`'s full authentication over plain TCP.
    pub(crate) server_public_key: Option<PathBuf>,
    /// `get_server_public_key`: over plain TCP without
    /// `server_public_key`, ask the server for its RSA key (MySQL's
    /// `get-server-public-key`; a man in the middle can swap it).
    pub(crate) get_server_public_key: bool,
    /// `allow_cleartext_password`: let `mysql_clear_password` send the
    /// password as it is, over TLS or a unix socket only.
    pub(crate) allow_cleartext_password: bool,
    /// The user's connection attributes (knob `connect_attrs`), in order.
    pub(crate) connect_attrs: Vec<(String, String)>,
    /// The attribute `program_name` (knob `program_name`); None: the
    /// program's file name.
    pub(crate) program_name: Option<String>,
}

/// Whether and how connections are encrypted (knob `tls_mode`).
///
/// The names and meanings follow MySQL's `--ssl-mode` exactly. TLS is
/// rustls with staunch's own certificate verifier (`wire::Tls`):
/// `verify_ca` trusts `tls_ca` only; `verify_identity` trusts `tls_ca`, or
/// the bundled Mozilla roots when none is given; either pins the server's
/// own certificate when it is the one in `tls_ca` (whatever its basic
/// constraints), or by `tls_fingerprint`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TlsMode {
    /// Plain TCP, no TLS (the default).
    #[default]
    Disabled,
    /// TLS, without certificate verification, when the server's greeting
    /// offers it (capability flag `CLIENT_SSL`); plaintext when it does not,
    /// and over a unix socket. A TLS handshake that fails is an error, never a
    /// silent fallback.
    Preferred,
    /// TLS or fail; the server certificate is not verified (protects against
    /// eavesdropping, not against an active man in the middle).
    Required,
    /// TLS, and the server certificate must chain to `tls_ca`; the host name
    /// is not checked.
    VerifyCa,
    /// TLS, the certificate must chain to a trusted CA and name the host of
    /// the URL (DNS name or IP address in its subject alternative names).
    VerifyIdentity,
}

impl TlsMode {
    /// The knob's text form (`disabled`, `preferred`, `required`, `verify_ca`,
    /// `verify_identity`).
    pub fn as_str(self) -> &'static str {
        match self {
            TlsMode::Disabled => "disabled",
            TlsMode::Preferred => "preferred",
            TlsMode::Required => "required",
            TlsMode::VerifyCa => "verify_ca",
            TlsMode::VerifyIdentity => "verify_identity",
        }
    }

    /// Parses the knob's text form (case-insensitive).
    pub fn parse(v: &str) -> Result<TlsMode> {
        Ok(match v.trim().to_ascii_lowercase().as_str() {
            "disabled" => TlsMode::Disabled,
            "preferred" => TlsMode::Preferred,
            "required" => TlsMode::Required,
            "verify_ca" => TlsMode::VerifyCa,
            "verify_identity" => TlsMode::VerifyIdentity,
            _ => {
                return Err(Error::config(format!(
                    "tls_mode must be disabled, preferred, required, verify_ca or verify_identity, got {v:?}"
                )))
            }
        })
    }

    /// Whether the server certificate is checked against a CA.
    pub fn verifies(self) -> bool {
        matches!(self, TlsMode::VerifyCa | TlsMode::VerifyIdentity)
    }
}

impl fmt::Display for TlsMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Default for ConnectConfig {
    fn default() -> Self {
        ConnectConfig {
            host: "127.0.0.1".into(),
            port: 3306,
            socket: None,
            user: None,
            password: None,
            database: None,
            query_timeout: None,
            liveness_threshold: Some(DEFAULT_LIVENESS_THRESHOLD),
            reset_on_return: false,
            init_sql: None,
            found_rows: false,
            autocommit: true,
            interpolate_params: false,
            text_without_params: false,
            tls_mode: TlsMode::Disabled,
            tls_ca: None,
            tls_cert: None,
            tls_key: None,
            tls_fingerprint: None,
            server_public_key: None,
            get_server_public_key: false,
            allow_cleartext_password: false,
            connect_attrs: Vec::new(),
            program_name: None,
        }
    }
}

impl ConnectConfig {
    /// `host:port`, or the socket path, for messages.
    pub fn endpoint(&self) -> String {
        match &self.socket {
            Some(s) => format!("unix:{s}"),
            None if self.host.contains(':') => format!("[{}]:{}", self.host, self.port),
            None => format!("{}:{}", self.host, self.port),
        }
    }
    /// The user name, if set.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }
    /// How long a statement waits for its answer before its server is
    /// checked (`liveness_threshold`); None: never.
    pub fn liveness_threshold(&self) -> Option<Duration> {
        self.liveness_threshold
    }
    /// The statement time limit (`query_timeout`), if set.
    pub fn query_timeout(&self) -> Option<Duration> {
        self.query_timeout
    }
    /// Whether and how connections are encrypted.
    pub fn tls_mode(&self) -> TlsMode {
        self.tls_mode
    }
    /// The CA certificate(s) file (PEM) server certificates are verified against.
    pub fn tls_ca(&self) -> Option<&Path> {
        self.tls_ca.as_deref()
    }
    /// The client certificate (chain) file (PEM).
    pub fn tls_cert(&self) -> Option<&Path> {
        self.tls_cert.as_deref()
    }
    /// The client private key file (PEM). Only its path is ever printed.
    pub fn tls_key(&self) -> Option<&Path> {
        self.tls_key.as_deref()
    }

    /// The user's connection attributes (knob `connect_attrs`), in the
    /// order given; [`ConnectConfig::sent_connect_attrs`] adds staunch's.
    pub fn connect_attrs(&self) -> &[(String, String)] {
        &self.connect_attrs
    }

    /// The connection attributes staunch sends after the client's own
    /// (`connect::connect_attrs`: `_client_name`, `_client_version`,
    /// `_os`, `_platform`, `_pid`): `program_name` (the knob's or the
    /// program's file name), `staunch_version`, then the user's, whose own
    /// `program_name` wins.
    pub fn sent_connect_attrs(&self) -> Vec<(String, String)> {
        let mut v = vec![
            (
                PROGRAM_NAME.to_string(),
                self.program_name
                    .clone()
                    .unwrap_or_else(default_program_name),
            ),
            (
                STAUNCH_VERSION.to_string(),
                env!("STAUNCH_LIBRARY_VERSION").to_string(),
            ),
        ];
        for (k, val) in &self.connect_attrs {
            match v.iter_mut().find(|(k2, _)| k2 == k) {
                Some(slot) => slot.1 = val.clone(),
                None => v.push((k.clone(), val.clone())),
            }
        }
        v
    }

    /// Checks `connect_attrs`: names not reserved, none twice, no password
    /// among the values, and the whole within what the server accepts.
    /// Errors name the knob and the attribute, never a value.
    pub(crate) fn validate_connect_attrs(&self, passwords: &[&str]) -> Result<()> {
        for (i, (k, v)) in self.connect_attrs.iter().enumerate() {
            if k.is_empty() {
                return Err(Error::config(
                    "connect_attrs: an attribute has an empty name (write name:value,name:value)",
                ));
            }
            if passwords.iter().any(|p| !p.is_empty() && k.contains(p)) {
                return Err(Error::config(format!(
                    "connect_attrs: the name of attribute {} holds a password of this \
                     configuration: connection attributes are readable by anyone who can read \
                     performance_schema",
                    i + 1
                )));
            }
            if k.contains([',', ':']) {
                return Err(Error::config(format!(
                    "connect_attrs: the attribute name {k:?} contains ',' or ':' (names and values \
                     are separated by them: name:value,name:value)"
                )));
            }
            if v.contains(',') {
                return Err(Error::config(format!(
                    "connect_attrs: the value of attribute {k:?} contains ',' (which separates \
                     attributes: name:value,name:value)"
                )));
            }
            if k.starts_with('_') {
                return Err(Error::config(format!(
                    "connect_attrs: the attribute name {k:?} starts with '_', which MySQL reserves \
                     for the client library's own attributes (_client_name, _pid, ...)"
                )));
            }
            if k == STAUNCH_VERSION {
                return Err(Error::config(format!(
                    "connect_attrs: {STAUNCH_VERSION} is staunch's own attribute (its version)"
                )));
            }
            if k.to_ascii_lowercase().contains("password") {
                return Err(Error::config(format!(
                    "connect_attrs: the attribute name {k:?} names a password: connection \
                     attributes are readable by anyone who can read performance_schema"
                )));
            }
            if passwords.iter().any(|p| !p.is_empty() && v.contains(p)) {
                return Err(Error::config(format!(
                    "connect_attrs: the value of attribute {k:?} holds a password of this \
                     configuration: connection attributes are readable by anyone who can read \
                     performance_schema"
                )));
            }
            if self.connect_attrs[..i].iter().any(|(k2, _)| k2 == k) {
                return Err(Error::config(format!(
                    "connect_attrs: the attribute {k:?} is given twice"
                )));
            }
        }
        if let Some(name) = &self.program_name {
            if passwords.iter().any(|p| !p.is_empty() && name.contains(p)) {
                return Err(Error::config(
                    "program_name holds a password of this configuration: it is sent as a \
                     connection attribute, readable by anyone who can read performance_schema",
                ));
            }
        }
        let size: usize = self
            .sent_connect_attrs()
            .iter()
            .map(|(k, v)| lenenc_size(k.len()) + lenenc_size(v.len()))
            .sum::<usize>()
            + CRATE_ATTRS_SIZE;
        if size > MAX_CONNECT_ATTRS_SIZE {
            return Err(Error::config(format!(
                "connect_attrs: the connection attributes take {size} bytes, more than the \
                 {MAX_CONNECT_ATTRS_SIZE} a server accepts (64 KiB in all, the client's own \
                 included)"
            )));
        }
        Ok(())
    }

    /// Checks the TLS knobs together, and that each file exists and holds
    /// what it should (PEM). Key material is read but never printed.
    pub(crate) fn validate_tls(&self) -> Result<()> {
        let files = [
            ("tls_ca", self.tls_ca.is_some()),
            ("tls_cert", self.tls_cert.is_some()),
            ("tls_key", self.tls_key.is_some()),
            ("tls_fingerprint", self.tls_fingerprint.is_some()),
        ];
        if let Some(p) = &self.server_public_key {
            if !p.is_file() {
                return Err(Error::config(format!(
                    "server_public_key: {} is not a readable file",
                    p.display()
                )));
            }
        }
        if self.tls_mode == TlsMode::Disabled {
            if let Some((knob, _)) = files.iter().find(|(_, set)| *set) {
                return Err(Error::config(format!(
                    "{knob} is set but tls_mode is disabled (the default): set tls_mode \
                     (e.g. verify_identity) to use TLS"
                )));
            }
            return Ok(());
        }
        match (&self.tls_cert, &self.tls_key) {
            (Some(_), None) => {
                return Err(Error::config(
                    "tls_cert is set without tls_key: a client certificate needs its private key",
                ))
            }
            (None, Some(_)) => {
                return Err(Error::config(
                    "tls_key is set without tls_cert: a client private key needs its certificate",
                ))
            }
            _ => {}
        }
        if self.tls_mode == TlsMode::VerifyCa
            && self.tls_ca.is_none()
            && self.tls_fingerprint.is_none()
        {
            return Err(Error::config(
                "tls_mode=verify_ca needs tls_ca (the PEM file of the CA that signed the server's certificate, or the server's own certificate) or tls_fingerprint",
            ));
        }
        if let Some(sock) = &self.socket {
            if self.tls_mode != TlsMode::Preferred {
                return Err(Error::config(format!(
                    "tls_mode={} cannot be used with socket={sock}: connections through a unix \
                     socket are never encrypted (use TCP, or tls_mode=preferred or disabled)",
                    self.tls_mode
                )));
            }
        }
        if let Some(ca) = &self.tls_ca {
            check_pem(ca, "tls_ca", PemWant::Certificates)?;
        }
        if let Some(cert) = &self.tls_cert {
            check_pem(cert, "tls_cert", PemWant::Certificates)?;
        }
        if let Some(key) = &self.tls_key {
            check_pem(key, "tls_key", PemWant::PrivateKey)?;
        }
        // The rest (a fingerprint's form, a key that is not the
        // certificate's, a host verify_identity cannot check) is found
        // when the first connection is made (`connect::Prepared`), a
        // permanent error naming the knob.
        Ok(())
    }

    /// The TLS knobs, read: None when `tls_mode` is `disabled`. Files are
    /// read now; the errors name the knob.
    pub(crate) fn tls_settings(&self) -> Result<Option<TlsSettings>> {
        let verify = match self.tls_mode {
            TlsMode::Disabled => return Ok(None),
            TlsMode::Preferred | TlsMode::Required => Verify::None,
            TlsMode::VerifyCa => Verify::Ca,
            TlsMode::VerifyIdentity => Verify::Identity,
        };
        let read = |knob: &str, p: &Option<PathBuf>| -> Result<Option<Pem>> {
            p.as_deref()
                .map(|p| Pem::read(knob, p))
                .transpose()
                .map_err(|e| Error::config(e.to_string()))
        };
        let mut s = TlsSettings::new(verify, self.host.clone());
        s.ca = read("tls_ca", &self.tls_ca)?;
        s.cert = read("tls_cert", &self.tls_cert)?;
        s.key = read("tls_key", &self.tls_key)?;
        s.fingerprints = self.tls_fingerprint.clone();
        Ok(Some(s))
    }

    /// The TLS configuration every connection of this configuration uses
    /// (None: `tls_mode=disabled`).
    pub(crate) fn tls(&self) -> Result<Option<Tls>> {
        match self.tls_settings()? {
            None => Ok(None),
            Some(s) => Tls::new(&s)
                .map(Some)
                .map_err(|e| Error::config(e.to_string())),
        }
    }

    /// The server's RSA public key (`server_public_key`), read.
    pub(crate) fn server_public_key_pem(&self) -> Result<Option<Vec<u8>>> {
        match &self.server_public_key {
            None => Ok(None),
            Some(p) => std::fs::read(p).map(Some).map_err(|e| {
                Error::config(format!(
                    "server_public_key: cannot read {}: {e}",
                    p.display()
                ))
            }),
        }
    }
}

/// The attribute staunch sends its version under (kept beside
/// `_client_version`, which says the same, for dashboards that read it
/// from staunch 1.x).
pub const STAUNCH_VERSION: &str = "staunch_version";

/// The attribute naming the program, as libmysqlclient names it.
const PROGRAM_NAME: &str = "program_name";

/// The most a server accepts of connection attributes in all (MariaDB and
/// MySQL refuse a handshake whose attributes are longer).
pub(crate) const MAX_CONNECT_ATTRS_SIZE: usize = 65535;

/// Room kept for the client's own attributes (`_client_name`,
/// `_client_version`, `_os`, `_pid`, `_platform`: about 100 bytes).
const CRATE_ATTRS_SIZE: usize = 256;

/// The bytes of a length-encoded string of `n` bytes.
fn lenenc_size(n: usize) -> usize {
    n + match n {
        0..=250 => 1,
        251..=0xffff => 3,
        0x1_0000..=0xff_ffff => 4,
        _ => 9,
    }
}

/// `program_name`'s default: the program's file name (the last part of
/// `argv[0]`), as libmysqlclient's clients send it; empty when there is
/// none.
pub(crate) fn default_program_name() -> String {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        std::env::args_os()
            .next()
            .map(|a| {
                let p = PathBuf::from(a);
                p.file_name()
                    .unwrap_or(p.as_os_str())
                    .to_string_lossy()
                    .into_owned()
            })
            .unwrap_or_default()
    })
    .clone()
}

/// Parses the knob `connect_attrs`: `name:value,name:value` (the value
/// ends at the next `,`; it may hold `:`); empty for none.
pub(crate) fn parse_connect_attrs(v: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for entry in v.split(',') {
        if entry.trim().is_empty() {
            if v.trim().is_empty() {
                break;
            }
            return Err(Error::config(
                "connect_attrs has an empty entry (write name:value,name:value)",
            ));
        }
        let (k, val) = entry.split_once(':').ok_or_else(|| {
            Error::config(format!(
                "connect_attrs: the entry {entry:?} has no ':' (write name:value,name:value)"
            ))
        })?;
        out.push((k.trim().to_owned(), val.to_owned()));
    }
    Ok(out)
}

enum PemWant {
    Certificates,
    PrivateKey,
}

/// The largest TLS file read (a full public CA bundle is about 0.2 MiB).
const MAX_PEM_FILE: u64 = 4 << 20;

/// Reads `path` and checks it holds PEM certificates (at least one) or a PEM
/// private key. The error names the knob and the file, never the contents.
fn check_pem(path: &Path, knob: &str, want: PemWant) -> Result<()> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use std::io::Read;
    let shown = path.display();
    let cannot = |e: std::io::Error| Error::config(format!("{knob}: cannot read {shown}: {e}"));
    // Checked before opening: opening a FIFO blocks, and reading a device
    // such as /dev/zero never ends.
    if !std::fs::metadata(path).map_err(cannot)?.is_file() {
        return Err(Error::config(format!(
            "{knob}: {shown} is not a regular file"
        )));
    }
    let mut data = Vec::new();
    std::fs::File::open(path)
        .map_err(cannot)?
        .take(MAX_PEM_FILE + 1)
        .read_to_end(&mut data)
        .map_err(cannot)?;
    if data.len() as u64 > MAX_PEM_FILE {
        return Err(Error::config(format!(
            "{knob}: {shown} is larger than {} MiB, too large for a PEM file",
            MAX_PEM_FILE >> 20
        )));
    }
    match want {
        PemWant::Certificates => {
            let mut n = 0;
            for c in CertificateDer::pem_slice_iter(&data) {
                if c.is_err() {
                    return Err(Error::config(format!(
                        "{knob}: {shown} has a malformed PEM certificate"
                    )));
                }
                n += 1;
            }
            if n == 0 {
                return Err(Error::config(format!(
                    "{knob}: {shown} holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)"
                )));
            }
        }
        PemWant::PrivateKey => {
            // Whatever the parser says may quote the file: say only what is wrong.
            if PrivateKeyDer::from_pem_slice(&data).is_err() {
                return Err(Error::config(format!(
                    "{knob}: {shown} holds no PEM private key (expected -----BEGIN PRIVATE KEY-----, \
                     -----BEGIN RSA PRIVATE KEY----- or -----BEGIN EC PRIVATE KEY-----)"
                )));
            }
        }
    }
    Ok(())
}

// The password never appears in Debug output (nor anywhere else we print).
impl fmt::Debug for ConnectConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectConfig")
            .field("endpoint", &self.endpoint())
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("database", &self.database)
            .field("query_timeout", &self.query_timeout)
            .field("liveness_threshold", &self.liveness_threshold)
            .field("reset_on_return", &self.reset_on_return)
            .field("init_sql", &self.init_sql)
            .field("found_rows", &self.found_rows)
            .field("autocommit", &self.autocommit)
            .field("interpolate_params", &self.interpolate_params)
            .field("text_without_params", &self.text_without_params)
            .field("tls_mode", &self.tls_mode)
            .field("tls_ca", &self.tls_ca)
            .field("tls_cert", &self.tls_cert)
            .field("tls_key", &self.tls_key)
            .field("tls_fingerprint", &self.tls_fingerprint)
            .field("server_public_key", &self.server_public_key)
            .field("get_server_public_key", &self.get_server_public_key)
            .field("allow_cleartext_password", &self.allow_cleartext_password)
            .field("connect_attrs", &self.connect_attrs)
            .field("program_name", &self.program_name)
            .finish()
    }
}
