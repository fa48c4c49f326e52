//! The one SQL scanner: where a statement's `?` placeholders are, as the
//! server's own lexer finds them, and the statement with each placeholder
//! replaced (by a cast for the prepared way, by a literal for client-side
//! interpolation).
//!
//! # What the server's lexer does (MariaDB `sql_lex.cc`, MySQL `sql_lex.cc`)
//! A `?` is a placeholder anywhere outside:
//! - `'...'` strings: `''` is a quote; a backslash escapes the next
//!   character unless `NO_BACKSLASH_ESCAPES` is in the `sql_mode`;
//! - `"..."`: a string like `'...'` by default, an identifier under
//!   `ANSI_QUOTES` (then `""` is a quote and a backslash is a character);
//! - `` `...` `` identifiers (``` `` ``` is a backtick, no backslash escape);
//! - `#` comments and `-- ` comments (two dashes then a space or control
//!   character, or the end), to the end of the line;
//! - `/* ... */` comments, except the executable ones, whose text *is*
//!   statement text: `/*! ... */` (every server), `/*!NNNNN ... */` (a server
//!   of version NNNNN or later), `/*M! ... */` and `/*M!NNNNNN ... */`
//!   (MariaDB only). In those, quotes and placeholders count as anywhere
//!   else, and the first `*/` outside a quote ends them.
//!
//! Only `NO_BACKSLASH_ESCAPES` and `ANSI_QUOTES` change this among the
//! `sql_mode` flags, so a [`Lexing`] holds those two and the server's kind
//! and version. The session knows its own (see `Session::lexing`): the
//! status flag of every OK packet for `NO_BACKSLASH_ESCAPES`, the session
//! tracker's reports of `sql_mode` for `ANSI_QUOTES`.
//!
//! An unterminated quote or comment runs to the end of the text (the server
//! refuses the statement then, whatever was bound).
//!
//! # What a statement may do to its session
//! The second half reads a text for what the server will not report
//! (`reports_partly`, `hides_changes`): several statements, a `CALL`, a
//! user lock or variable assigned in a statement. It is deliberately
//! coarse, quick (it runs before every statement) and errs on the side of
//! "yes", which costs one reset on return.

use std::fmt::Write as _;
use std::ops::Range;

use super::value::Param;

/// How the server lexes statements in a session: what changes where a `?`
/// is a placeholder and how a literal is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lexing {
    /// `sql_mode` has `NO_BACKSLASH_ESCAPES`: a backslash in a string is a
    /// character, not an escape.
    pub no_backslash_escapes: bool,
    /// `sql_mode` has `ANSI_QUOTES`: `"..."` is an identifier.
    pub ansi_quotes: bool,
    /// The server is MariaDB (which runs `/*M! */` comments).
    pub mariadb: bool,
    /// The server's version as `/*!NNNNN */` compares it: major * 10000 +
    /// minor * 100 + patch (10.11.9 is 101109); None when not known yet
    /// (a MariaDB greeting says "5.5.5-"): [`Scan::needs_version`] then says
    /// whether this statement needs it.
    pub version: Option<u32>,
}

impl Default for Lexing {
    /// The defaults of a MariaDB 10.11 server: backslash escapes, `"` quotes
    /// strings.
    fn default() -> Lexing {
        Lexing {
            no_backslash_escapes: false,
            ansi_quotes: false,
            mariadb: true,
            version: None,
        }
    }
}

impl Lexing {
    /// The two flags from an `sql_mode` value (a comma-separated list; the
    /// combination modes `ANSI` and `ORACLE`-like ones that include
    /// `ANSI_QUOTES` are expanded by the server in what it reports).
    pub fn with_sql_mode(mut self, sql_mode: &[u8]) -> Lexing {
        let has = |flag: &[u8]| {
            sql_mode
                .split(|b| *b == b',')
                .any(|m| trim(m).eq_ignore_ascii_case(flag))
        };
        self.no_backslash_escapes = has(b"NO_BACKSLASH_ESCAPES");
        self.ansi_quotes = has(b"ANSI_QUOTES");
        self
    }
}

fn trim(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end]
}

/// What the SQL scanner found in a statement.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// The byte offset of each placeholder, in order.
    pub placeholders: Vec<usize>,
    /// A `;` outside quotes and comments is followed by more than
    /// whitespace and comments: several statements.
    pub several: bool,
    /// A versioned executable comment (`/*!NNNNN`) was met while the
    /// server's version was not known: scan again with it.
    pub needs_version: bool,
}

