//! The connect-time packets and the authentication arithmetic, taken from
//! `mysql_common` (the library under the `mysql` crate): the handshake
//! response, the SSL request, the auth switch request, the more-data
//! packet, the public-key request, the scramble functions of
//! `mysql_native_password`, `caching_sha2_password` and `client_ed25519`,
//! and RSA-OAEP. This module is the only one that names the library, so
//! that what staunch takes from it stays in view.
//!
//! Taking these rather than writing them: they are small, settled, and the
//! same bytes every MySQL client in Rust already sends; a second copy
//! would be one more place for a byte to be wrong.
//!
//! What is staunch's own here, each for a reason: the server's RSA key is
//! read by a checked PEM and DER reader (the library's `expect`s valid
//! PEM and indexes its DER unchecked: a server or a bad configuration
//! could panic it); the random seed of the OAEP padding is drawn from
//! rustls' `ring` provider beforehand (the library's draw `expect`s
//! success); and an ed25519 nonce is taken as sent (the library's
//! `plugin_data` drops a trailing NUL, which is the nonce's last byte one
//! time in 256). The greeting, OK and ERR packets are read by
//! [`crate::wire::parse`] and the handshake module as every other packet
//! of this layer is: the same code as the text protocol's, which skips
//! MariaDB's progress reports.

use mysql_common::constants::{CapabilityFlags, MariadbCapabilities};
use mysql_common::crypto::rsa::{Pkcs1OaepPadding, PublicKey, Rng};
use mysql_common::io::ParseBuf;
use mysql_common::num_bigint::BigUint;
use mysql_common::packets::caching_sha2_password::PublicKeyRequest;
use mysql_common::packets::{
    AuthMoreData, AuthPlugin as LibPlugin, AuthSwitchRequest, HandshakeResponse, SslRequest,
};
use mysql_common::proto::{MyDeserialize, MySerialize};
use mysql_common::scramble::{create_response_for_ed25519, scramble_native, scramble_sha256};

use crate::wire::error::WireError;

/// The largest packet this client says it will accept (1 GiB, the
/// protocol's maximum); the framer enforces its own limit.
const MAX_PACKET: u32 = 1 << 30;

/// `utf8mb4_general_ci`, the connection's character set and collation.
const UTF8MB4_GENERAL_CI: u8 = 45;

/// The server version the library's handshake response takes only to pick
/// the collation: any from 5.5.3 on gives utf8mb4, which every server this
/// layer speaks to has.
const UTF8MB4_SINCE: (u16, u16, u16) = (5, 5, 3);

/// `Protocol::SSLRequest` with the capability flags `caps` and MariaDB's
/// extended ones `mariadb_caps`.
pub(crate) fn ssl_request(caps: u32, mariadb_caps: u32) -> Vec<u8> {
    let mut p = Vec::with_capacity(32);
    SslRequest::new(
        CapabilityFlags::from_bits_truncate(caps),
        MAX_PACKET,
        UTF8MB4_GENERAL_CI,
    )
    .with_mariadb_capabilities(MariadbCapabilities::from_bits_truncate(mariadb_caps))
    .serialize(&mut p);
    p
}

/// `Protocol::HandshakeResponse41`: `user` logging in to `database` with
/// `auth`, the first answer of `plugin`.
pub(crate) fn handshake_response(
    caps: u32,
    mariadb_caps: u32,
    user: &str,
    auth: &[u8],
    database: Option<&str>,
    plugin: &[u8],
    attrs: Option<&[(&str, &str)]>,
) -> Vec<u8> {
    let mut p = Vec::with_capacity(64 + user.len() + auth.len());
    let attrs = attrs.map(|a| {
        a.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<std::collections::HashMap<_, _>>()
    });
    HandshakeResponse::new(
        Some(auth),
        UTF8MB4_SINCE,
        Some(user.as_bytes()),
        database.map(str::as_bytes),
        Some(LibPlugin::from_bytes(plugin)),
        CapabilityFlags::from_bits_truncate(caps),
        attrs,
        MAX_PACKET,
    )
    .with_mariadb_ext_capabilities(MariadbCapabilities::from_bits_truncate(mariadb_caps))
    .serialize(&mut p);
    p
}

/// An `AuthSwitchRequest` (`0xFE`, a plugin name, its data): the name, and
/// the data exactly as sent (with the trailing NUL some plugins add). A
/// lone `0xFE` is the old form, which asks for `mysql_old_password`.
pub(crate) fn auth_switch(p: &[u8]) -> Result<(Vec<u8>, &[u8]), WireError> {
    if p == [0xfe] {
        return Ok((b"mysql_old_password".to_vec(), &[]));
    }
    let req = AuthSwitchRequest::deserialize((), &mut ParseBuf(p))
        .map_err(|_| WireError::protocol("an auth switch request whose plugin name has no end"))?;
    let name = req.auth_plugin().as_bytes().to_vec();
    // Header, name, NUL: the library checked that they are there.
    let data = p.get(name.len() + 2..).unwrap_or_default();
    Ok((name, data))
}

