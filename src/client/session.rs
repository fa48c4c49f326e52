//! [`Session`]: one MySQL connection and what staunch knows of its state.
//!
//! # Knowing the session's state without asking
//! Every session runs with `session_track_transaction_info = 'STATE'` and
//! `session_track_state_change = ON` (set when it is made and after every
//! reset). The server then puts, in the OK packet that ends a statement, the
//! transaction state when the statement changed it ("T_______" after BEGIN,
//! "I___W___" after a write under autocommit=0, "_______L" after LOCK TABLES,
//! "________" after COMMIT) and a state-change flag when the statement
//! changed anything else of the session (a user variable, a system variable,
//! the schema, a temporary table, a prepared statement). The `mysql` crate
//! keeps the packet's status flags private but gives these
//! (`Conn::session_state_changes`, from the last OK packet).
//!
//! Where the protocol layer reads a statement's answer (`src/wire`: text
//! statements of the C ABI on plain sessions), the status flags of its last
//! packet say besides whether a transaction is open and whether autocommit
//! is on, after reads too ([`Session::observe_wire`]); where the crate reads
//! it, a statement under autocommit=0 is taken to open a transaction.
//!
//! They come only in the packet of the statement that made the change, so
//! staunch must look after every statement: [`Session::observe`] does, for
//! everything run through `PooledConn`'s own methods and the C ABI. Then the
//! return path knows, without a round trip, whether a transaction is open
//! (roll it back) and whether the session changed (reset it). What it cannot
//! see, it treats as changed: statements run on the raw `mysql::Conn`
//! (`&mut *guard`), the statements before the last of a multi-statement
//! text, a `CALL`, and any statement that failed after it may have changed
//! something (a multi-statement text). Nor does the server report every
//! change: a `GET_LOCK`, a user variable set inside a `SELECT`, an open
//! `HANDLER` and a few more are found in the statement's text
//! (`conn::changes_unreported`). A stored function's or a trigger's
//! effects are not seen: where one takes a lock or sets a variable,
//! `reset_on_return` is the answer.
//!
//! Three system variables are tracked too: `sql_mode` (how the placeholder
//! scanner and interpolation lex), `character_set_client` (which text can be
//! sent exactly) and `autocommit`. A server whose global
//! `session_track_system_variables` is empty reports none of them, even
//! after the session sets its own list, only the state-change flag: there
//! the three are asked (one `SELECT`) at set-up and after each statement
//! that reports a change of state.
//!
//! # Statement time limits on the server
//! `query_timeout` is also set as the session's server-side limit (MariaDB's
//! `max_statement_time`, MySQL's `max_execution_time`, which covers only
//! read-only `SELECT`s), so a statement past it ends with the server's own
//! error and the session stays in step. A borrow may set its own limit; the
//! session variable changes (one statement) only when the limit does.

use std::sync::atomic::{AtomicU64, Ordering::AcqRel, Ordering::Acquire};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use mysql_common::constants::SessionStateType;
use mysql_common::io::ParseBuf;
use mysql_common::packets::session_state_change::SessionStateChange;
use mysql_common::packets::SessionStateInfo;

use super::link::Link;

/// The question of a session's `max_allowed_packet`.
const MAX_PACKET_SQL: &[u8] = b"SELECT @@SESSION.max_allowed_packet";
use super::sql::{version_number, Lexing};
use super::ConnectConfig;
use crate::sync::lock;
use crate::wire::{status, OkInfo, WireError};

/// The server kind, for the statement time limit's variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    MariaDb,
    MySql,
}

impl Flavor {
    /// MariaDB names itself in its version text ("10.11.9-MariaDB-...",
    /// the greeting's "5.5.5-" prefix already removed), or has a version
    /// from 10 up; MySQL is 5.x, 8.x, 9.x.
    fn of(version: &str) -> Flavor {
        let major: u32 = version
            .split('.')
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or(0);
        if version.contains("MariaDB") || major >= 10 {
            Flavor::MariaDb
        } else {
            Flavor::MySql
        }
    }
}

