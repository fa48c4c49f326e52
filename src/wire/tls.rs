//! TLS policy: what the client trusts, with the meanings of MySQL's
//! `--ssl-mode`, and a sentence for every refusal.
//!
//! [`Tls::new`] turns the client's settings ([`TlsSettings`]: the knobs
//! `tls_mode`, `tls_ca`, `tls_cert`, `tls_key` and `tls_fingerprint`) into
//! the rustls configuration a session starts TLS with. Its certificate
//! verifier is staunch's own, because rustls' (and the `mysql` crate's)
//! cannot mean what MySQL means:
//!
//! - [`Verify::None`] (`tls_mode=required`, `preferred`): any certificate,
//!   but the handshake's signatures are still checked against the key the
//!   certificate holds, so the session is bound to whoever showed it.
//! - [`Verify::Ca`] (`verify_ca`): the chain must end at a certificate of
//!   `tls_ca`, and nothing else: no public root is ever trusted (the crate
//!   always added them). The name is not checked.
//! - [`Verify::Identity`] (`verify_identity`): `tls_ca`, or the bundled
//!   Mozilla roots when none is given; and the URL's host must be one of
//!   the certificate's names (DNS or IP subjectAltName).
//!
//! In both checking modes a server certificate that *is* one of the
//! `tls_ca` certificates (the same bytes) is accepted within its validity
//! period, whatever its basic constraints: that is how a self-signed server
//! certificate is pinned. webpki refuses a `CA:TRUE` certificate as an end
//! entity (`CaUsedAsEndEntity`) even when it is itself the trust anchor,
//! and a `CA:FALSE` one cannot anchor its own chain (its issuer is another
//! name), so the pin is decided here, before webpki is asked, from the
//! certificate's own validity dates.
//!
//! `tls_fingerprint` pins by SHA-256 instead, and then, as MariaDB
//! Connector/C does (`ma_pvio_tls_verify_server_cert`: a fingerprint
//! replaces the trust check, the validity period is still checked), the
//! chain is not otherwise verified; in `verify_identity` the name still is
//! (Connector/C skips it; a caller who asked for the name gets it).
//!
//! A refusal travels through rustls as an error it does not read, and comes
//! out of the session's set-up as [`WireError::Tls`] with the sentence
//! made here, naming the cause and the knob.

use std::fmt;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_cert_signed_by_trust_anchor, verify_server_name};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};
use sha2::{Digest, Sha256};

use crate::wire::error::WireError;
use crate::wire::stream::Tls;

/// How much of the server's certificate is checked (knob `tls_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verify {
    /// Nothing but the handshake's signatures (`required`, `preferred`).
    /// A `tls_ca` given is read (a bad file is still an error) and not used,
    /// as MySQL's client does with `--ssl-ca` under `REQUIRED`.
    None,
    /// The chain ends at a `tls_ca` certificate (`verify_ca`).
    Ca,
    /// `tls_ca` (or the bundled roots when there is none) and the host name
    /// (`verify_identity`).
    Identity,
}

impl Verify {
    fn mode(self) -> &'static str {
        match self {
            Verify::None => "tls_mode=required",
            Verify::Ca => "tls_mode=verify_ca",
            Verify::Identity => "tls_mode=verify_identity",
        }
    }
}

/// PEM text and where it came from (a file's path, usually), which errors
/// name. Its `Debug` shows the origin and the size, never the text (it may
/// be a private key).
#[derive(Clone)]
pub struct Pem {
    text: Vec<u8>,
    origin: String,
}

impl Pem {
    /// PEM text, with the name errors give it (`"/etc/db/ca.pem"`).
    pub fn new(text: impl Into<Vec<u8>>, origin: impl Into<String>) -> Pem {
        Pem {
            text: text.into(),
            origin: origin.into(),
        }
    }

    /// The file at `path`, for the knob `knob` (which an error names).
    pub fn read(knob: &str, path: &Path) -> Result<Pem, WireError> {
        match std::fs::read(path) {
            Ok(text) => Ok(Pem::new(text, path.display().to_string())),
            Err(e) => Err(WireError::Tls(format!(
                "cannot read {knob} ({}): {e}",
                path.display()
            ))),
        }
    }
}

impl fmt::Debug for Pem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pem({}, {} bytes)", self.origin, self.text.len())
    }
}

/// What a session's TLS is made of: the knobs, read.
#[derive(Clone, Debug)]
pub struct TlsSettings {
    /// What is checked.
    pub verify: Verify,
    /// The host the URL names (a DNS name or an IP address, an IPv6 one
    /// with or without brackets): the name `verify_identity` checks, and
    /// the SNI sent for a DNS name.
    pub host: String,
    /// `tls_ca`: the certificates trusted (one or more, PEM).
    pub ca: Option<Pem>,
    /// `tls_cert`: the client's certificate chain, its own first.
    pub cert: Option<Pem>,
    /// `tls_key`: the client certificate's private key.
    pub key: Option<Pem>,
    /// `tls_fingerprint`: SHA-256 fingerprints of the server's certificate
    /// as hex (colons between bytes allowed), several separated by commas;
    /// the certificate must match one. Connector/C takes one in
    /// `tls-peer-fingerprint` and several in a file
    /// (`tls-peer-fingerprint-list`, one a line); staunch's knobs are one
    /// URL parameter each, so a comma list stands for the file, with the
    /// same meaning (any one matches). Only SHA-256: Connector/C also
    /// takes SHA-1, too weak to pin with, and the hashes it tells apart by
    /// length would make a typo a different hash instead of an error.
    pub fingerprints: Option<String>,
}

