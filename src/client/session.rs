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

use std::fs::File;
use std::ops::{Deref, DerefMut};
use std::os::fd::AsRawFd;
use std::sync::atomic::{
    AtomicBool, AtomicU64, Ordering::AcqRel, Ordering::Acquire, Ordering::Relaxed,
};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use mysql::consts::SessionStateType;
use mysql::mysql_common::io::ParseBuf;
use mysql::prelude::Queryable;
use mysql::session_state_change::SessionStateChange;
use mysql::{Conn, LocalInfileHandler, SessionStateInfo};

use super::sql::Lexing;
use super::ConnectConfig;
use super::TlsMode;
use crate::sync::lock;
use crate::wire::{caps, status, Columns, Framer, OkInfo};

/// The server kind, for the statement time limit's variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    MariaDb,
    MySql,
}

impl Flavor {
    /// MariaDB sends "5.5.5-10.x.y-MariaDB" in its greeting (which the
    /// `mysql` crate reads as 5.5.5), or a version from 10 up; MySQL is 5.x,
    /// 8.x, 9.x.
    fn of(conn: &Conn) -> Flavor {
        match conn.server_version() {
            (5, 5, 5) => Flavor::MariaDb,
            (major, _, _) if major >= 10 => Flavor::MariaDb,
            _ => Flavor::MySql,
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

/// One MySQL session: the connection, what staunch knows of its state, and
/// the gate its cancel handles go through. Derefs to [`mysql::Conn`].
///
/// Made by [`MysqlConnector`](crate::MysqlConnector); a pool hands it out
/// inside a [`PooledConn`](crate::PooledConn).
pub struct Session {
    pub(crate) conn: Conn,
    pub(crate) state: State,
    pub(crate) gate: Arc<Gate>,
    pub(crate) flavor: Flavor,
    /// The server's version for executable comments (see `sql::Lexing`),
    /// once known.
    pub(crate) version: Option<u32>,
    /// The current database may not be the configured one: a borrower used
    /// the raw `mysql::Conn`, which may have run `USE`, and the reset that
    /// followed keeps the database. Selected again with the pool's settings
    /// (see `init`), before the next statement through the guard.
    pub(crate) schema_unsure: bool,
    /// The server reports no system variable in this session: its global
    /// `session_track_system_variables` is empty, and MariaDB then reports
    /// none even after the session sets its own list, only that the state
    /// changed. Found by `init`.
    pub(crate) unreported: bool,
    /// The session's socket is plain (`tls_mode=disabled`): the protocol
    /// layer may read and write it (see [`Session::wire`]).
    pub(crate) plain: bool,
    /// The protocol layer on a duplicate of the socket, once a statement
    /// has used it; dropped when the connection is reset.
    /// (Boxed: the pool's slot holds a session inline.)
    pub(crate) wire: Option<Box<WireSide>>,
    /// Set when the server asked the crate for a local file (`LOAD DATA
    /// LOCAL INFILE`) through the handler `refuse_local_files` installs;
    /// read by [`Session::asked_for_local_file`].
    pub(crate) local_file_asked: Arc<AtomicBool>,
    /// Bytes read by the protocol layer's handles dropped so far (a reset
    /// takes a new one), for [`Session::crate_received`].
    pub(crate) wire_received: u64,
    /// When [`Session::worn`] last asked the kernel (coarse clock, ns).
    pub(crate) wear_checked_ns: u64,
}

/// The protocol layer's side of a session: its framer on the duplicate
/// socket, and the buffer each result set's column definitions are read
/// into (kept, so that after the first statements no answer allocates for
/// them).
pub(crate) struct WireSide {
    pub(crate) framer: Framer<File>,
    pub(crate) columns: Columns,
    /// A text statement whose answer is being read as it arrives
    /// (`PooledConn::open_text_wire`), not finished yet.
    pub(crate) open: Option<WireOpen>,
}

/// The protocol layer's socket (a duplicate of the session's) read
/// without waiting: what has arrived of a streamed answer
/// (`PooledConn::next_wire_row`).
impl crate::wire::ReadNow for File {
    fn read_now(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        crate::sys::recv_now(std::os::fd::AsRawFd::as_raw_fd(self), buf)
    }
}

/// A text statement open on the protocol layer (see [`WireSide::open`]).
pub(crate) struct WireOpen {
    /// The packet that closed its first result set, once read.
    pub(crate) first_end: Option<OkInfo>,
    /// The text ends a transaction (`conn::ends_transaction`).
    pub(crate) ends_txn: bool,
    /// Sent only (`PooledConn::send_text_wire`): no byte of its answer
    /// read yet.
    pub(crate) sent_only: bool,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("connection_id", &self.conn.connection_id())
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Deref for Session {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.conn
    }
}

impl DerefMut for Session {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.conn
    }
}

impl Session {
    /// The connection alone (staunch stops tracking it, and its refusal of
    /// local files goes: the crate's own way applies).
    pub fn into_conn(mut self) -> Conn {
        self.conn.set_local_infile_handler(None);
        self.conn
    }

    /// staunch reads no local files: when the server asks the crate for
    /// one (`LOAD DATA LOCAL INFILE`), the crate sends none, which the
    /// server takes as an empty file, and the statement "succeeds" with
    /// nothing loaded. This handler sends none either, and notes the
    /// request, so that the statement reports the refusal as the protocol
    /// layer does (`src/wire`: error 2068, the session still in step).
    fn refuse_local_files(&mut self) {
        let asked = Arc::clone(&self.local_file_asked);
        asked.store(false, Relaxed);
        self.conn
            .set_local_infile_handler(Some(LocalInfileHandler::new(move |_, _| {
                asked.store(true, Relaxed);
                Ok(())
            })));
    }

    /// Whether the server asked for a local file during this statement
    /// (`PooledConn::begin` clears the mark as each statement starts).
    pub(crate) fn asked_for_local_file(&self) -> bool {
        self.local_file_asked.load(Relaxed)
    }

    /// Sets up a new connection as a session: `init_sql`, then tracking and
    /// the statement time limit (see `init`).
    pub(crate) fn start(conn: Conn, cfg: &ConnectConfig) -> mysql::Result<Session> {
        let version = match conn.server_version() {
            // MariaDB's greeting: the real version is not exposed.
            (5, 5, 5) => None,
            (a, b, c) => Some(u32::from(a) * 10000 + u32::from(b) * 100 + u32::from(c)),
        };
        let mut s = Session {
            version,
            flavor: Flavor::of(&conn),
            conn,
            state: State::default(),
            gate: Arc::new(Gate::default()),
            schema_unsure: false,
            unreported: false,
            plain: cfg.tls_mode == TlsMode::Disabled,
            wire: None,
            local_file_asked: Arc::default(),
            wire_received: 0,
            wear_checked_ns: 0,
        };
        s.refuse_local_files();
        s.init(cfg)?;
        Ok(s)
    }

    /// The pool's settings, on a fresh (or just reset) session: one
    /// statement, after `init_sql` if set, after the configured database
    /// again if it is unsure. Leaves the state clean.
    pub(crate) fn init(&mut self, cfg: &ConnectConfig) -> mysql::Result<()> {
        if std::mem::take(&mut self.schema_unsure) {
            if let Some(db) = &cfg.database {
                self.conn.select_db(db)?;
            }
        }
        // `init_sql` first, so that the settings statement after it reports
        // what it left: its OK packet may not report all it changed (a
        // multi-statement, `SET NAMES`), and the settings statement assigns
        // each variable staunch reads its own value.
        if let Some(init) = cfg.init_sql.as_deref() {
            self.conn.query_drop(init)?;
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
        self.conn.query_drop(&sql)?;
        let reported = self.conn.session_state_changes().is_ok_and(|cs| {
            cs.iter()
                .any(|c| c.data_type() == SessionStateType::SESSION_TRACK_SYSTEM_VARIABLES)
        });
        self.observe();
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
    pub(crate) fn ask_settings(&mut self) -> mysql::Result<()> {
        let now: Option<Settings> = self.conn.query_first(SETTINGS_SQL)?;
        self.take_settings(now.unwrap_or_default());
        Ok(())
    }

    /// What `SETTINGS_SQL` answered becomes what staunch knows.
    pub(crate) fn take_settings(&mut self, (mode, charset, auto): Settings) {
        let autocommit_was_off = self.state.autocommit_off;
        self.state.sql_mode = Some(SqlMode::of(&mode.unwrap_or_default()));
        self.state.client_charset = Some(ClientCharset::of(&charset.unwrap_or_default()));
        self.state.autocommit_off = auto == Some(0);
        if autocommit_was_off && !self.state.autocommit_off {
            // Turning autocommit on committed what was open (see `observe`).
            self.state.txn_open = self.state.tables_locked;
        }
        self.state.settings_unseen = false;
    }

    /// `COM_RESET_CONNECTION` (rolls back, drops variables, temporary tables
    /// and prepared statements), then the pool's settings again, now or
    /// before the next statement (see `State::tracked`). The reset keeps the
    /// current database: when a tracked `USE` changed it, the configured one
    /// is selected again now; when it may have changed unseen (`unknown`: the
    /// borrower used the raw `mysql::Conn`), with the pool's settings, so a
    /// raw borrow costs one round trip on return, as with `mysql::Pool`.
    pub(crate) fn reset(&mut self, cfg: &ConnectConfig, unknown: bool) -> mysql::Result<()> {
        // The client side of the session: a `LOAD DATA LOCAL` handler set
        // on the raw connection (a closure with the borrower's data) must
        // not serve the next borrower's `LOAD DATA LOCAL`, as `mysql::Pool`
        // clears it too; staunch's own refusal takes its place.
        self.refuse_local_files();
        // The crate may open a new connection where the server has no
        // COM_RESET_CONNECTION: the layer's handle is taken anew.
        if let Some(w) = self.wire.take() {
            self.wire_received += w.framer.received();
        }
        self.conn.reset()?;
        if let (true, Some(db)) = (self.state.schema_changed, &cfg.database) {
            self.conn.select_db(db)?;
        } else if unknown {
            self.schema_unsure = true;
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
    pub(crate) fn set_limit(&mut self, limit: Option<Duration>) -> mysql::Result<()> {
        if self.state.limit == limit {
            return Ok(());
        }
        let sql = format!("SET SESSION {}", self.limit_assignment(limit));
        self.conn.query_drop(sql)?;
        self.state.limit = limit;
        // Its own state-change report says nothing of the borrower's.
        Ok(())
    }

    /// Reads what the last OK packet reports (see the module doc): the
    /// transaction state if it changed, whether anything else did. Call it
    /// after each statement, once its answer is read to the end.
    pub(crate) fn observe(&mut self) {
        let Session {
            conn,
            state,
            unreported,
            ..
        } = self;
        let no_backslash_escapes = conn.no_backslash_escape();
        match conn.session_state_changes() {
            Ok(changes) => {
                Session::observe_report(state, *unreported, &changes, no_backslash_escapes)
            }
            // A packet staunch cannot parse: assume the worst.
            Err(_) => state.dirty = true,
        }
    }

    /// The protocol layer (`src/wire`) on this session's socket, for a text
    /// statement, where it can read the session's answers as the `mysql`
    /// crate would: on a plain socket (a TLS session's state is inside the
    /// crate), in a session whose server reports its variables (its OK
    /// packets then carry the session-state block the layer is told of,
    /// `CLIENT_SESSION_TRACK`). The crate and the layer take turns on the
    /// socket, each reading every answer to its end, so neither finds the
    /// other's bytes. None where it cannot (the statement goes through the
    /// crate).
    pub(crate) fn wire(&mut self) -> Option<&mut WireSide> {
        if !self.may_use_wire() {
            return None;
        }
        if self.wire.is_none() {
            // The most one packet may hold, as the crate takes it: the
            // server's max_allowed_packet (asked once; `PooledConn::plan`
            // asks and keeps it too).
            let max = match self.state.max_allowed_packet {
                Some(m) => m,
                None => {
                    let m: Option<u64> = self
                        .conn
                        .query_first("SELECT @@SESSION.max_allowed_packet")
                        .ok()
                        .flatten()?;
                    let m = usize::try_from(m?).unwrap_or(usize::MAX);
                    self.state.max_allowed_packet = Some(m);
                    m
                }
            };
            let socket = crate::sys::DupFd::new(self.conn.as_raw_fd())?.into_file();
            let mut f = Framer::new(socket, caps::PROTOCOL_41 | caps::SESSION_TRACK);
            f.set_max_packet(max);
            self.wire = Some(Box::new(WireSide {
                framer: f,
                columns: Columns::new(),
                open: None,
            }));
        }
        self.wire.as_deref_mut()
    }

    /// Between borrows: the protocol layer's buffers back to their first
    /// size (see `wire::packet`), so an idle connection holds a few KiB of
    /// them whatever its last borrower read.
    pub(crate) fn give_back_buffers(&mut self) {
        if let Some(w) = self.wire.as_deref_mut() {
            if w.open.is_none() {
                w.framer.give_back();
            }
        }
    }

    /// Bytes the `mysql` crate has read from this session's socket since
    /// it was opened: what the kernel received on it less what the
    /// protocol layer read (None over a unix socket, where the kernel
    /// counts nothing). The crate reads into a 4 MiB buffer that each read
    /// fills a little further on until it wraps to its start, so about this
    /// many bytes of that buffer (at most 4 MiB) are resident: what the
    /// pool's return bounds (`MysqlConnector::recycle`).
    pub(crate) fn crate_received(&self) -> Option<u64> {
        let total = crate::sys::tcp_bytes_received(self.conn.as_raw_fd())?;
        let wire = self.wire_received + self.wire.as_ref().map_or(0, |w| w.framer.received());
        Some(total.saturating_sub(wire))
    }

    /// Whether the `mysql` crate has read more than `max` bytes on this
    /// session ([`Session::crate_received`]), asked of the kernel at most
    /// once per `every_ns` (a system call, ~0.9 µs on a VM, against a
    /// checkout's few µs of CPU): false in between.
    pub(crate) fn worn(&mut self, max: u64, every_ns: u64) -> bool {
        let now = crate::sys::coarse_now_ns();
        if now.saturating_sub(self.wear_checked_ns) < every_ns {
            return false;
        }
        self.wear_checked_ns = now;
        self.crate_received().is_some_and(|n| n > max)
    }

    /// Whether [`wire`](Session::wire) may answer (it may still not: the
    /// first time it asks the server, and shares the socket).
    pub(crate) fn may_use_wire(&self) -> bool {
        self.plain && !self.unreported
    }

    /// [`observe`](Session::observe) for a statement the protocol layer
    /// ran (`src/wire`): `end` is its last closing packet.
    pub(crate) fn observe_wire(&mut self, end: &OkInfo) {
        let mut data = ParseBuf(&end.session_state);
        let mut changes = Vec::new();
        while !data.is_empty() {
            match data.parse::<SessionStateInfo<'_>>(()) {
                Ok(c) => changes.push(c),
                Err(_) => {
                    self.state.dirty = true;
                    return;
                }
            }
        }
        let nbe = end.status & status::NO_BACKSLASH_ESCAPES != 0;
        Session::observe_report(&mut self.state, self.unreported, &changes, nbe);
        // The packet's status flags are the server's own word on the
        // transaction and on autocommit, after every statement, reads
        // included: under autocommit=0 a read of a transactional table
        // opens a transaction (`IN_TRANS`), a `SELECT 1` does not. They
        // replace the assumption `begin` made. Locked tables are not a
        // transaction to the server but are to a return (see `txn_open`).
        self.state.txn_open = end.status & status::IN_TRANS != 0 || self.state.tables_locked;
        self.state.autocommit_off = end.status & status::AUTOCOMMIT == 0;
    }

    /// What a statement's last OK packet reported: its session-state
    /// changes and its `NO_BACKSLASH_ESCAPES` status flag.
    fn observe_report(
        state: &mut State,
        unreported: bool,
        changes: &[SessionStateInfo<'_>],
        no_backslash_escapes: bool,
    ) {
        let autocommit_was_off = state.autocommit_off;
        let mut txn_reported = false;
        for c in changes {
            match c.data_type() {
                SessionStateType::SESSION_TRACK_TRANSACTION_STATE => {
                    // A length-prefixed string, "________" when idle: the
                    // first byte is T (explicit) or I (implicit), the last L
                    // (LOCK TABLES); anything but underscores is a
                    // transaction to end.
                    let data = c.data_ref();
                    let txn = data.get(1..).unwrap_or(data);
                    txn_reported = true;
                    state.txn_open = txn.iter().any(|b| *b != b'_');
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
        if autocommit_was_off && !state.autocommit_off && !txn_reported {
            // Turning autocommit on commits what was open; the server
            // reports a change of state only when its last report said a
            // transaction was open, and `begin` assumed one under
            // autocommit=0. What is left is what was last reported of the
            // locks.
            state.txn_open = state.tables_locked;
        }
        // The status flag of this OK packet is the server's own word.
        if let Some(m) = &mut state.sql_mode {
            m.no_backslash_escapes = no_backslash_escapes;
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