/// What staunch knows of a session; changed only by its owner.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Why the session is out of step with the server, once it is: every
    /// later statement fails with this (`Broken`) and it is never returned.
    pub broken: Option<String>,
    /// A transaction is open (explicit, implicit under autocommit=0, or
    /// LOCK TABLES), as the server last reported.
    pub txn_open: bool,
    /// Tables are locked (`LOCK TABLES`), as the server last reported: the
    /// `L` of its transaction state, which a `COMMIT`, a `ROLLBACK` or
    /// turning autocommit on leaves in place. Only a reset (or `UNLOCK
    /// TABLES`) ends it, so a session that reported it is dirty.
    pub tables_locked: bool,
    /// The session may differ from a fresh one (a variable, the schema, a
    /// temporary table, a prepared statement, ...): reset it on return.
    pub dirty: bool,
    /// `autocommit` is off in the session, as the server last reported
    /// (its system-variable tracker reports `autocommit` by default).
    pub autocommit_off: bool,
    /// The current database changed (`USE`), which `COM_RESET_CONNECTION`
    /// does not undo.
    pub schema_changed: bool,
    /// The server-side statement time limit in force in the session.
    pub limit: Option<Duration>,
    /// The pool's settings are in force (tracking, the time limit,
    /// `init_sql`). After a reset they are put back at once when there is
    /// something to put back besides tracking (`init_sql`, a time limit),
    /// else before the session's next statement through the guard (a borrow
    /// that only uses the raw `mysql::Conn` needs no tracking: it is reset
    /// anyway).
    pub tracked: bool,
    /// How the session lexes statements (`sql_mode`'s `NO_BACKSLASH_ESCAPES`
    /// and `ANSI_QUOTES`), when known: see `Session::observe`. None when
    /// something may have changed it unseen (a multi-statement or `CALL`,
    /// the raw `mysql::Conn`): asked before it is next needed.
    pub sql_mode: Option<SqlMode>,
    /// The session's `max_allowed_packet`, once asked (see
    /// `PooledConn::plan`); a reset takes the server's global value anew.
    pub max_allowed_packet: Option<usize>,
    /// The session's `character_set_client`, when known (tracked like
    /// `sql_mode`, and unknown when they are): staunch sends text as UTF-8,
    /// so in a session reading another character set only ASCII text
    /// arrives exact, and interpolated text could even end its own literal
    /// (see `PooledConn::plan`).
    pub client_charset: Option<ClientCharset>,
    /// A statement changed the session in a way its OK packet did not name,
    /// in a session whose variables go unreported (`Session::unreported`):
    /// `sql_mode`, `character_set_client` and `autocommit` are asked
    /// (`Session::ask_settings`) before they are next relied on.
    pub settings_unseen: bool,
}

/// A session's `character_set_client`, as far as text parameters care.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ClientCharset {
    /// utf8mb4, utf8mb3 (utf8): what staunch sends.
    Utf8,
    /// Any other (its name, for the error): only ASCII text is the same.
    Other(Box<str>),
}

impl ClientCharset {
    pub(crate) fn of(name: &[u8]) -> ClientCharset {
        let name = String::from_utf8_lossy(name);
        match name.to_ascii_lowercase().as_str() {
            "utf8mb4" | "utf8mb3" | "utf8" => ClientCharset::Utf8,
            _ => ClientCharset::Other(name.into()),
        }
    }
}

/// The `sql_mode` flags that change how statements lex.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SqlMode {
    pub no_backslash_escapes: bool,
    pub ansi_quotes: bool,
}