/// An `AuthMoreData` packet (`0x01`, then the plugin's data): the data.
pub(crate) fn more_data(p: &[u8]) -> Result<&[u8], WireError> {
    AuthMoreData::deserialize((), &mut ParseBuf(p))
        .map_err(|_| WireError::protocol("a more-data packet without its header"))?;
    Ok(p.get(1..).unwrap_or_default())
}

/// `caching_sha2_password`'s request for the server's RSA public key.
pub(crate) fn public_key_request() -> Vec<u8> {
    let mut p = Vec::with_capacity(1);
    PublicKeyRequest::new().serialize(&mut p);
    p
}

/// `mysql_native_password`'s answer to `nonce`: SHA1(password) XOR
/// SHA1(nonce + SHA1(SHA1(password))); empty for an empty password.
pub(crate) fn native(nonce: &[u8], password: &str) -> Vec<u8> {
    scramble_native(nonce, password.as_bytes()).map_or_else(Vec::new, |s| s.to_vec())
}

/// `caching_sha2_password`'s fast answer to `nonce`: SHA256(password) XOR
/// SHA256(SHA256(SHA256(password)) + nonce); empty for an empty password.
pub(crate) fn sha256(nonce: &[u8], password: &str) -> Vec<u8> {
    scramble_sha256(nonce, password.as_bytes()).map_or_else(Vec::new, |s| s.to_vec())
}

/// `client_ed25519`'s answer: the 64-byte Ed25519 signature of `nonce`
/// with the key derived from the password (an empty one included: the
/// server checks the signature whatever the password).
pub(crate) fn ed25519(nonce: &[u8], password: &str) -> Vec<u8> {
    create_response_for_ed25519(password.as_bytes(), nonce).to_vec()
}

/// A seed drawn beforehand: the library's padding asks for exactly one
/// (20 bytes), and this never fails.
struct Seed([u8; 20]);

impl Rng for Seed {
    type Error = std::io::Error;

    fn fill(&mut self, dest: &mut [u8]) -> Result<(), std::io::Error> {
        for (d, s) in dest.iter_mut().zip(self.0.iter().cycle()) {
            *d = *s;
        }
        Ok(())
    }
}

/// `caching_sha2_password`'s full answer over a connection that is
/// neither TLS nor a unix socket: the password, NUL-terminated, XORed with
/// the nonce (repeated), encrypted with RSA-OAEP (SHA-1) under the
/// server's public key `pem`.
pub(crate) fn rsa_password(pem: &[u8], nonce: &[u8], password: &str) -> Result<Vec<u8>, WireError> {
    let (modulus, exponent) = rsa_key(pem)?;
    let k = modulus.len();
    // OAEP with SHA-1 holds at most k - 2*20 - 2 bytes.
    let room = k - 42;
    if password.len() + 1 > room {
        return Err(WireError::protocol(format!(
            "the password is too long for the server's {}-bit RSA key ({} bytes at most)",
            k * 8,
            room - 1
        )));
    }
    if nonce.is_empty() {
        return Err(WireError::protocol(
            "caching_sha2_password's full authentication without a nonce",
        ));
    }
    let mut plain: Vec<u8> = password.bytes().chain([0]).collect();
    for (b, n) in plain.iter_mut().zip(nonce.iter().cycle()) {
        *b ^= n;
    }
    let mut seed = [0u8; 20];
    rustls::crypto::ring::default_provider()
        .secure_random
        .fill(&mut seed)
        .map_err(|_| WireError::protocol("no random bytes for the RSA padding"))?;
    let key = PublicKey::new(
        BigUint::from_bytes_be(&modulus),
        BigUint::from_bytes_be(&exponent),
    );
    let sealed = key.encrypt_block(&plain, Pkcs1OaepPadding::new(Seed(seed)));
    plain.fill(0);
    Ok(sealed)
}