impl TlsSettings {
    /// Settings that check `verify` for `host`, with no file and no
    /// fingerprint yet.
    pub fn new(verify: Verify, host: impl Into<String>) -> TlsSettings {
        TlsSettings {
            verify,
            host: host.into(),
            ca: None,
            cert: None,
            key: None,
            fingerprints: None,
        }
    }
}

impl Tls {
    /// The rustls configuration for `s`, with staunch's verifier and the
    /// `ring` provider, and the server name for the handshake. Each bad
    /// setting is a [`WireError::Tls`] naming its knob: a file that holds
    /// no certificate or no key, a key without a certificate (or the other
    /// way round), a key that is not the certificate's, a fingerprint that
    /// is not 64 hex digits, `verify_ca` with neither `tls_ca` nor
    /// `tls_fingerprint`, a host that is no name `verify_identity` can
    /// check.
    pub fn new(s: &TlsSettings) -> Result<Tls, WireError> {
        let verifier = Verifier::new(s)?;
        let server_name = verifier.server_name.clone();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| WireError::Tls(format!("cannot set up TLS: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier));
        let config = match (&s.cert, &s.key) {
            (None, None) => builder.with_no_client_auth(),
            (Some(_), None) => {
                return Err(WireError::Tls(
                    "tls_cert is given without tls_key: a client certificate needs its private key"
                        .into(),
                ))
            }
            (None, Some(_)) => {
                return Err(WireError::Tls(
                    "tls_key is given without tls_cert: a private key needs its certificate".into(),
                ))
            }
            (Some(cert), Some(key)) => {
                let chain = certificates("tls_cert", cert)?;
                let key = private_key(key)?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| client_cert_refused(e, cert, s.key.as_ref()))?
            }
        };
        Ok(Tls {
            config: Arc::new(config),
            server_name,
        })
    }
}

/// Why rustls would not take the client certificate and key. Its text
/// never carries key material (a parse error of the key is not passed on).
fn client_cert_refused(e: rustls::Error, cert: &Pem, key: Option<&Pem>) -> WireError {
    let key = key.map_or("", |k| k.origin.as_str());
    WireError::Tls(match e {
        rustls::Error::InconsistentKeys(_) => format!(
            "tls_key ({key}) is not the private key of tls_cert ({})",
            cert.origin
        ),
        _ => format!(
            "tls_key ({key}) is a kind of private key the TLS library cannot sign with \
             (RSA, ECDSA P-256/P-384 and Ed25519 are supported)"
        ),
    })
}

/// The certificates of a PEM file: at least one, each readable.
fn certificates(knob: &str, pem: &Pem) -> Result<Vec<CertificateDer<'static>>, WireError> {
    let mut out = Vec::new();
    for c in CertificateDer::pem_slice_iter(&pem.text) {
        match c {
            Ok(c) => out.push(c),
            Err(e) => {
                return Err(WireError::Tls(format!(
                    "{knob} ({}) is not readable PEM: {e}",
                    pem.origin
                )))
            }
        }
    }
    if out.is_empty() {
        return Err(WireError::Tls(format!(
            "{knob} ({}) holds no certificate (PEM \"BEGIN CERTIFICATE\" blocks)",
            pem.origin
        )));
    }
    for (i, c) in out.iter().enumerate() {
        if let Err(e) = webpki::EndEntityCert::try_from(c) {
            return Err(WireError::Tls(format!(
                "{knob} ({}): certificate {} of {} cannot be read: {e}",
                pem.origin,
                i + 1,
                out.len()
            )));
        }
    }
    Ok(out)
}

/// The private key of a PEM file. The parser's own error is not passed
/// on: it can quote the key's bytes.
fn private_key(pem: &Pem) -> Result<PrivateKeyDer<'static>, WireError> {
    PrivateKeyDer::from_pem_slice(&pem.text).map_err(|_| {
        WireError::Tls(format!(
            "tls_key ({}) holds no readable private key (PEM \"BEGIN PRIVATE KEY\", \
             \"BEGIN RSA PRIVATE KEY\" or \"BEGIN EC PRIVATE KEY\")",
            pem.origin
        ))
    })
}

