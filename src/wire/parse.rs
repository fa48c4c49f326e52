//! The protocol's integers and strings, and the OK, EOF and ERR packets.
//! Every read is checked: a short packet is a [`WireError::Protocol`]
//! naming what was being read, never a panic.

use crate::wire::error::{ServerError, WireError};

/// Capability flags (the handshake's `capability_flags`) this layer reads.
pub mod caps {
    /// `CLIENT_FOUND_ROWS`: affected rows count the rows matched, not
    /// those changed.
    pub const FOUND_ROWS: u32 = 0x0000_0002;
    /// `CLIENT_MULTI_STATEMENTS`: one `COM_QUERY` may hold several
    /// statements separated by `;`.
    pub const MULTI_STATEMENTS: u32 = 0x0001_0000;
    /// `CLIENT_PROTOCOL_41`: ERR packets carry a SQLSTATE, OK and EOF
    /// packets a status and a warning count.
    pub const PROTOCOL_41: u32 = 0x0000_0200;
    /// `CLIENT_SESSION_TRACK`: OK packets carry session-state changes.
    pub const SESSION_TRACK: u32 = 0x0080_0000;
    /// `CLIENT_DEPRECATE_EOF`: no EOF packet after column definitions, and
    /// a result set ends with an OK packet whose header is 0xFE.
    pub const DEPRECATE_EOF: u32 = 0x0100_0000;
}

/// MariaDB's extended capability flags (the last 4 of the greeting's
/// reserved bytes, and of the handshake response's, when neither side
/// sets `CLIENT_MYSQL`), those this layer asks for.
pub mod mariadb {
    /// `MARIADB_CLIENT_CACHE_METADATA`: a result set's column count is
    /// followed by a byte saying whether its definitions follow; an execute
    /// of a prepared statement whose columns are the ones the server last
    /// sent for it leaves them out.
    pub const CACHE_METADATA: u32 = 0x0000_0010;
}

/// Server status flags (in OK and EOF packets) this layer reads.
pub mod status {
    /// A transaction is open.
    pub const IN_TRANS: u16 = 0x0001;
    /// Autocommit is on.
    pub const AUTOCOMMIT: u16 = 0x0002;
    /// Another result of the same command follows.
    pub const MORE_RESULTS_EXISTS: u16 = 0x0008;
    /// `NO_BACKSLASH_ESCAPES` is in the session's `sql_mode`.
    pub const NO_BACKSLASH_ESCAPES: u16 = 0x0200;
    /// The OK packet carries session-state changes.
    pub const SESSION_STATE_CHANGED: u16 = 0x4000;
}