/// The modulus and exponent of an RSA public key in PEM, `PUBLIC KEY`
/// (SubjectPublicKeyInfo, what MySQL sends and writes) or `RSA PUBLIC KEY`
/// (PKCS #1), every byte checked. The modulus is 1024 to 8192 bits, a
/// whole number of bytes (the library counts a key's bytes from its bits
/// and would be one short otherwise); the exponent 1 to 8 bytes, odd.
fn rsa_key(pem: &[u8]) -> Result<(Vec<u8>, Vec<u8>), WireError> {
    let bad = |what: &str| WireError::protocol(format!("the server's RSA public key {what}"));
    let text = std::str::from_utf8(pem).map_err(|_| bad("is not PEM text"))?;
    let (body, pkcs1) = ["PUBLIC KEY", "RSA PUBLIC KEY"]
        .iter()
        .find_map(|label| {
            let begin = format!("-----BEGIN {label}-----");
            let end = format!("-----END {label}-----");
            let from = text.find(&begin)? + begin.len();
            let to = from + text.get(from..)?.find(&end)?;
            Some((text.get(from..to)?, *label == "RSA PUBLIC KEY"))
        })
        .ok_or_else(|| bad("is not a PEM \"PUBLIC KEY\" or \"RSA PUBLIC KEY\""))?;
    let der = base64(body).ok_or_else(|| bad("is not valid base64 inside its PEM"))?;
    let mut outer = Der(&der);
    let rsa = if pkcs1 {
        outer
            .take(0x30)
            .ok_or_else(|| bad("is not a DER sequence"))?
    } else {
        let mut spki = Der(outer
            .take(0x30)
            .ok_or_else(|| bad("is not a DER sequence"))?);
        let mut algorithm = Der(spki
            .take(0x30)
            .ok_or_else(|| bad("has no algorithm identifier"))?);
        if algorithm.take(0x06) != Some(RSA_ENCRYPTION) {
            return Err(bad("is not an RSA key"));
        }
        let bits = spki.take(0x03).ok_or_else(|| bad("has no key bits"))?;
        match bits.split_first() {
            Some((0, key)) => Der(key)
                .take(0x30)
                .ok_or_else(|| bad("has no RSA key inside"))?,
            _ => return Err(bad("has no RSA key inside")),
        }
    };
    let mut rsa = Der(rsa);
    let modulus = rsa.unsigned().ok_or_else(|| bad("has no modulus"))?;
    let exponent = rsa.unsigned().ok_or_else(|| bad("has no exponent"))?;
    if !(128..=1024).contains(&modulus.len()) || modulus[0] < 0x80 {
        return Err(bad("is not of 1024 to 8192 bits, a whole number of bytes"));
    }
    if exponent.is_empty() || exponent.len() > 8 || exponent[exponent.len() - 1] & 1 == 0 {
        return Err(bad("has an exponent that is not odd or is over 8 bytes"));
    }
    Ok((modulus.to_vec(), exponent.to_vec()))
}

/// [`rsa_key`], for the unit tests.
#[cfg(test)]
pub(crate) fn rsa_key_for_tests(pem: &[u8]) -> Result<(Vec<u8>, Vec<u8>), WireError> {
    rsa_key(pem)
}

/// The DER of the rsaEncryption object identifier, 1.2.840.113549.1.1.1.
const RSA_ENCRYPTION: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];

/// A cursor over DER: each element's tag, length and contents checked.
struct Der<'a>(&'a [u8]);

impl<'a> Der<'a> {
    /// The contents of the next element, which must have tag `tag`.
    fn take(&mut self, tag: u8) -> Option<&'a [u8]> {
        let (&t, rest) = self.0.split_first()?;
        if t != tag {
            return None;
        }
        let (&first, mut rest) = rest.split_first()?;
        let len = if first < 0x80 {
            usize::from(first)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 4 {
                return None;
            }
            let (bytes, after) = (rest.get(..n)?, rest.get(n..)?);
            rest = after;
            bytes.iter().fold(0usize, |a, &b| a << 8 | usize::from(b))
        };
        let contents = rest.get(..len)?;
        self.0 = rest.get(len..)?;
        Some(contents)
    }

    /// The next INTEGER, which must not be negative, without its leading
    /// zero bytes.
    fn unsigned(&mut self) -> Option<&'a [u8]> {
        let n = self.take(0x02)?;
        if n.first()? & 0x80 != 0 {
            return None;
        }
        let from = n.iter().position(|&b| b != 0).unwrap_or(n.len());
        Some(&n[from..])
    }
}

/// Standard base64 with padding, whitespace ignored. Written here because
/// the library's PEM reader (which has one) panics on bad input, and its
/// base64 crate is not worth a dependency for the one key.
fn base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut acc = 0u32;
    let mut n = 0u32;
    let mut pad = 0;
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace()) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => {
                pad += 1;
                0
            }
            _ => return None,
        };
        if pad > 0 && c != b'=' || pad > 2 {
            return None;
        }
        acc = acc << 6 | u32::from(v);
        n += 1;
        if n == 4 {
            let bytes = [(acc >> 16) as u8, (acc >> 8) as u8, acc as u8];
            out.extend_from_slice(&bytes[..3 - pad]);
            acc = 0;
            n = 0;
        }
    }
    (n == 0).then_some(out)
}