/// One MySQL session: the connection staunch runs (`Link`), what staunch
/// knows of its state, and the gate its cancel handles go through.
///
/// Made by [`MysqlConnector`](crate::MysqlConnector); a pool hands it out
/// inside a [`PooledConn`](crate::PooledConn).
pub struct Session {
    /// Boxed: the pool moves a session in and out of its slot, a lease and
    /// a C handle on every borrow, and 560 bytes moved a dozen times cost a
    /// tenth of a `SELECT 1`'s instructions in the library.
    pub(crate) link: Box<Link>,
    pub(crate) state: State,
    pub(crate) gate: Arc<Gate>,
    pub(crate) flavor: Flavor,
    /// The server's version for executable comments (see `sql::Lexing`).
    pub(crate) version: Option<u32>,
    /// The server reports no system variable in this session: its global
    /// `session_track_system_variables` is empty, and MariaDB then reports
    /// none even after the session sets its own list, only that the state
    /// changed. Found by `init`.
    pub(crate) unreported: bool,
    /// A text statement whose answer is being read as it arrives
    /// (`PooledConn::open_text_wire`), not finished yet.
    pub(crate) open: Option<WireOpen>,
}

/// A text statement open on the session (see [`Session::open`]).
pub(crate) struct WireOpen {
    /// The packet that closed its first result set, once read.
    pub(crate) first_end: Option<OkInfo>,
    /// Sent only (`PooledConn::send_text_wire`): no byte of its answer
    /// read yet.
    pub(crate) sent_only: bool,
    /// A prepared statement's answer: its binary columns (boxed: a
    /// session holds this inline).
    pub(crate) binary: Option<Box<crate::wire::BinaryColumns>>,
    /// Sent only, a prepared statement's execute: the statement's text,
    /// its key in the connection's statement cache (whose columns the
    /// answer may leave out).
    pub(crate) prepared: Option<std::sync::Arc<[u8]>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("connection_id", &self.link.connection_id())
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Sets up a new connection as a session: `init_sql`, then tracking and
    /// the statement time limit (see `init`).
    pub(crate) fn start(link: Link, cfg: &ConnectConfig) -> Result<Session, WireError> {
        let mut s = Session {
            version: version_number(&link.greeting.version),
            flavor: Flavor::of(&link.greeting.version),
            link: Box::new(link),
            state: State::default(),
            gate: Arc::new(Gate::default()),
            unreported: false,
            open: None,
        };
        s.init(cfg)?;
        Ok(s)
    }

    /// The server's id of this session (what `KILL` takes).
    pub fn connection_id(&self) -> u32 {
        self.link.connection_id()
    }

    /// The server's version text, as its greeting gave it
    /// (`"10.11.9-MariaDB-0+deb12u1"`, MariaDB's old `"5.5.5-"` prefix
    /// removed).
    pub fn server_version(&self) -> &str {
        &self.link.greeting.version
    }

    /// Runs a text statement on the bare session, outside any pool's
    /// bookkeeping (for drills and tests of the pool core, which hold
    /// sessions without a `PooledConn`), and returns the first row of its
    /// first result set as text (NULL as None); the rest of the answer is
    /// read and dropped.
    pub fn query_first_text(&mut self, sql: &str) -> crate::Result<Option<Vec<Option<String>>>> {
        let row = self
            .link
            .first_row(sql.as_bytes())
            .map_err(|e| crate::Error::from_wire("query", &e))?;
        Ok(row.map(|r| {
            r.into_iter()
                .map(|c| c.map(|v| String::from_utf8_lossy(&v).into_owned()))
                .collect()
        }))
    }