/// `tls_fingerprint`'s text: SHA-256 digests, hex with optional colons,
/// separated by commas (spaces around them ignored).
fn parse_fingerprints(text: &str) -> Result<Vec<[u8; 32]>, WireError> {
    let mut out = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        let bad = || {
            WireError::Tls(format!(
                "tls_fingerprint {item:?} is not a SHA-256 fingerprint: 64 hex digits, \
                 colons between bytes allowed (openssl x509 -noout -fingerprint -sha256), \
                 several separated by commas"
            ))
        };
        let digits: Vec<u8> = item.bytes().filter(|&b| b != b':').collect();
        if digits.len() != 64 || item.starts_with(':') || item.ends_with(':') {
            return Err(bad());
        }
        let mut fp = [0u8; 32];
        for (i, pair) in digits.chunks_exact(2).enumerate() {
            let hi = hex_value(pair[0]).ok_or_else(bad)?;
            let lo = hex_value(pair[1]).ok_or_else(bad)?;
            fp[i] = hi << 4 | lo;
        }
        out.push(fp);
    }
    Ok(out)
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// A fingerprint as openssl prints it (`AB:CD:...`).
fn colon_hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(':');
        }
        s.push_str(&format!("{b:02X}"));
    }
    s
}

/// The server name of `host` for rustls: an IP address, else a DNS name.
/// A host that is neither (a name with characters DNS does not allow) is
/// an error only where the name is checked; elsewhere the session goes
/// without SNI, which MySQL servers do not use.
fn server_name(verify: Verify, host: &str) -> Result<ServerName<'static>, WireError> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(ServerName::from(ip));
    }
    match ServerName::try_from(bare.to_string()) {
        Ok(name) => Ok(name),
        Err(_) if verify != Verify::Identity => Ok(ServerName::from(IpAddr::from([0u8, 0, 0, 0]))),
        Err(_) => Err(WireError::Tls(format!(
            "the host {host:?} is neither a DNS name nor an IP address, so \
             tls_mode=verify_identity cannot check it against the server's certificate"
        ))),
    }
}

/// A refusal of the server's certificate: the sentence, carried through
/// rustls (as `CertificateError::Other`) to [`WireError::Tls`].
#[derive(Debug)]
pub(crate) struct Refusal(pub(crate) String);

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

fn refuse(sentence: String) -> rustls::Error {
    rustls::Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(Arc::new(
        Refusal(sentence),
    ))))
}

/// The text a TLS failure reaches the caller with: our own sentence for a
/// certificate this module refused; for an alert from the server (it
/// refused the handshake, or our certificate), what that means in knobs;
/// rustls' own words otherwise.
pub(crate) fn failure_text(e: &rustls::Error) -> String {
    use rustls::AlertDescription as A;
    match e {
        rustls::Error::InvalidCertificate(CertificateError::Other(o)) => {
            match o.0.downcast_ref::<Refusal>() {
                Some(r) => r.0.clone(),
                None => format!("the server's certificate was refused: {o}"),
            }
        }
        rustls::Error::InvalidCertificate(c) => {
            format!("the server's certificate was refused: {c:?}")
        }
        rustls::Error::AlertReceived(
            a @ (A::BadCertificate
            | A::UnsupportedCertificate
            | A::CertificateRevoked
            | A::CertificateExpired
            | A::CertificateUnknown
            | A::UnknownCA
            | A::AccessDenied
            | A::CertificateRequired
            | A::DecryptError),
        ) => format!(
            "the server refused our client certificate (TLS alert {a:?}): check that tls_cert \
             is signed by a CA in the server's ssl_ca and tls_key is its key, or, if no \
             tls_cert is given, that the user needs none"
        ),
        rustls::Error::AlertReceived(a) => {
            format!("the server refused the TLS handshake (TLS alert {a:?})")
        }
        other => format!("TLS failed: {other}"),
    }
}

/// Staunch's certificate verifier (see the module's documentation).
struct Verifier {
    verify: Verify,
    /// The anchors chains must end at: `tls_ca`'s certificates, or, for
    /// [`Verify::Identity`] without `tls_ca`, the bundled Mozilla roots;
    /// empty for [`Verify::None`], which checks no chain.
    roots: RootCertStore,
    /// `tls_ca`'s certificates as given: a server certificate equal to one
    /// is pinned.
    pins: Vec<CertificateDer<'static>>,
    /// `tls_ca`'s origin and what it holds (`"ca.pem: CN=staunch test
    /// CA"`), for refusals.
    ca_named: Option<String>,
    /// `tls_fingerprint`'s digests.
    fingerprints: Vec<[u8; 32]>,
    host: String,
    server_name: ServerName<'static>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl fmt::Debug for Verifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Verifier")
            .field("verify", &self.verify)
            .field("roots", &self.roots.len())
            .field("ca", &self.ca_named)
            .field("fingerprints", &self.fingerprints.len())
            .field("host", &self.host)
            .finish()
    }
}