/// Where the `?` placeholders of `sql` are (byte offsets), as the server
/// lexes it under `lex`. Never fails: text that does not lex (an
/// unterminated quote) is scanned to its end as the server would. A NUL
/// byte outside quotes and `/* */` comments (in the statement, or in a
/// `#` or `-- ` comment, which it ends) ends the statement for the server's
/// parser: nothing after it is scanned (MariaDB 10.11 prepares `SELECT
/// 1;\0 ?` with no parameter, and refuses most other text with one).
pub fn scan(sql: &str, lex: &Lexing) -> Scan {
    let b = sql.as_bytes();
    let mut out = Scan::default();
    // Most statements that reach here hold neither byte: no placeholder,
    // one statement, whatever the lexing (and the server's version, which
    // only decides whether a `?` in an executable comment counts).
    if !b.iter().any(|&c| c == b'?' || c == b';') {
        return out;
    }
    let mut i = 0;
    // Inside an executable comment: its `*/` ends it, not a placeholder.
    let mut in_exec = false;
    let mut semicolon = false;
    while i < b.len() {
        let c = b[i];
        if c == 0 {
            break;
        }
        if semicolon && !c.is_ascii_whitespace() && !starts_comment(b, i) {
            out.several = true;
        }
        match c {
            b'\'' => i = skip_quoted(b, i, b'\'', !lex.no_backslash_escapes),
            b'"' => i = skip_quoted(b, i, b'"', !lex.ansi_quotes && !lex.no_backslash_escapes),
            b'`' => i = skip_quoted(b, i, b'`', false),
            b'#' => i = line_end(b, i),
            b'-' if is_dash_comment(b, i) => i = line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => match executable(b, i, lex, &mut out) {
                Comment::Run(body) => {
                    in_exec = true;
                    i = body;
                }
                Comment::Skip { body, nest } => i = comment_end(b, body, nest),
            },
            b'*' if in_exec && b.get(i + 1) == Some(&b'/') => {
                in_exec = false;
                i += 2;
            }
            b'?' => {
                out.placeholders.push(i);
                i += 1;
            }
            b';' => {
                semicolon = true;
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// The number of placeholders in `sql` under `lex` (see [`scan`]).
#[cfg(any(test, feature = "fuzzing"))]
pub fn count_placeholders(sql: &str, lex: &Lexing) -> usize {
    scan(sql, lex).placeholders.len()
}

fn starts_comment(b: &[u8], i: usize) -> bool {
    match b[i] {
        b'#' => true,
        b'-' => is_dash_comment(b, i),
        b'/' => b.get(i + 1) == Some(&b'*') && b.get(i + 2) != Some(&b'!'),
        _ => false,
    }
}

/// `--` then a space or a control character, or the end (the server reads
/// the byte after the second dash, a NUL at the end).
fn is_dash_comment(b: &[u8], i: usize) -> bool {
    b.get(i + 1) == Some(&b'-')
        && b.get(i + 2)
            .map_or(true, |c| c.is_ascii_whitespace() || c.is_ascii_control())
}

/// The offset of the newline ending the line at `i` (or of a NUL byte,
/// which ends the comment and the statement; or the end).
fn line_end(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|c| *c == b'\n' || *c == 0)
        .map_or(b.len(), |p| i + p)
}

/// The offset just past the quoted text opening at `i` with `q`: a doubled
/// `q` is a quote, a backslash escapes the next byte when `backslash`.
fn skip_quoted(b: &[u8], i: usize, q: u8, backslash: bool) -> usize {
    let mut i = i + 1;
    while i < b.len() {
        if backslash && b[i] == b'\\' {
            i += 2;
        } else if b[i] == q {
            if b.get(i + 1) == Some(&q) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// What the server does with a comment.
enum Comment {
    /// An executable comment it runs: its body starts here (past `/*!`,
    /// `/*M!` and the version digits).
    Run(usize),
    /// A comment it skips, whose text starts here; `nest`: one comment may
    /// be nested in it (a versioned comment for a later version).
    Skip { body: usize, nest: bool },
}

/// The offset just past the end of a comment whose text starts at `i`, as
/// the server's `consume_comment` finds it: the first `*/`, except that a
/// skipped versioned comment may hold one level of `/* ... */` (MySQL's
/// lexer: "version allowed to have one level of comment inside").
fn comment_end(b: &[u8], mut i: usize, nest: bool) -> usize {
    while i < b.len() {
        match b[i] {
            b'/' if nest && b.get(i + 1) == Some(&b'*') => i = comment_end(b, i + 2, false),
            b'*' if b.get(i + 1) == Some(&b'/') => return i + 2,
            _ => i += 1,
        }
    }
    b.len()
}

/// Whether the server runs the comment opening at `i` (`/*!`, `/*M!`) on
/// this server, or skips it.
fn executable(b: &[u8], i: usize, lex: &Lexing, out: &mut Scan) -> Comment {
    let (start, mariadb_only) = match (b.get(i + 2), b.get(i + 3)) {
        (Some(b'!'), _) => (i + 3, false),
        (Some(b'M'), Some(b'!')) => (i + 4, true),
        _ => {
            return Comment::Skip {
                body: i + 2,
                nest: false,
            }
        }
    };
    if mariadb_only && !lex.mariadb {
        // MySQL reads `/*M!` as a plain comment.
        return Comment::Skip {
            body: i + 2,
            nest: false,
        };
    }
    // A version is 5 or 6 digits; fewer are statement text.
    let digits = b[start..]
        .iter()
        .take(6)
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits < 5 {
        return Comment::Run(start);
    }
    let skip = Comment::Skip {
        body: start,
        nest: true,
    };
    let Some(v) = std::str::from_utf8(&b[start..start + digits])
        .ok()
        .and_then(|d| d.parse::<u32>().ok())
    else {
        return skip;
    };
    // MariaDB leaves MySQL 5.7-and-later-only text (`/*!50700` to
    // `/*!99999`) alone.
    let mysql_only = lex.mariadb && !mariadb_only && digits == 5 && v >= 50700;
    let Some(version) = lex.version else {
        out.needs_version = true;
        return skip;
    };
    if v > version || mysql_only {
        return skip;
    }
    Comment::Run(start + digits)
}

/// `sql` with each placeholder at `at` replaced by what `put` writes for
/// its index.
/// The version number `/*!NNNNN */` compares, from a version string
/// ("10.11.9-MariaDB-log" is 101109).
pub fn version_number(v: &str) -> Option<u32> {
    let mut parts = v.split(|c: char| !c.is_ascii_digit());
    let mut n = 0;
    for _ in 0..3 {
        let p: u32 = parts.next()?.parse().ok()?;
        n = n * 100 + p.min(99);
    }
    Some(n)
}

pub(crate) fn replace(
    sql: &str,
    at: &[usize],
    extra: usize,
    mut put: impl FnMut(usize, &mut String) -> Result<(), ParamFault>,
) -> Result<String, ParamFault> {
    let mut out = String::with_capacity(sql.len() + extra);
    let mut copied = 0;
    for (n, &p) in at.iter().enumerate() {
        out.push_str(&sql[copied..p]);
        put(n, &mut out)?;
        copied = p + 1;
    }
    out.push_str(&sql[copied..]);
    Ok(out)
}

/// Why a parameter cannot be sent: its position (0-based) and what is
/// wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamFault {
    /// The parameter's position, from 0.
    pub index: usize,
    /// What is wrong, for the error message.
    pub message: String,
}

impl std::fmt::Display for ParamFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "params[{}]: {}", self.index, self.message)
    }
}

/// The statement to prepare for `params`: each placeholder whose value
/// needs a type the binary protocol cannot say written as a cast (bytes as
/// `CAST(? AS BINARY)`, so the server does not check them as text in the
/// connection's character set; a decimal as `CAST(? AS DECIMAL(p,s))` with
/// its own precision and scale, so it stays exact instead of becoming a
/// double in arithmetic; a date as `CAST(? AS DATE)`, since the protocol
/// sends it as a DATETIME). None when no parameter needs one.
pub(crate) fn cast_for_prepare(sql: &str, at: &[usize], params: &[Param]) -> Option<String> {
    if !params.iter().any(needs_cast) {
        return None;
    }
    replace(sql, at, 24 * params.len(), |n, out| {
        match params.get(n) {
            Some(Param::Bytes(_)) => out.push_str("CAST(? AS BINARY)"),
            Some(Param::Decimal(d)) => {
                let _ = write!(out, "CAST(? AS DECIMAL({},{}))", d.precision(), d.scale());
            }
            Some(Param::Date(..)) => out.push_str("CAST(? AS DATE)"),
            _ => out.push('?'),
        }
        Ok(())
    })
    .ok()
}

pub(crate) fn needs_cast(p: &Param) -> bool {
    matches!(p, Param::Bytes(_) | Param::Decimal(_) | Param::Date(..))
}

/// The statement with every placeholder replaced by its value written as a
/// literal for a session lexing as `lex` (see [`write_literal`]). The
/// caller checked that there is one parameter per placeholder.
pub(crate) fn interpolate(
    sql: &str,
    at: &[usize],
    params: &[Param],
    lex: &Lexing,
) -> Result<String, ParamFault> {
    let extra = params.iter().map(Param::literal_len_hint).sum();
    replace(sql, at, extra, |n, out| match params.get(n) {
        Some(p) => write_literal(n, p, lex, out),
        None => Err(ParamFault {
            index: n,
            message: "no value for this placeholder".into(),
        }),
    })
}

/// Writes `p` as a SQL literal the server reads back as exactly that value
/// and type, in a session lexing as `lex`:
/// - NULL as `NULL`; integers in decimal digits;
/// - a double in the shortest form that reads back as the same double, with
///   an exponent (`1.5e0`) so that the server takes it as a DOUBLE, not a
///   DECIMAL; NaN and infinities have no SQL form and are refused;
/// - a decimal as its digits (a DECIMAL literal);
/// - text as `'...'`: `'` doubled, and, unless the session has
///   `NO_BACKSLASH_ESCAPES`, `\` doubled; every other byte as it is (the
///   text is UTF-8 and the connection's character set is utf8mb4, so no
///   byte of it can end the literal);
/// - bytes as `_binary X'hex'` (a binary string, whatever the session);
/// - a date as `DATE'YYYY-MM-DD'`, a date-time as
///   `TIMESTAMP'YYYY-MM-DD hh:mm:ss[.ffffff]'` (a DATETIME), a time as
///   `TIME'[-]hhh:mm:ss[.ffffff]'` (the fraction when not zero, as the
///   server shows a prepared one); zero dates (`0000-00-00`), which those
///   literals refuse, as plain strings.
pub fn write_literal(
    index: usize,
    p: &Param,
    lex: &Lexing,
    out: &mut String,
) -> Result<(), ParamFault> {
    match p {
        Param::Null => out.push_str("NULL"),
        Param::Int(v) => {
            let _ = write!(out, "{v}");
        }
        Param::UInt(v) => {
            let _ = write!(out, "{v}");
        }
        Param::Double(v) => {
            if !v.is_finite() {
                return Err(ParamFault {
                    index,
                    message: format!(
                        "the double {v} has no SQL value (NaN and infinities are refused)"
                    ),
                });
            }
            // `{:e}` is the shortest text that reads back as the same
            // double, always with an exponent.
            let _ = write!(out, "{v:e}");
        }
        Param::Decimal(d) => out.push_str(d.literal()),
        Param::Text(s) => {
            out.reserve(s.len() + 2);
            out.push('\'');
            for ch in s.chars() {
                match ch {
                    '\'' => out.push_str("''"),
                    '\\' if !lex.no_backslash_escapes => out.push_str("\\\\"),
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
        Param::Bytes(b) => {
            out.reserve(b.len() * 2 + 11);
            out.push_str("_binary X'");
            for byte in b {
                let _ = write!(out, "{byte:02x}");
            }
            out.push('\'');
        }
        &Param::Date(y, m, d) => {
            if (y, m, d) == (0, 0, 0) || m == 0 || d == 0 {
                let _ = write!(out, "'{y:04}-{m:02}-{d:02}'");
            } else {
                let _ = write!(out, "DATE'{y:04}-{m:02}-{d:02}'");
            }
        }
        &Param::DateTime(y, mo, d, h, mi, s, us) => {
            let prefix = if mo == 0 || d == 0 { "" } else { "TIMESTAMP" };
            let _ = write!(out, "{prefix}'{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}");
            write_micros(us, out);
            out.push('\'');
        }
        &Param::Time(neg, days, h, m, s, us) => {
            let hours = u64::from(days) * 24 + u64::from(h);
            let sign = if neg { "-" } else { "" };
            let _ = write!(out, "TIME'{sign}{hours:02}:{m:02}:{s:02}");
            write_micros(us, out);
            out.push('\'');
        }
    }
    Ok(())
}

/// `.ffffff` when there are microseconds, nothing otherwise: the server
/// gives a prepared DATETIME or TIME parameter 6 decimals when it has a
/// fraction and none when not, so a literal written the same way makes the
/// value's text (in a VARCHAR column, `CONCAT`, `CAST(? AS CHAR)`) the same
/// on both ways a statement is sent.
fn write_micros(us: u32, out: &mut String) {
    if us != 0 {
        let _ = write!(out, ".{us:06}");
    }
}

// ---- What a statement may do to its session, read from its text ----

/// Whether a statement text may hide other statements or routines whose
/// effects on the session its last OK packet does not report: several
/// statements (a `;` before the end), or a `CALL`; or may change what the
/// server never reports ([`changes_unreported`]). Errs on the side of
/// "yes" (a `;` in a string literal counts).
pub(crate) fn reports_partly(sql: &str) -> bool {
    let body = sql.trim_end().trim_end_matches(';');
    body.contains(';') || hides_changes(sql)
}

/// Whether one statement may change what its OK packet does not report: a
/// `CALL`, or [`changes_unreported`]. (A text known to hold one statement
/// needs only this; [`reports_partly`] adds the `;` check.)
pub(crate) fn hides_changes(sql: &str) -> bool {
    let first = first_word_span(sql);
    sql[first.clone()].eq_ignore_ascii_case("CALL") || changes_unreported(sql, first)
}

/// Whether a statement may change in its session what the server's
/// session tracker does not report, so that only a reset undoes it for
/// the next borrower. Checked on MariaDB 10.11, statement by statement:
/// - a user-level lock: `GET_LOCK` (held while the session idles in the
///   pool, and by the next borrower);
/// - a user variable assigned inside a statement: `@v := ...`,
///   `... INTO @v` (`SET @v` is reported);
/// - an open `HANDLER`, the next transaction's characteristics (`SET
///   TRANSACTION`), a global read lock (`FLUSH ... WITH READ LOCK`,
///   `BACKUP STAGE`/`LOCK`).
///
/// Not an XA transaction: `XA START` reports a transaction open, and the
/// `ROLLBACK` on return fails in one, so the connection is closed; that is
/// what a prepared one needs (MariaDB 10.11 keeps it for `XA RECOVER`),
/// where a reset would leave the session unusable (error 1031 on the next
/// statement, tried).
///
/// Not counted: what only reports the session's own last action, as every
/// pool leaves it: `LAST_INSERT_ID()` (every `INSERT` sets it, and so does
/// `LAST_INSERT_ID(expr)`) and a sequence's last value (`NEXTVAL`), which
/// would otherwise cost a reset on every borrow that takes an id.
///
/// The words count anywhere (in literals and comments too, so an
/// executable comment is covered): a false "yes" costs one reset. `first`
/// is where the statement's first word is ([`first_word_span`]).
fn changes_unreported(sql: &str, first: Range<usize>) -> bool {
    let b = sql.as_bytes();
    let first_end = first.end;
    let first = &sql[first];
    let keyword = match first.len() {
        3 => "SET",
        5 => "FLUSH",
        6 => "BACKUP",
        7 => "HANDLER",
        _ => "",
    };
    if !keyword.is_empty() && first.eq_ignore_ascii_case(keyword) {
        if keyword != "SET" {
            return true;
        }
        if word_at(b, skip_space(b, first_end), b"transaction") {
            return true;
        }
    }
    unreported_words(b)
}

/// Whether `b` holds a word `get_lock`, a word `into` before `@`, or `:=`.
/// This runs before every statement: each of them holds a byte that is rare
/// in SQL (`_`, `@`, `:`), so only those bytes are looked at, and the rest
/// is checked around them.
fn unreported_words(b: &[u8]) -> bool {
    b.iter().enumerate().any(|(i, &c)| match c {
        b'_' => get_lock_at(b, i),
        b'@' => into_before(b, i),
        b':' => b.get(i + 1) == Some(&b'='),
        _ => false,
    })
}

/// Whether the `_` at `i` is the one of a word `get_lock` (case aside).
fn get_lock_at(b: &[u8], i: usize) -> bool {
    i >= 3 && word_at(b, i - 3, b"get_lock") && (i == 3 || !is_ident(b[i - 4]))
}

/// Whether the `@` at `i` follows a word `into` (case aside), whitespace
/// between.
fn into_before(b: &[u8], i: usize) -> bool {
    let end = i - b[..i]
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_whitespace())
        .count();
    end >= 4 && b[end - 4..end].eq_ignore_ascii_case(b"into") && (end == 4 || !is_ident(b[end - 5]))
}

fn is_ident(c: u8) -> bool {
    BYTE_CLASS[usize::from(c)] & IDENT != 0
}

/// [`BYTE_CLASS`] bit: a byte of an identifier.
const IDENT: u8 = 1;

static BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' {
            t[i] = IDENT;
        }
        i += 1;
    }
    t
};

/// Whether `word` (lowercase) is at `i`, case aside, and no identifier
/// character follows it.
fn word_at(b: &[u8], i: usize, word: &[u8]) -> bool {
    b.get(i..i + word.len())
        .is_some_and(|w| w.eq_ignore_ascii_case(word))
        && !b
            .get(i + word.len())
            .is_some_and(|c| BYTE_CLASS[usize::from(*c)] & IDENT != 0)
}

/// The offset of the first byte at or after `i` that is not whitespace.
fn skip_space(b: &[u8], i: usize) -> usize {
    i + b.get(i..).map_or(0, |r| {
        r.iter().take_while(|c| c.is_ascii_whitespace()).count()
    })
}

/// The first word of a statement, leading comments and whitespace skipped.
#[cfg(test)]
fn first_word(sql: &str) -> &str {
    &sql[first_word_span(sql)]
}

/// Where [`first_word`] is in `sql` (an empty range when there is none).
fn first_word_span(sql: &str) -> Range<usize> {
    // Bytes, not chars: the server's lexer skips only ASCII whitespace, and
    // this runs before every statement.
    let b = sql.as_bytes();
    let mut i = 0;
    loop {
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        let rest = &b[i..];
        if rest.starts_with(b"/*") {
            match rest[2..].windows(2).position(|w| w == b"*/") {
                Some(end) => i += end + 4,
                None => return 0..0,
            }
        } else if rest.starts_with(b"--") || rest.first() == Some(&b'#') {
            match rest.iter().position(|c| *c == b'\n') {
                Some(nl) => i += nl + 1,
                None => return 0..0,
            }
        } else {
            let len = rest
                .iter()
                .position(|c| !c.is_ascii_alphabetic())
                .unwrap_or(rest.len());
            // ASCII letters: `i` and `i + len` are char boundaries.
            return i..i + len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(nbe: bool, ansi: bool) -> Lexing {
        Lexing {
            no_backslash_escapes: nbe,
            ansi_quotes: ansi,
            ..Lexing::default()
        }
    }

    fn count(sql: &str, l: Lexing) -> usize {
        count_placeholders(sql, &l)
    }

    #[test]
    fn placeholders_outside_quotes_and_comments() {
        let d = lex(false, false);
        assert_eq!(count("SELECT ?", d), 1);
        assert_eq!(count("SELECT ?, '?', \"?\", `?`", d), 1);
        assert_eq!(count("SELECT 'it''s ?', ?", d), 1);
        assert_eq!(count("SELECT 'x\\'?', ?", d), 1);
        assert_eq!(count("SELECT \"x\\\"?\", ?", d), 1);
        assert_eq!(count("SELECT `a``?`, ?", d), 1);
        assert_eq!(count("SELECT ? # ?\n, ?", d), 2);
        assert_eq!(count("SELECT ? -- ?\n, ?", d), 2);
        assert_eq!(count("SELECT ? --\t?\n, ?", d), 2);
        assert_eq!(count("SELECT 1--?", d), 1, "-- needs a space after it");
        assert_eq!(count("SELECT 1 --", d), 0);
        assert_eq!(count("SELECT ? /* ? */, ?", d), 2);
        assert_eq!(count("SELECT ? /* ? ", d), 1);
        assert_eq!(count("SELECT '?", d), 0);
        assert_eq!(count("SELECT x'3f', b'1', ?", d), 1);
        assert_eq!(count("SELECT '日本?語', ?", d), 1);
    }

    #[test]
    fn executable_comments_are_statement_text() {
        let maria = Lexing {
            version: Some(101109),
            ..lex(false, false)
        };
        assert_eq!(count("SELECT 1 /*! + ? */", maria), 1);
        assert_eq!(count("SELECT 1 /*!50100 + ? */", maria), 1);
        assert_eq!(count("SELECT 1 /*!999999 + ? */", maria), 0);
        assert_eq!(
            count("SELECT 1 /*!80000 + ? */", maria),
            0,
            "MySQL-only text"
        );
        assert_eq!(count("SELECT 1 /*!32300 + ? */", maria), 1);
        assert_eq!(
            count("SELECT 1 /*!1234 ? */", maria),
            1,
            "4 digits are text"
        );
        let unknown = Lexing::default();
        assert!(scan("SELECT 1 /*!50100 + ? */", &unknown).needs_version);
        assert!(!scan("SELECT 1 /*! + ? */", &unknown).needs_version);
        assert_eq!(count("SELECT 1 /*M! + ? */", maria), 1);
        assert_eq!(count("SELECT 1 /*M!100000 + ? */", maria), 1);
        assert_eq!(count("SELECT 1 /*M!110000 + ? */", maria), 0);
        assert_eq!(count("SELECT 1 /*! + '*/?' */ + ?", maria), 1);
        assert_eq!(count("SELECT 1 /*! + '*/' + ? */ + ?", maria), 2);
        // A skipped versioned comment may hold one comment; a plain one
        // ends at its first `*/` (the server's consume_comment).
        assert_eq!(count("SELECT 1 /*!999999 /* ? */ ? */, ?", maria), 1);
        assert_eq!(count("SELECT 1 /*!80000 /* ? */ ? */, ?", maria), 1);
        assert_eq!(count("SELECT 1 /*!999999 /* /* */ ? */, ?", maria), 1);
        assert_eq!(count("SELECT 1 /* /* ? */ , ?", maria), 1);
        assert_eq!(count("SELECT 1 /*!50100 /* ? */ + ? */, ?", maria), 2);
        let mysql = Lexing {
            mariadb: false,
            version: Some(80036),
            ..maria
        };
        assert_eq!(count("SELECT 1 /*M! + ? */", mysql), 0);
        assert_eq!(count("SELECT 1 /*!80000 + ? */", mysql), 1);
        assert_eq!(count("SELECT 1 /*!80040 + ? */", mysql), 0);
    }

    #[test]
    fn no_backslash_escapes_ends_a_string_at_its_quote() {
        let sql = "SELECT 'C:\\', ?, 'why?'";
        assert_eq!(count(sql, lex(true, false)), 1);
        assert_eq!(
            scan(sql, &lex(true, false)).placeholders,
            vec![sql.find(", ?").unwrap() + 2]
        );
        // Under the default mode `\'` is a quote inside the first string,
        // which runs to `'why`: the `?` of "why?" is the one found (the
        // bug of issue #20 point 3, which cast the wrong `?`).
        assert_eq!(
            scan(sql, &lex(false, false)).placeholders,
            vec![sql.find("why?").unwrap() + 3]
        );
        assert_eq!(count("SELECT \"C:\\\", ?", lex(true, false)), 1);
    }

    #[test]
    fn ansi_quotes_makes_double_quotes_identifiers() {
        let sql = "SELECT \"a\\\", ?, \"b\"";
        assert_eq!(count(sql, lex(false, true)), 1);
        assert_eq!(count(sql, lex(false, false)), 0);
        assert_eq!(count("SELECT \"a\"\"?\", ?", lex(false, true)), 1);
    }

    #[test]
    fn several_statements_are_seen() {
        let d = lex(false, false);
        assert!(!scan("SELECT 1;", &d).several);
        assert!(!scan("SELECT 1; -- end", &d).several);
        assert!(!scan("SELECT ';x'", &d).several);
        assert!(scan("SELECT 1; SELECT 2", &d).several);
    }

    /// A NUL byte ends the statement where the server's parser stops at it
    /// (each case as MariaDB 10.11 prepared it, its parameter count from
    /// COM_STMT_PREPARE; the random_sql_scanner fuzz run against a server
    /// found the first): outside quotes, and in a `#` or `-- ` comment;
    /// not in a quoted literal or a `/* */` comment.
    #[test]
    fn a_nul_byte_ends_the_statement_as_the_server_reads_it() {
        let d = lex(false, false);
        for (sql, want) in [
            ("SELECT 1;\0 ?", 0),
            ("SELECT 1; # x\0 ?", 0),
            ("SELECT 1; -- x\0 ?", 0),
            ("SELECT 1; /* \0 ? */", 0),
            ("SELECT 1 /* ? \0 */ + ?", 1),
            ("SELECT '?\0?', ?", 1),
            ("SELECT \"?\0?\", ?", 1),
            ("SELECT ? ;\0", 1),
            ("SELECT ?; \0 ?", 1),
        ] {
            assert_eq!(count(sql, d), want, "{sql:?}");
            assert!(!scan(sql, &d).several, "{sql:?}");
        }
        let n = lex(true, false);
        assert_eq!(
            count("SELECT '\\';--\t ?\0', 1 # \n+ ?, 1 /*x/*M!?\\\\*/ + ?", n),
            0
        );
    }

    #[test]
    fn version_numbers() {
        assert_eq!(version_number("10.11.9-MariaDB-log"), Some(101109));
        assert_eq!(version_number("8.0.36"), Some(80036));
        assert_eq!(version_number("x"), None);
    }

    #[test]
    fn sql_mode_flags_are_read() {
        let l = Lexing::default().with_sql_mode(b"STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES");
        assert!(l.no_backslash_escapes && !l.ansi_quotes);
        let l = Lexing::default()
            .with_sql_mode(b"REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ANSI");
        assert!(!l.no_backslash_escapes && l.ansi_quotes);
        assert_eq!(Lexing::default().with_sql_mode(b""), lex(false, false));
    }

    fn lit(p: Param, l: Lexing) -> String {
        let mut s = String::new();
        write_literal(0, &p, &l, &mut s).unwrap();
        s
    }

    #[test]
    fn literals_are_canonical_and_escaped_for_the_mode() {
        let d = lex(false, false);
        let n = lex(true, false);
        assert_eq!(lit(Param::Null, d), "NULL");
        assert_eq!(lit(Param::Int(i64::MIN), d), "-9223372036854775808");
        assert_eq!(lit(Param::UInt(u64::MAX), d), "18446744073709551615");
        assert_eq!(lit(Param::Double(0.1), d), "1e-1");
        assert_eq!(lit(Param::Double(-1.5e300), d), "-1.5e300");
        assert_eq!(lit(Param::Double(5e-324), d), "5e-324");
        for v in [0.1, 1.0 / 3.0, f64::MAX, f64::MIN_POSITIVE, 123456.789e-30] {
            assert_eq!(lit(Param::Double(v), d).parse::<f64>().unwrap(), v);
        }
        let mut s = String::new();
        let e = write_literal(3, &Param::Double(f64::NAN), &d, &mut s).unwrap_err();
        assert_eq!(e.index, 3);
        let t = Param::Text("a'b\\c\"?\0".into());
        assert_eq!(lit(t.clone(), d), "'a''b\\\\c\"?\0'");
        assert_eq!(lit(t, n), "'a''b\\c\"?\0'");
        assert_eq!(
            lit(Param::Bytes(vec![0xff, 0, 0x41]), d),
            "_binary X'ff0041'"
        );
        assert_eq!(lit(Param::Bytes(vec![]), d), "_binary X''");
        assert_eq!(lit(Param::Date(2012, 10, 15), d), "DATE'2012-10-15'");
        assert_eq!(lit(Param::Date(0, 0, 0), d), "'0000-00-00'");
        assert_eq!(
            lit(Param::DateTime(1999, 12, 31, 23, 59, 58, 123456), d),
            "TIMESTAMP'1999-12-31 23:59:58.123456'"
        );
        assert_eq!(
            lit(Param::Time(true, 34, 22, 59, 59, 5), d),
            "TIME'-838:59:59.000005'"
        );
        assert_eq!(
            lit(Param::DateTime(2012, 10, 15, 12, 34, 56, 0), d),
            "TIMESTAMP'2012-10-15 12:34:56'"
        );
        assert_eq!(
            lit(Param::DateTime(0, 0, 0, 0, 0, 0, 0), d),
            "'0000-00-00 00:00:00'"
        );
        assert_eq!(lit(Param::Time(false, 0, 1, 2, 3, 0), d), "TIME'01:02:03'");
        assert_eq!(lit(Param::Decimal("-0.01".parse().unwrap()), d), "-0.01");
    }

    #[test]
    fn interpolation_replaces_only_placeholders() {
        let l = lex(true, false);
        let sql = "SELECT 'C:\\', ?, 'why?'";
        let at = scan(sql, &l).placeholders;
        let got = interpolate(sql, &at, &[Param::Bytes(vec![0xff, 0, 0x41])], &l).unwrap();
        assert_eq!(got, "SELECT 'C:\\', _binary X'ff0041', 'why?'");
        let got = cast_for_prepare(sql, &at, &[Param::Bytes(vec![1])]).unwrap();
        assert_eq!(got, "SELECT 'C:\\', CAST(? AS BINARY), 'why?'");
        let sql = "SELECT ? + ?, ?";
        let at = scan(sql, &l).placeholders;
        let ps = [
            Param::Decimal("15.7563".parse().unwrap()),
            Param::Int(1),
            Param::Date(2012, 10, 15),
        ];
        assert_eq!(
            cast_for_prepare(sql, &at, &ps).unwrap(),
            "SELECT CAST(? AS DECIMAL(6,4)) + ?, CAST(? AS DATE)"
        );
        assert_eq!(cast_for_prepare(sql, &at, &[Param::Int(1)]), None);
    }
}

#[cfg(test)]
mod session_effect_tests {
    use super::reports_partly as p;

    #[test]
    fn statements_that_may_hide_changes() {
        assert!(!p("SELECT 1"));
        assert!(!p("SELECT 1;"));
        assert!(!p("  /* hint */ select * from t ;  "));
        assert!(p("SET @x = 1; SELECT 1"));
        assert!(p("CALL proc()"));
        assert!(p("/* x */ call proc()"));
        assert!(p("SELECT 'a;b'"), "errs on the side of yes");
        assert!(!p("-- c\nSELECT 1"));
    }

    #[test]
    fn statements_that_change_what_the_server_does_not_report() {
        let u = |sql: &str| super::changes_unreported(sql, super::first_word_span(sql));
        for yes in [
            "SELECT GET_LOCK('x', 1)",
            "do get_lock ('x', 1)",
            "SELECT @b := 2",
            "SELECT a FROM t INTO @v",
            "select 1 into  @`v`",
            "UPDATE t SET n = n + 1 WHERE id = 1 AND (@old := n) IS NOT NULL",
            "HANDLER t OPEN",
            "FLUSH TABLES WITH READ LOCK",
            "BACKUP STAGE START",
            "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "set  transaction read only",
            "SELECT /*!100000 GET_LOCK('x', 1) */",
        ] {
            assert!(u(yes), "{yes}");
        }
        for no in [
            "SELECT 1",
            "SELECT LAST_INSERT_ID(), LAST_INSERT_ID(42)",
            "SELECT NEXTVAL(s), NEXT VALUE FOR s",
            "INSERT INTO t (mail) VALUES ('a@b.com')",
            "SELECT @x",
            "SET @x = 1",
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
            "SELECT widget_lock, budget_lock(1), nextvalue, intox FROM t",
            "SELECT * FROM t WHERE next = 1",
            "COMMIT",
            "XA START 'a'",
        ] {
            assert!(!u(no), "{no}");
        }
    }

    /// The byte-by-byte search `unreported_words` replaced (every byte
    /// classified, a word start tried at each `g`/`i`), kept to check that
    /// the two agree.
    fn byte_by_byte(b: &[u8]) -> bool {
        let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
        let word_at = |i: usize, w: &[u8]| {
            b.get(i..i + w.len())
                .is_some_and(|x| x.eq_ignore_ascii_case(w))
                && !b.get(i + w.len()).is_some_and(|c| ident(*c))
        };
        let mut after_ident = false;
        for (i, &c) in b.iter().enumerate() {
            if !after_ident {
                let hit = match c | 0x20 {
                    b'g' => word_at(i, b"get_lock"),
                    b'i' => {
                        let rest = b.get(i + 4..).unwrap_or_default();
                        let sp = rest.iter().take_while(|c| c.is_ascii_whitespace()).count();
                        word_at(i, b"into") && rest.get(sp) == Some(&b'@')
                    }
                    _ => false,
                };
                if hit {
                    return true;
                }
            }
            if c == b':' && b.get(i + 1) == Some(&b'=') {
                return true;
            }
            after_ident = ident(c);
        }
        false
    }

    /// `unreported_words` agrees with the byte-by-byte search on texts made
    /// of the pieces that matter (a fixed xorshift sequence, so a failure
    /// repeats).
    #[test]
    fn the_rare_byte_search_agrees_with_the_byte_by_byte_one() {
        const PIECES: [&str; 26] = [
            "get_lock", "GET_LOCK", "Get_Lock", "get", "_lock", "_", "into", "INTO", "Into", "@",
            "@v", " ", "\n", "\t", ":", "=", ":=", "x", "$", "\u{e9}", "widget", "(", "'", "1",
            "intox", "lock",
        ];
        let mut next = crate::test_input::xorshift(0x9e37_79b9_7f4a_7c15u64);
        let cases = crate::test_input::cases(200_000);
        let mut yes = 0;
        for _ in 0..cases {
            let n = 1 + next() % 6;
            let sql: String = (0..n)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect();
            let want = byte_by_byte(sql.as_bytes());
            assert_eq!(super::unreported_words(sql.as_bytes()), want, "{sql:?}");
            yes += usize::from(want);
        }
        assert!(yes > cases / 20, "too few texts that hold one: {yes}");
    }

    #[test]
    fn first_words() {
        use super::first_word as w;
        assert_eq!(w("SELECT 1"), "SELECT");
        assert_eq!(w(" \t\n commit;"), "commit");
        assert_eq!(w("/* a */ /* b */ROLLBACK"), "ROLLBACK");
        assert_eq!(w("# c\n-- d\n  Call p()"), "Call");
        assert_eq!(w("/*!50000 SELECT */ 1"), "");
        assert_eq!(w("SELECT1"), "SELECT");
        assert_eq!(w("/* open"), "");
        assert_eq!(w("-- no end"), "");
        assert_eq!(w("é"), "");
        assert_eq!(w(""), "");
    }
}