    /// The pool's settings, on a fresh (or just reset) session: one
    /// statement, after `init_sql` if set. Leaves the state clean.
    pub(crate) fn init(&mut self, cfg: &ConnectConfig) -> Result<(), WireError> {
        // `init_sql` first, so that the settings statement after it reports
        // what it left: its OK packet may not report all it changed (a
        // multi-statement, `SET NAMES`), and the settings statement assigns
        // each variable staunch reads its own value.
        if let Some(init) = cfg.init_sql.as_deref() {
            self.link.run(init.as_bytes())?;
            self.observe();
        }
        // `sql_mode`, `character_set_client` and `autocommit` join the
        // tracked variables (a name listed twice counts once; a server may
        // track none by default), and each is assigned its own value so
        // that this statement's OK packet reports it.
        let mut sql = String::from(
            "SET SESSION session_track_transaction_info = 'STATE', session_track_state_change = ON, \
             session_track_system_variables = CONCAT_WS(',', \
             NULLIF(@@session.session_track_system_variables, ''), 'autocommit', 'sql_mode', \
             'character_set_client'), sql_mode = @@session.sql_mode, \
             character_set_client = @@session.character_set_client, \
             autocommit = ",
        );
        // The pool's autocommit, or the session's own (as `init_sql` left
        // it) assigned again so that this statement reports it.
        sql.push_str(if cfg.autocommit {
            "@@session.autocommit"
        } else {
            "0"
        });
        if let Some(t) = cfg.query_timeout {
            sql.push_str(", ");
            sql.push_str(&self.limit_assignment(Some(t)));
        }
        // A fresh session's max_allowed_packet is asked with it, pipelined:
        // sent before the settings' answer is read, answered right after it
        // (one round trip for both; the server runs them in turn).
        let ask_max = self.state.max_allowed_packet.is_none();
        self.link.wire.send_query(sql.as_bytes())?;
        if ask_max {
            self.link.wire.send_query(MAX_PACKET_SQL)?;
        }
        let settings = self.link.read_to_end();
        if let Err(e) = &settings {
            // A server error ends only its own answer: the question's
            // follows, and is read (the session stays in step).
            if !ask_max || e.is_fatal() {
                return settings;
            }
        }
        let reported = settings.is_ok()
            && Session::reported_changes(&self.link.last).is_some_and(|cs| {
                cs.iter()
                    .any(|c| c.data_type() == SessionStateType::SESSION_TRACK_SYSTEM_VARIABLES)
            });
        if settings.is_ok() {
            self.observe();
        }
        if ask_max {
            self.link.wire.next_answer();
            let rows = self.link.read_rows(1)?;
            self.take_max_allowed_packet(rows.into_iter().next())?;
        }
        settings?;
        self.unreported = !reported;
        if self.unreported {
            // The server reports no variable in this session (its default
            // list is empty), not even after this statement set the list:
            // ask what the settings are. Later changes are asked after the
            // statement that reports a change of state (`observe`).
            self.ask_settings()?;
        }
        self.state.settings_unseen = false;
        self.state.dirty = false;
        self.state.limit = cfg.query_timeout;
        self.state.tracked = true;
        Ok(())
    }

    /// Asks the session's `sql_mode`, `character_set_client` and
    /// `autocommit` (one statement), for a session whose variables go
    /// unreported.
    pub(crate) fn ask_settings(&mut self) -> Result<(), WireError> {
        let row = self.link.first_row(SETTINGS_SQL.as_bytes())?;
        let mut cells = row.unwrap_or_default().into_iter();
        let mode = cells.next().flatten();
        let charset = cells.next().flatten();
        let auto = cells
            .next()
            .flatten()
            .and_then(|v| std::str::from_utf8(&v).ok()?.parse::<i64>().ok());
        self.take_settings((mode, charset, auto));
        Ok(())
    }

    /// What `SETTINGS_SQL` answered becomes what staunch knows.
    pub(crate) fn take_settings(&mut self, (mode, charset, auto): Settings) {
        self.state.sql_mode = Some(SqlMode::of(&mode.unwrap_or_default()));
        self.state.client_charset = Some(ClientCharset::of(&charset.unwrap_or_default()));
        self.state.autocommit_off = auto == Some(0);
        self.state.settings_unseen = false;
    }

    /// `COM_RESET_CONNECTION` (rolls back, drops variables, temporary tables
    /// and prepared statements), then the pool's settings again, now or
    /// before the next statement (see `State::tracked`). The reset keeps the
    /// current database: when a `USE` changed it, the configured one is
    /// selected again.
    pub(crate) fn reset(&mut self, cfg: &ConnectConfig) -> Result<(), WireError> {
        self.open = None;
        self.link.reset()?;
        if let (true, Some(db)) = (self.state.schema_changed, &cfg.database) {
            self.link.select_db(db)?;
        }
        self.state = State::default();
        if cfg.init_sql.is_some() || cfg.query_timeout.is_some() || !cfg.autocommit {
            self.init(cfg)?;
        }
        Ok(())
    }