impl Verifier {
    fn new(s: &TlsSettings) -> Result<Verifier, WireError> {
        let fingerprints = match &s.fingerprints {
            Some(text) => parse_fingerprints(text)?,
            None => Vec::new(),
        };
        let pins = match &s.ca {
            Some(ca) => certificates("tls_ca", ca)?,
            None => Vec::new(),
        };
        if s.verify == Verify::Ca && pins.is_empty() && fingerprints.is_empty() {
            return Err(WireError::Tls(
                "tls_mode=verify_ca needs tls_ca (the CA that signed the server's certificate, \
                 or that certificate itself) or tls_fingerprint"
                    .into(),
            ));
        }
        let mut roots = RootCertStore::empty();
        match s.verify {
            Verify::None => {}
            Verify::Identity if pins.is_empty() => {
                roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            }
            Verify::Ca | Verify::Identity => {
                for (i, c) in pins.iter().enumerate() {
                    roots.add(c.clone()).map_err(|e| {
                        WireError::Tls(format!(
                            "tls_ca ({}): certificate {} cannot be a trust anchor: {e}",
                            s.ca.as_ref().map_or("", |c| c.origin.as_str()),
                            i + 1
                        ))
                    })?;
                }
            }
        }
        let ca_named = s.ca.as_ref().map(|ca| {
            let names: Vec<String> = pins.iter().map(|c| describe(c)).collect();
            format!("{}: {}", ca.origin, names.join("; "))
        });
        let server_name = server_name(s.verify, &s.host)?;
        Ok(Verifier {
            verify: s.verify,
            roots,
            pins,
            ca_named,
            fingerprints,
            host: s.host.clone(),
            server_name,
            algorithms: rustls::crypto::ring::default_provider().signature_verification_algorithms,
        })
    }

    /// Within its validity dates, for a certificate accepted without a
    /// chain (a pin).
    fn check_period(&self, cert: &CertificateDer<'_>, now: UnixTime) -> Result<(), rustls::Error> {
        let Some(dates) = der::validity(cert) else {
            return Err(refuse(format!(
                "the server's certificate ({}) has validity dates that cannot be read",
                describe(cert)
            )));
        };
        let now = now.as_secs();
        if now < dates.0 {
            return Err(refuse(format!(
                "the server's certificate ({}) is not valid before {} (its clock or ours is wrong)",
                describe(cert),
                date(dates.0)
            )));
        }
        if now > dates.1 {
            return Err(refuse(format!(
                "the server's certificate ({}) expired on {}",
                describe(cert),
                date(dates.1)
            )));
        }
        Ok(())
    }