/// A cursor over one packet's payload.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    pub(crate) rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(payload: &'a [u8]) -> Reader<'a> {
        Reader { rest: payload }
    }

    fn short(what: &str) -> WireError {
        WireError::protocol(format!("packet ends inside {what}"))
    }

    pub(crate) fn u8(&mut self, what: &str) -> Result<u8, WireError> {
        let (&b, rest) = self.rest.split_first().ok_or_else(|| Self::short(what))?;
        self.rest = rest;
        Ok(b)
    }

    pub(crate) fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], WireError> {
        if self.rest.len() < n {
            return Err(Self::short(what));
        }
        let (b, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(b)
    }

    pub(crate) fn u16(&mut self, what: &str) -> Result<u16, WireError> {
        let b = self.bytes(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, WireError> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A length-encoded integer; `None` for 0xFB (a NULL cell).
    pub(crate) fn lenenc(&mut self, what: &str) -> Result<Option<u64>, WireError> {
        let first = self.u8(what)?;
        let n = match first {
            0..=0xfa => return Ok(Some(u64::from(first))),
            0xfb => return Ok(None),
            0xfc => 2,
            0xfd => 3,
            0xfe => 8,
            0xff => {
                return Err(WireError::protocol(format!(
                    "0xFF is not a length-encoded integer ({what})"
                )))
            }
        };
        let b = self.bytes(n, what)?;
        let mut v = 0u64;
        for (i, &x) in b.iter().enumerate() {
            v |= u64::from(x) << (8 * i);
        }
        Ok(Some(v))
    }

    /// A length-encoded integer that may not be NULL.
    pub(crate) fn lenenc_int(&mut self, what: &str) -> Result<u64, WireError> {
        self.lenenc(what)?
            .ok_or_else(|| WireError::protocol(format!("NULL where a number belongs ({what})")))
    }

    /// A length-encoded string; `None` for NULL.
    #[inline]
    pub(crate) fn lenenc_str(&mut self, what: &str) -> Result<Option<&'a [u8]>, WireError> {
        match self.lenenc(what)? {
            None => Ok(None),
            Some(n) => {
                let n = usize::try_from(n).map_err(|_| Self::short(what))?;
                self.bytes(n, what).map(Some)
            }
        }
    }
}

/// What an OK packet says (also the end of a result set under
/// `CLIENT_DEPRECATE_EOF`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OkInfo {
    /// Rows changed (or matched, with `CLIENT_FOUND_ROWS`).
    pub affected_rows: u64,
    /// The `AUTO_INCREMENT` value the statement generated, or 0.
    pub last_insert_id: u64,
    /// Server status flags ([`crate::wire::status`]).
    pub status: u16,
    /// Warnings the statement raised.
    pub warnings: u16,
    /// The human-readable text (`Rows matched: 1  Changed: 1 ...`).
    pub info: Vec<u8>,
    /// The session-state changes, unparsed, when the status says there
    /// are some (`CLIENT_SESSION_TRACK`).
    pub session_state: Vec<u8>,
}

impl OkInfo {
    /// Parses an OK packet (header 0x00, or 0xFE at the end of a result
    /// set).
    pub(crate) fn parse(payload: &[u8], caps: u32) -> Result<OkInfo, WireError> {
        let mut r = Reader::new(payload);
        let header = r.u8("an OK packet's header")?;
        if header != 0x00 && header != 0xfe {
            return Err(WireError::protocol(format!(
                "expected an OK packet, got header 0x{header:02X}"
            )));
        }
        let mut ok = OkInfo {
            affected_rows: r.lenenc_int("an OK packet's affected rows")?,
            last_insert_id: r.lenenc_int("an OK packet's last insert id")?,
            ..OkInfo::default()
        };
        if caps & crate::wire::caps::PROTOCOL_41 != 0 {
            ok.status = r.u16("an OK packet's status")?;
            ok.warnings = r.u16("an OK packet's warnings")?;
        }
        if caps & crate::wire::caps::SESSION_TRACK != 0 {
            if !r.rest.is_empty() {
                ok.info = r
                    .lenenc_str("an OK packet's info")?
                    .unwrap_or_default()
                    .to_vec();
            }
            if ok.status & status::SESSION_STATE_CHANGED != 0 {
                ok.session_state = r
                    .lenenc_str("an OK packet's session state")?
                    .unwrap_or_default()
                    .to_vec();
            }
        } else {
            ok.info = r.rest.to_vec();
        }
        Ok(ok)
    }
}

/// What an EOF packet says (the end of column definitions, or of a result
/// set, without `CLIENT_DEPRECATE_EOF`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EofInfo {
    /// Warnings so far.
    pub warnings: u16,
    /// Server status flags ([`crate::wire::status`]).
    pub status: u16,
}

impl EofInfo {
    pub(crate) fn parse(payload: &[u8], caps: u32) -> Result<EofInfo, WireError> {
        let mut r = Reader::new(payload);
        if r.u8("an EOF packet")? != 0xfe || payload.len() >= 9 {
            return Err(WireError::protocol("expected an EOF packet"));
        }
        if caps & crate::wire::caps::PROTOCOL_41 == 0 {
            return Ok(EofInfo::default());
        }
        Ok(EofInfo {
            warnings: r.u16("an EOF packet's warnings")?,
            status: r.u16("an EOF packet's status")?,
        })
    }