    /// `max_statement_time = <seconds>` (MariaDB) or `max_execution_time =
    /// <ms>` (MySQL); 0 is none.
    fn limit_assignment(&self, limit: Option<Duration>) -> String {
        match self.flavor {
            Flavor::MariaDb => format!(
                "max_statement_time = {:.6}",
                limit.map_or(0.0, |d| d.as_secs_f64())
            ),
            Flavor::MySql => format!(
                "max_execution_time = {}",
                limit.map_or(0, |d| d.as_millis().max(1))
            ),
        }
    }

    /// Makes `limit` the session's server-side statement time limit, if it
    /// is not already (one statement when it changes).
    pub(crate) fn set_limit(&mut self, limit: Option<Duration>) -> Result<(), WireError> {
        if self.state.limit == limit {
            return Ok(());
        }
        let sql = format!("SET SESSION {}", self.limit_assignment(limit));
        self.link.run(sql.as_bytes())?;
        self.state.limit = limit;
        // Its own state-change report says nothing of the borrower's.
        Ok(())
    }

    /// The session's `max_allowed_packet` (asked once, kept until a
    /// reset): the most one packet may hold, both ways.
    pub(crate) fn max_allowed_packet(&mut self) -> Result<usize, WireError> {
        if let Some(m) = self.state.max_allowed_packet {
            return Ok(m);
        }
        let row = self.link.first_row(MAX_PACKET_SQL)?;
        self.take_max_allowed_packet(row)
    }

    /// What `MAX_PACKET_SQL` answered becomes what staunch knows.
    fn take_max_allowed_packet(
        &mut self,
        row: Option<Vec<Option<Vec<u8>>>>,
    ) -> Result<usize, WireError> {
        let m = row
            .and_then(|r| r.into_iter().next().flatten())
            .and_then(|v| std::str::from_utf8(&v).ok()?.parse::<u64>().ok())
            .ok_or_else(|| WireError::Protocol("no max_allowed_packet in its answer".into()))?;
        let m = usize::try_from(m).unwrap_or(usize::MAX);
        self.state.max_allowed_packet = Some(m);
        Ok(m)
    }

    /// Between borrows: the packet layer's buffers back to their first
    /// size (see `wire::packet`), so an idle connection holds a few KiB of
    /// them whatever its last borrower read.
    pub(crate) fn give_back_buffers(&mut self) {
        if self.open.is_none() {
            self.link.wire.give_back();
        }
    }

    /// The session-state changes the last OK packet reported, parsed;
    /// None when they cannot be.
    fn reported_changes(last: &OkInfo) -> Option<Vec<SessionStateInfo<'_>>> {
        let mut data = ParseBuf(&last.session_state);
        let mut changes = Vec::new();
        while !data.is_empty() {
            changes.push(data.parse::<SessionStateInfo<'_>>(()).ok()?);
        }
        Some(changes)
    }

    /// Reads what the last command's closing packet says (see the module
    /// doc): its status flags (a transaction open, autocommit,
    /// `NO_BACKSLASH_ESCAPES`), and its session-state block (what else
    /// changed). Call it after each statement, once its answer is read to
    /// the end.
    pub(crate) fn observe(&mut self) {
        let Session {
            link,
            state,
            unreported,
            ..
        } = self;
        let status = link.status();
        match Session::reported_changes(&link.last) {
            Some(changes) => Session::observe_report(state, *unreported, &changes, status),
            // A packet staunch cannot parse: assume the worst.
            None => state.dirty = true,
        }
    }