    /// The host is one of the certificate's names.
    fn check_name(
        &self,
        cert: &CertificateDer<'_>,
        parsed: &ParsedCertificate<'_>,
        name: &ServerName<'_>,
    ) -> Result<(), rustls::Error> {
        verify_server_name(parsed, name).map_err(|e| {
            let names = match &e {
                rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
                    presented,
                    ..
                }) if !presented.is_empty() => presented
                    .iter()
                    .map(|p| presented_name(p))
                    .collect::<Vec<_>>()
                    .join(", "),
                rustls::Error::InvalidCertificate(
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. },
                ) => "no host (it has no subjectAltName)".to_string(),
                other => {
                    return refuse(format!(
                        "the server's certificate ({}) cannot be checked against {}: {other}",
                        describe(cert),
                        self.host
                    ))
                }
            };
            refuse(format!(
                "the server's certificate ({}) names {names}, not {} \
                 (tls_mode=verify_identity checks the URL's host)",
                describe(cert),
                self.host
            ))
        })
    }

    /// A chain webpki refused, in words.
    fn explain(&self, e: rustls::Error, cert: &CertificateDer<'_>) -> rustls::Error {
        let who = describe(cert);
        let mode = self.verify.mode();
        // What was trusted: tls_ca, or (verify_identity without it) the
        // bundled roots.
        let trusted = match &self.ca_named {
            Some(ca) => format!("tls_ca={ca}"),
            None => "the bundled Mozilla roots".to_string(),
        };
        refuse(match e {
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
                match &self.ca_named {
                    Some(_) => format!(
                        "the server's certificate ({who}) is not signed by {trusted}; {mode} \
                         trusts tls_ca only"
                    ),
                    None => format!(
                        "the server's certificate ({who}) is not signed by a public CA \
                         ({mode} without tls_ca trusts only the bundled Mozilla roots): \
                         set tls_ca to the CA that signed it"
                    ),
                }
            }
            rustls::Error::InvalidCertificate(CertificateError::Other(o))
                if matches!(
                    o.0.downcast_ref::<webpki::Error>(),
                    Some(webpki::Error::CaUsedAsEndEntity)
                ) =>
            {
                format!(
                    "the server's certificate ({who}) is a CA certificate (CA:TRUE) and not \
                     one of {trusted}: to pin it, put that very certificate in tls_ca, or its \
                     SHA-256 in tls_fingerprint"
                )
            }
            other => self.chain_failure(other, cert, &who, &trusted),
        })
    }

    fn chain_failure(
        &self,
        e: rustls::Error,
        cert: &CertificateDer<'_>,
        who: &str,
        trusted: &str,
    ) -> String {
        let dates = der::validity(cert);
        match e {
            rustls::Error::InvalidCertificate(CertificateError::ExpiredContext {
                not_after,
                ..
            }) => format!(
                "the server's certificate ({who}) expired on {}",
                date(not_after.as_secs())
            ),
            rustls::Error::InvalidCertificate(CertificateError::NotValidYetContext {
                not_before,
                ..
            }) => format!(
                "the server's certificate ({who}) is not valid before {} (its clock or ours \
                 is wrong)",
                date(not_before.as_secs())
            ),
            // webpki's InvalidCertValidity: a notAfter before the notBefore
            // (webpki says which certificate of the chain only by this).
            rustls::Error::InvalidCertificate(CertificateError::Expired) => match dates {
                Some((from, until)) if until < from => format!(
                    "the server's certificate ({who}) has a validity period that ends ({}) \
                     before it begins ({})",
                    date(until),
                    date(from)
                ),
                _ => format!(
                    "a certificate of the server's chain ({who}) has a validity period that \
                     ends before it begins"
                ),
            },
            rustls::Error::InvalidCertificate(CertificateError::Other(o)) => {
                match o.0.downcast_ref::<webpki::Error>() {
                    Some(w) => format!(
                        "the server's certificate ({who}) does not verify against {trusted}: \
                         {w:?}"
                    ),
                    None => format!(
                        "the server's certificate ({who}) does not verify against {trusted}: {o}"
                    ),
                }
            }
            rustls::Error::InvalidCertificate(c) => {
                format!("the server's certificate ({who}) does not verify against {trusted}: {c:?}")
            }
            other => {
                format!(
                    "the server's certificate ({who}) does not verify against {trusted}: {other}"
                )
            }
        }
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let parsed = ParsedCertificate::try_from(end_entity)
            .map_err(|e| refuse(format!("the server's certificate cannot be read: {e}")))?;
        if !self.fingerprints.is_empty() {
            // Not compared in constant time: the digest is of what the
            // server sent in clear, and the pins are no secret either.
            let digest = Sha256::digest(end_entity.as_ref());
            if !self.fingerprints.iter().any(|f| f[..] == digest[..]) {
                return Err(refuse(format!(
                    "the server's certificate ({}, SHA-256 {}) matches no tls_fingerprint",
                    describe(end_entity),
                    colon_hex(&digest)
                )));
            }
            self.check_period(end_entity, now)?;
            if self.verify == Verify::Identity {
                self.check_name(end_entity, &parsed, server_name)?;
            }
            return Ok(ServerCertVerified::assertion());
        }
        if self.verify == Verify::None {
            return Ok(ServerCertVerified::assertion());
        }
        if self.pins.iter().any(|p| p.as_ref() == end_entity.as_ref()) {
            self.check_period(end_entity, now)?;
        } else {
            verify_server_cert_signed_by_trust_anchor(
                &parsed,
                &self.roots,
                intermediates,
                now,
                self.algorithms.all,
            )
            .map_err(|e| self.explain(e, end_entity))?;
        }
        if self.verify == Verify::Identity {
            self.check_name(end_entity, &parsed, server_name)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// A certificate in a few words: its subject's common name and its
/// issuer's (`"CN=localhost, issued by CN=staunch test CA"`), or
/// `"self-signed"`.
fn describe(cert: &CertificateDer<'_>) -> String {
    match der::names(cert) {
        Some(n) if n.self_issued => format!("{}, self-signed", n.subject),
        Some(n) => format!("{}, issued by {}", n.subject, n.issuer),
        None => "a certificate whose names cannot be read".to_string(),
    }
}

/// A name webpki presents (`DnsName("db.example")`, `IpAddress(10.0.0.1)`)
/// as the name alone.
fn presented_name(p: &str) -> String {
    let inner = match (p.find('('), p.strip_suffix(')')) {
        (Some(open), Some(body)) => &body[open + 1..],
        _ => p,
    };
    inner.trim_matches('"').to_string()
}

/// A Unix time as a UTC date and time (`"2036-12-04 11:03:56 UTC"`).
fn date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// The few fields of a certificate this module reads itself (webpki keeps
/// them private): issuer and subject common names, and the validity
/// dates. A small DER reader; every length is checked, and anything
/// unexpected is `None`.
mod der {
    /// One TLV: its tag, its contents, and what follows it.
    fn tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
        let (&tag, rest) = input.split_first()?;
        let (&first, rest) = rest.split_first()?;
        let (len, rest) = if first < 0x80 {
            (usize::from(first), rest)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 4 || rest.len() < n {
                return None;
            }
            let len = rest[..n]
                .iter()
                .fold(0usize, |acc, &b| acc << 8 | usize::from(b));
            (len, &rest[n..])
        };
        if rest.len() < len {
            return None;
        }
        Some((tag, &rest[..len], &rest[len..]))
    }

    const SEQUENCE: u8 = 0x30;

    /// The TBSCertificate's issuer, validity and subject, as DER.
    fn fields(cert: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
        let (tag, cert, _) = tlv(cert)?;
        if tag != SEQUENCE {
            return None;
        }
        let (tag, tbs, _) = tlv(cert)?;
        if tag != SEQUENCE {
            return None;
        }
        let mut rest = tbs;
        let (tag, _, after) = tlv(rest)?;
        if tag == 0xa0 {
            rest = after; // [0] version
        }
        let (_, _, rest) = tlv(rest)?; // serialNumber
        let (_, _, rest) = tlv(rest)?; // signature
        let (tag, issuer, rest) = tlv(rest)?;
        if tag != SEQUENCE {
            return None;
        }
        let (tag, validity, rest) = tlv(rest)?;
        if tag != SEQUENCE {
            return None;
        }
        let (tag, subject, _) = tlv(rest)?;
        if tag != SEQUENCE {
            return None;
        }
        Some((issuer, validity, subject))
    }

    /// A certificate's names, as its common names.
    pub(super) struct Names {
        /// `CN=...` (or `"no common name"`).
        pub(super) issuer: String,
        pub(super) subject: String,
        /// Issuer and subject are the same name (all of it, not only the
        /// common name).
        pub(super) self_issued: bool,
    }

    pub(super) fn names(cert: &[u8]) -> Option<Names> {
        let (issuer, _, subject) = fields(cert)?;
        Some(Names {
            issuer: common_name(issuer)?,
            subject: common_name(subject)?,
            self_issued: issuer == subject,
        })
    }

    /// The first common name of a Name (a SEQUENCE of SETs of
    /// SEQUENCE { OID, value }).
    fn common_name(mut name: &[u8]) -> Option<String> {
        const CN: &[u8] = &[0x55, 0x04, 0x03];
        while !name.is_empty() {
            let (_, set, rest) = tlv(name)?;
            name = rest;
            let mut set = set;
            while !set.is_empty() {
                let (_, atv, rest) = tlv(set)?;
                set = rest;
                let (tag, oid, value) = tlv(atv)?;
                if tag == 0x06 && oid == CN {
                    let (_, text, _) = tlv(value)?;
                    return Some(format!("CN={}", String::from_utf8_lossy(text)));
                }
            }
        }
        Some("no common name".to_string())
    }

    /// notBefore and notAfter, in seconds since the Unix epoch.
    pub(super) fn validity(cert: &[u8]) -> Option<(u64, u64)> {
        let (_, validity, _) = fields(cert)?;
        let (t1, before, rest) = tlv(validity)?;
        let (t2, after, _) = tlv(rest)?;
        Some((time(t1, before)?, time(t2, after)?))
    }

    /// UTCTime (`YYMMDDHHMMSSZ`, years 1950-2049) or GeneralizedTime
    /// (`YYYYMMDDHHMMSSZ`), as RFC 5280 has them.
    pub(super) fn time(tag: u8, text: &[u8]) -> Option<u64> {
        let digits = text.strip_suffix(b"Z")?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let n = |s: &[u8]| s.iter().fold(0u64, |a, &d| a * 10 + u64::from(d - b'0'));
        let (year, rest) = match (tag, digits.len()) {
            (0x17, 12) => {
                let yy = n(&digits[..2]);
                (if yy < 50 { 2000 + yy } else { 1900 + yy }, &digits[2..])
            }
            (0x18, 14) => (n(&digits[..4]), &digits[4..]),
            _ => return None,
        };
        let (month, day) = (n(&rest[..2]), n(&rest[2..4]));
        let (h, m, s) = (n(&rest[4..6]), n(&rest[6..8]), n(&rest[8..10]));
        if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
            return None;
        }
        if year < 1970 {
            return Some(0);
        }
        // Howard Hinnant's days-from-civil.
        let (y, mo) = if month <= 2 {
            (year - 1, month + 9)
        } else {
            (year, month - 3)
        };
        let era = y / 400;
        let yoe = y % 400;
        let doy = (153 * mo + 2) / 5 + day - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = (era * 146_097 + doe).checked_sub(719_468)?;
        Some(days * 86_400 + h * 3600 + m * 60 + s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_parse_with_or_without_colons_and_several() {
        let hex = "ab".repeat(32);
        let colons = vec!["AB"; 32].join(":");
        let got = parse_fingerprints(&format!("{hex}, {colons},{}", "01".repeat(32))).unwrap();
        assert_eq!(got, vec![[0xab; 32], [0xab; 32], [0x01; 32]]);
        for bad in [
            "",
            "ab",
            &"ab".repeat(20), // SHA-1's length: refused, not taken as SHA-1
            &"zz".repeat(32),
            &format!("{hex},"),
            &format!(":{hex}"),
            &"ab".repeat(33),
        ] {
            let e = parse_fingerprints(bad).unwrap_err().to_string();
            assert!(
                e.contains("tls_fingerprint") && e.contains("SHA-256"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn dates_both_ways() {
        assert_eq!(der::time(0x17, b"700101000000Z"), Some(0));
        assert_eq!(der::time(0x18, b"20361204110356Z"), Some(2_112_001_436));
        assert_eq!(date(2_112_001_436), "2036-12-04 11:03:56 UTC");
        assert_eq!(der::time(0x17, b"000229120000Z"), Some(951_825_600));
        assert_eq!(date(951_825_600), "2000-02-29 12:00:00 UTC");
        for bad in [&b"7001010000Z"[..], b"701301000000Z", b"70010100000aZ", b""] {
            assert_eq!(der::time(0x17, bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_short_or_foreign_certificate_reads_as_nothing() {
        for bad in [
            &[][..],
            &[0x30],
            &[0x30, 0x85, 1, 1, 1, 1, 1],
            &[0x30, 0x05, 0x30],
        ] {
            assert!(der::names(bad).is_none());
            assert_eq!(der::validity(bad), None);
        }
    }

    #[test]
    fn names_as_webpki_presents_them() {
        assert_eq!(
            presented_name("DnsName(\"db.staunch.test\")"),
            "db.staunch.test"
        );
        assert_eq!(presented_name("IpAddress(10.0.0.1)"), "10.0.0.1");
        assert_eq!(presented_name("plain"), "plain");
        assert_eq!(presented_name("("), "(");
    }

    #[test]
    fn a_pem_never_shows_its_text() {
        let p = Pem::new("-----BEGIN PRIVATE KEY-----\nhunter2\n", "key.pem");
        let s = format!("{p:?}");
        assert!(s.contains("key.pem") && !s.contains("hunter2"), "{s}");
    }

    #[test]
    fn the_hosts_name_for_rustls() {
        let ip = server_name(Verify::Identity, "[::1]").unwrap();
        assert!(matches!(ip, ServerName::IpAddress(_)), "{ip:?}");
        let dns = server_name(Verify::Identity, "db.staunch.test").unwrap();
        assert!(matches!(dns, ServerName::DnsName(_)), "{dns:?}");
        let e = server_name(Verify::Identity, "db host")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("verify_identity") && e.contains("db host"),
            "{e}"
        );
        assert!(server_name(Verify::Ca, "db host").is_ok());
    }

    /// The tests below use the certificates of `src/wire/testdata` and
    /// rustls' ring provider.
    mod with_certs {
        use super::*;

        const CA: &[u8] = include_bytes!("testdata/ca.pem");
        const OTHER_CA: &[u8] = include_bytes!("testdata/other-ca.pem");
        const LEAF: &[u8] = include_bytes!("testdata/leaf.pem");
        const LEAF_KEY: &[u8] = include_bytes!("testdata/leaf.key");
        const OTHER_KEY: &[u8] = include_bytes!("testdata/other.key");

        fn der_of(pem: &[u8]) -> CertificateDer<'static> {
            certificates("tls_ca", &Pem::new(pem, "x"))
                .unwrap()
                .remove(0)
        }

        fn settings(verify: Verify, ca: Option<&[u8]>) -> TlsSettings {
            TlsSettings {
                ca: ca.map(|c| Pem::new(c, "ca.pem")),
                ..TlsSettings::new(verify, "127.0.0.1")
            }
        }

        fn at(secs: u64) -> UnixTime {
            UnixTime::since_unix_epoch(std::time::Duration::from_secs(secs))
        }

        #[test]
        #[cfg_attr(miri, ignore = "ring: Miri cannot run its assembly")]
        fn verify_ca_trusts_exactly_tls_ca() {
            let v = Verifier::new(&settings(Verify::Ca, Some(CA))).unwrap();
            let want = vec![webpki::anchor_from_trusted_cert(&der_of(CA))
                .unwrap()
                .to_owned()];
            assert_eq!(v.roots.roots, want);
            // Two certificates in tls_ca: both, nothing more.
            let v = Verifier::new(&settings(Verify::Ca, Some(&[CA, OTHER_CA].concat()))).unwrap();
            assert_eq!(v.roots.len(), 2);
            let public = webpki_roots::TLS_SERVER_ROOTS;
            assert!(v.roots.roots.iter().all(|r| !public.contains(r)));
            // verify_identity: tls_ca only when given, the bundled roots
            // only when not; no verification: no anchors at all.
            let v = Verifier::new(&settings(Verify::Identity, Some(CA))).unwrap();
            assert_eq!(v.roots.roots, want);
            let v = Verifier::new(&settings(Verify::Identity, None)).unwrap();
            assert_eq!(v.roots.roots, public.to_vec());
            let v = Verifier::new(&settings(Verify::None, Some(CA))).unwrap();
            assert!(v.roots.is_empty());
        }

        #[test]
        #[cfg_attr(miri, ignore = "ring: Miri cannot run its assembly")]
        fn the_leaf_chains_to_its_ca_only() {
            let leaf = der_of(LEAF);
            let (from, _) = der::validity(&leaf).unwrap();
            let v = Verifier::new(&settings(Verify::Identity, Some(CA))).unwrap();
            let name = v.server_name.clone();
            v.verify_server_cert(&leaf, &[], &name, &[], at(from + 60))
                .expect("signed by tls_ca, named 127.0.0.1");
            let v = Verifier::new(&settings(Verify::Ca, Some(OTHER_CA))).unwrap();
            let e = v
                .verify_server_cert(&leaf, &[], &name, &[], at(from + 60))
                .unwrap_err();
            assert_eq!(
                failure_text(&e),
                "the server's certificate (CN=localhost, issued by CN=staunch fixture CA) is \
                 not signed by tls_ca=ca.pem: CN=staunch fixture other CA, self-signed; \
                 tls_mode=verify_ca trusts tls_ca only"
            );
        }

        #[test]
        #[cfg_attr(miri, ignore = "ring: Miri cannot run its assembly")]
        fn a_pin_is_checked_for_its_dates() {
            let v = Verifier::new(&settings(Verify::Ca, Some(CA))).unwrap();
            let ca = der_of(CA);
            let name = v.server_name.clone();
            let (from, until) = der::validity(&ca).unwrap();
            assert!(until > from + 36_000 * 86_400, "{from} {until}");
            v.verify_server_cert(&ca, &[], &name, &[], at(from + 60))
                .expect("the pinned CA:TRUE certificate");
            let e = v
                .verify_server_cert(&ca, &[], &name, &[], at(until + 1))
                .unwrap_err();
            assert_eq!(
                failure_text(&e),
                format!(
                    "the server's certificate (CN=staunch fixture CA, self-signed) expired on {}",
                    date(until)
                )
            );
            let e = v
                .verify_server_cert(&ca, &[], &name, &[], at(from - 1))
                .unwrap_err();
            assert!(failure_text(&e).contains("is not valid before"), "{e}");
            // A leaf signed by the CA, after its end: webpki's expiry, in
            // the same words.
            let leaf = der_of(LEAF);
            let (_, leaf_until) = der::validity(&leaf).unwrap();
            let e = v
                .verify_server_cert(&leaf, &[], &name, &[], at(leaf_until + 1))
                .unwrap_err();
            assert_eq!(
                failure_text(&e),
                format!(
                    "the server's certificate (CN=localhost, issued by CN=staunch fixture CA) \
                     expired on {}",
                    date(leaf_until)
                )
            );
        }

        #[test]
        #[cfg_attr(miri, ignore = "ring: Miri cannot run its assembly")]
        fn bad_settings_name_their_knob() {
            let key = |k: &[u8]| Some(Pem::new(k, "key.pem"));
            let cert = || Some(Pem::new(LEAF, "cert.pem"));
            let ca = |text: &str| Some(Pem::new(text, "ca.pem"));
            let cases: Vec<(TlsSettings, &str)> = vec![
                (
                    TlsSettings {
                        ca: ca(""),
                        ..TlsSettings::new(Verify::Ca, "h")
                    },
                    "tls_ca (ca.pem) holds no certificate",
                ),
                (
                    TlsSettings {
                        ca: ca("-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n"),
                        ..TlsSettings::new(Verify::Ca, "h")
                    },
                    "tls_ca (ca.pem) is not readable PEM",
                ),
                (
                    TlsSettings {
                        ca: ca("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
                        ..TlsSettings::new(Verify::None, "h")
                    },
                    "tls_ca (ca.pem): certificate 1 of 1 cannot be read",
                ),
                (
                    TlsSettings::new(Verify::Ca, "h"),
                    "tls_mode=verify_ca needs tls_ca",
                ),
                (
                    TlsSettings {
                        key: key(LEAF_KEY),
                        ..TlsSettings::new(Verify::None, "h")
                    },
                    "tls_key is given without tls_cert",
                ),
                (
                    TlsSettings {
                        cert: cert(),
                        ..TlsSettings::new(Verify::None, "h")
                    },
                    "tls_cert is given without tls_key",
                ),
                (
                    TlsSettings {
                        cert: cert(),
                        key: key(OTHER_KEY),
                        ..TlsSettings::new(Verify::None, "h")
                    },
                    "tls_key (key.pem) is not the private key of tls_cert (cert.pem)",
                ),
                (
                    TlsSettings {
                        cert: cert(),
                        key: key(LEAF),
                        ..TlsSettings::new(Verify::None, "h")
                    },
                    "tls_key (key.pem) holds no readable private key",
                ),
                (
                    TlsSettings {
                        fingerprints: Some("abc".into()),
                        ..TlsSettings::new(Verify::None, "h")
                    },
                    "tls_fingerprint \"abc\" is not a SHA-256 fingerprint",
                ),
                (
                    TlsSettings::new(Verify::Identity, "db host"),
                    "the host \"db host\" is neither a DNS name nor an IP address",
                ),
            ];
            for (s, want) in cases {
                let e = Tls::new(&s).unwrap_err();
                assert!(matches!(e, WireError::Tls(_)), "{e:?}");
                assert!(e.to_string().contains(want), "{want}: {e}");
            }
            let e = Pem::read("tls_ca", Path::new("/nonexistent/ca.pem")).unwrap_err();
            assert!(
                e.to_string()
                    .contains("cannot read tls_ca (/nonexistent/ca.pem)"),
                "{e}"
            );
            // A fingerprint alone is enough for verify_ca; the key's text is
            // in no Debug output.
            let tls = Tls::new(&TlsSettings {
                fingerprints: Some("00".repeat(32)),
                cert: cert(),
                key: key(LEAF_KEY),
                ..TlsSettings::new(Verify::Ca, "localhost")
            })
            .unwrap();
            let key_line = std::str::from_utf8(LEAF_KEY)
                .unwrap()
                .lines()
                .nth(1)
                .unwrap();
            let dbg = format!("{tls:?}");
            assert!(!dbg.contains(key_line), "{dbg}");
        }
    }
}