    /// Whether `payload` is an EOF packet (header 0xFE, shorter than 9
    /// bytes: a row that starts with 0xFE is at least 9 bytes long).
    pub(crate) fn is_eof(payload: &[u8]) -> bool {
        payload.first() == Some(&0xfe) && payload.len() < 9
    }
}

/// An ERR packet's contents; `None` for a MariaDB progress report (error
/// number 0xFFFF), which is not an error and is skipped.
pub(crate) fn parse_err(payload: &[u8], caps: u32) -> Result<Option<ServerError>, WireError> {
    let mut r = Reader::new(payload);
    r.u8("an ERR packet")?;
    let code = r.u16("an ERR packet's error number")?;
    if code == 0xffff {
        return Ok(None);
    }
    let mut state = *b"HY000";
    if caps & crate::wire::caps::PROTOCOL_41 != 0 && r.rest.first() == Some(&b'#') {
        r.u8("an ERR packet's SQLSTATE marker")?;
        state.copy_from_slice(r.bytes(5, "an ERR packet's SQLSTATE")?);
    }
    Ok(Some(ServerError {
        code,
        state,
        message: String::from_utf8_lossy(r.rest).into_owned(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_encoded_integers_of_every_width() {
        let cases: &[(&[u8], Option<u64>)] = &[
            (&[0x00], Some(0)),
            (&[0xfa], Some(250)),
            (&[0xfb], None),
            (&[0xfc, 0x34, 0x12], Some(0x1234)),
            (&[0xfd, 0x56, 0x34, 0x12], Some(0x12_3456)),
            (&[0xfe, 1, 2, 3, 4, 5, 6, 7, 8], Some(0x0807_0605_0403_0201)),
        ];
        for (bytes, want) in cases {
            let mut r = Reader::new(bytes);
            assert_eq!(r.lenenc("test").unwrap(), *want, "{bytes:?}");
            assert!(r.rest.is_empty());
        }
        for bad in [&[0xfc, 1][..], &[0xfe, 1, 2, 3], &[0xff], &[]] {
            let e = Reader::new(bad).lenenc("a cell").unwrap_err();
            assert!(e.to_string().contains("a cell"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn ok_packets_with_and_without_session_tracking() {
        let caps41 = caps::PROTOCOL_41;
        let ok = OkInfo::parse(
            &[0, 3, 0xfc, 0x10, 0x27, 0x02, 0x00, 1, 0, b'h', b'i'],
            caps41,
        )
        .unwrap();
        assert_eq!(
            (ok.affected_rows, ok.last_insert_id, ok.status, ok.warnings),
            (3, 10_000, 2, 1)
        );
        assert_eq!(ok.info, b"hi");

        let tracked = caps41 | caps::SESSION_TRACK;
        let p = [0, 0, 0, 0x02, 0x40, 0, 0, 2, b'o', b'k', 3, 1, 2, 3];
        let ok = OkInfo::parse(&p, tracked).unwrap();
        assert_eq!(ok.info, b"ok");
        assert_eq!(ok.session_state, [1, 2, 3]);
        // Nothing after the warnings: no info.
        assert_eq!(
            OkInfo::parse(&[0, 0, 0, 2, 0, 0, 0], tracked).unwrap().info,
            b""
        );

        let e = OkInfo::parse(&[0, 1], caps41).unwrap_err();
        assert!(e.to_string().contains("last insert id"), "{e}");
    }

    #[test]
    fn err_packets_and_progress_reports() {
        let mut p = vec![0xff, 0x7a, 0x04, b'#'];
        p.extend_from_slice(b"42S02Table 't' doesn't exist");
        let e = parse_err(&p, caps::PROTOCOL_41).unwrap().unwrap();
        assert_eq!(
            (e.code, &e.state, e.message.as_str()),
            (1146, b"42S02", "Table 't' doesn't exist")
        );
        assert_eq!(
            parse_err(&[0xff, 0xff, 0xff, 1, 2], caps::PROTOCOL_41).unwrap(),
            None
        );
        assert!(parse_err(&[0xff, 0x7a], 0).is_err());
    }
}