    /// What a statement's last closing packet reported: its session-state
    /// changes and its status flags.
    fn observe_report(
        state: &mut State,
        unreported: bool,
        changes: &[SessionStateInfo<'_>],
        server_status: u16,
    ) {
        for c in changes {
            match c.data_type() {
                SessionStateType::SESSION_TRACK_TRANSACTION_STATE => {
                    // A length-prefixed string, "________" when idle: the
                    // first byte is T (explicit) or I (implicit), the last L
                    // (LOCK TABLES); anything but underscores is a
                    // transaction to end.
                    let data = c.data_ref();
                    let txn = data.get(1..).unwrap_or(data);
                    state.tables_locked = txn.last() == Some(&b'L');
                    if state.tables_locked {
                        state.dirty = true;
                    }
                }
                SessionStateType::SESSION_TRACK_SCHEMA => {
                    state.dirty = true;
                    state.schema_changed = true;
                }
                SessionStateType::SESSION_TRACK_SYSTEM_VARIABLES => {
                    state.dirty = true;
                    if let Ok(SessionStateChange::SystemVariables(vars)) = c.decode() {
                        for v in vars {
                            if v.name_bytes().eq_ignore_ascii_case(b"sql_mode") {
                                state.sql_mode = Some(SqlMode::of(v.value_bytes()));
                            }
                            if v.name_bytes().eq_ignore_ascii_case(b"character_set_client") {
                                state.client_charset = Some(ClientCharset::of(v.value_bytes()));
                            }
                            if v.name_bytes().eq_ignore_ascii_case(b"autocommit") {
                                let on = v.value_bytes();
                                state.autocommit_off =
                                    !(on.eq_ignore_ascii_case(b"on") || on == b"1");
                            }
                        }
                    }
                }
                SessionStateType::SESSION_TRACK_STATE_CHANGE => {
                    state.dirty = true;
                    if unreported {
                        // Maybe a setting staunch relies on: unknown until
                        // asked (`settings_unseen`).
                        state.sql_mode = None;
                        state.client_charset = None;
                        state.settings_unseen = true;
                    }
                }
                // GTIDs of writes, transaction characteristics: not session
                // state a later borrower would inherit.
                _ => {}
            }
        }
        // The status flags of every closing packet (an OK, or the EOF of a
        // result set, which carries no session-state block) are the
        // server's own word on the transaction and autocommit: a read-only
        // borrow under autocommit=0 that opened none ends with no COMMIT
        // or ROLLBACK. Locked tables (the tracker's `L`, which no status
        // flag shows) count as a transaction to end.
        state.txn_open = server_status & status::IN_TRANS != 0 || state.tables_locked;
        state.autocommit_off = server_status & status::AUTOCOMMIT == 0;
        if let Some(m) = &mut state.sql_mode {
            m.no_backslash_escapes = server_status & status::NO_BACKSLASH_ESCAPES != 0;
        }
    }

    /// How the session lexes statements, if its `sql_mode` is known.
    pub(crate) fn lexing(&self) -> Option<Lexing> {
        self.state.sql_mode.map(|m| Lexing {
            no_backslash_escapes: m.no_backslash_escapes,
            ansi_quotes: m.ansi_quotes,
            mariadb: self.flavor == Flavor::MariaDb,
            version: self.version,
        })
    }
}

/// The settings staunch relies on, asked where the server does not report
/// them: `sql_mode` (lexing), `character_set_client` (text parameters) and
/// `autocommit` (transactions).
pub(crate) const SETTINGS_SQL: &str =
    "SELECT @@SESSION.sql_mode, @@SESSION.character_set_client, @@SESSION.autocommit";

/// `SETTINGS_SQL`'s answer.
pub(crate) type Settings = (Option<Vec<u8>>, Option<Vec<u8>>, Option<i64>);

impl SqlMode {
    /// The flags of an `sql_mode` value.
    pub(crate) fn of(sql_mode: &[u8]) -> SqlMode {
        let l = Lexing::default().with_sql_mode(sql_mode);
        SqlMode {
            no_backslash_escapes: l.no_backslash_escapes,
            ansi_quotes: l.ansi_quotes,
        }
    }
}

/// Who may cancel the statement running on a session, and when. One word:
/// the borrow number (high 32 bits), `RUNNING` (a statement through the
/// guard's methods is running) and `CANCELLING` (a cancel's `KILL QUERY` is
/// on its way).
///
/// A cancel takes effect only on the statement running when it was asked
/// for: it sets `CANCELLING` by CAS only while `RUNNING` is set for its
/// borrow, and while it is set no new statement begins (nor a new borrow),
/// so the `KILL QUERY` reaches that statement or, if it just ended, an idle
/// session (which the server ignores), never the next statement.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    word: AtomicU64,
    /// Statements and borrows waiting for a cancel to finish wait here
    /// (rare); held only to wait or notify.
    lock: Mutex<()>,
    cv: Condvar,
}

const RUNNING: u64 = 1;
const CANCELLING: u64 = 2;
const BORROW_SHIFT: u32 = 32;

impl Gate {
    /// The current borrow's number.
    pub(crate) fn borrow(&self) -> u32 {
        (self.word.load(Acquire) >> BORROW_SHIFT) as u32
    }

    /// Waits while a cancel is on its way (bounded by that cancel's own
    /// bound), then applies `f` to the word by CAS.
    fn update_when_quiet(&self, f: impl Fn(u64) -> u64) {
        let mut w = self.word.load(Acquire);
        loop {
            if w & CANCELLING != 0 {
                let g = lock(&self.lock);
                // Checked under the lock the canceller notifies under.
                if self.word.load(Acquire) & CANCELLING != 0 {
                    let _ = self.cv.wait_timeout(g, Duration::from_millis(50));
                }
                w = self.word.load(Acquire);
                continue;
            }
            match self.word.compare_exchange_weak(w, f(w), AcqRel, Acquire) {
                Ok(_) => return,
                Err(now) => w = now,
            }
        }
    }

    /// A statement begins.
    pub(crate) fn begin(&self) {
        self.update_when_quiet(|w| w | RUNNING);
    }

    /// The statement ended.
    pub(crate) fn end(&self) {
        self.word.fetch_and(!RUNNING, AcqRel);
    }

    /// The borrow ends: cancel handles taken during it no longer act.
    pub(crate) fn next_borrow(&self) {
        self.update_when_quiet(|w| ((w >> BORROW_SHIFT) + 1) << BORROW_SHIFT);
    }

    /// Claims the right to cancel the statement running in `borrow`; false
    /// if none is running (or another cancel is on its way).
    pub(crate) fn start_cancel(&self, borrow: u32) -> bool {
        let mut w = self.word.load(Acquire);
        loop {
            if (w >> BORROW_SHIFT) as u32 != borrow || w & RUNNING == 0 || w & CANCELLING != 0 {
                return false;
            }
            match self
                .word
                .compare_exchange_weak(w, w | CANCELLING, AcqRel, Acquire)
            {
                Ok(_) => return true,
                Err(now) => w = now,
            }
        }
    }

    /// The cancel's `KILL QUERY` is done (or failed): statements may begin.
    pub(crate) fn finish_cancel(&self) {
        self.word.fetch_and(!CANCELLING, AcqRel);
        let _g = lock(&self.lock);
        self.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_acts_only_on_the_running_statement_of_its_borrow() {
        let g = Gate::default();
        let b = g.borrow();
        assert!(!g.start_cancel(b), "nothing runs yet");
        g.begin();
        assert!(g.start_cancel(b));
        assert!(!g.start_cancel(b), "one cancel at a time");
        g.end();
        g.finish_cancel();
        assert!(!g.start_cancel(b), "the statement ended");
        g.next_borrow();
        g.begin();
        assert!(!g.start_cancel(b), "a handle of the last borrow");
        assert!(g.start_cancel(g.borrow()));
        g.finish_cancel();
    }

    #[test]
    fn a_statement_waits_for_a_cancel_on_its_way() {
        let g = Arc::new(Gate::default());
        g.begin();
        assert!(g.start_cancel(g.borrow()));
        g.end();
        let g2 = g.clone();
        let t = std::thread::spawn(move || {
            g2.begin();
            std::time::Instant::now()
        });
        std::thread::sleep(Duration::from_millis(100));
        let finished = std::time::Instant::now();
        g.finish_cancel();
        let began = t.join().unwrap();
        assert!(
            began >= finished,
            "the next statement began before the cancel was done"
        );
    }
}
