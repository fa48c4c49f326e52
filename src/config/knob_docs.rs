//! What every knob of [`KNOBS`](super::KNOBS) means, for people: the table
//! `docs/knobs.md` is generated from (`scripts/check-knobs.sh --update`
//! writes it; `scripts/check-knobs.sh`, in CI, fails when it is stale).
//!
//! The names come from `KNOBS`, the one list the parser reads: the tests
//! below fail when a knob is missing here or named here and unknown there,
//! and when a default written here is not what an untouched [`Builder`]
//! holds.

/// One knob's entry in the reference.
pub(crate) struct KnobDoc {
    pub name: &'static str,
    /// The default as a value the knob accepts (checked against
    /// `Builder::new()`), or, for a default no value spells, a phrase
    /// listed in `NOT_A_VALUE`.
    pub default: &'static str,
    pub range: &'static str,
    pub meaning: &'static str,
}

/// A section of the reference: its heading, a sentence, and its knobs.
pub(crate) struct Section {
    pub heading: &'static str,
    pub intro: &'static str,
    pub knobs: &'static [KnobDoc],
}

const fn k(
    name: &'static str,
    default: &'static str,
    range: &'static str,
    meaning: &'static str,
) -> KnobDoc {
    KnobDoc {
        name,
        default,
        range,
        meaning,
    }
}

/// Defaults that are a phrase, not a value the knob takes.
#[cfg(test)]
const NOT_A_VALUE: &[&str] = &[
    "—",
    "on with several hosts",
    "the pool's",
    "the program's file name",
    "twice `max_size`, at least 64",
];

pub(crate) const SECTIONS: &[Section] = &[
    Section {
        heading: "The pool",
        intro: "",
        knobs: &[
            k("max_size", "10", "1–4096", "most connections, idle and in use; changeable while the pool runs (`set_max_size`, `staunch_pool_set_max_size`)"),
            k("max_size_cap", "twice `max_size`, at least 64", "`max_size`–4096", "the largest `max_size` can be raised to while the pool runs (the slot array is this long, 256 bytes a slot)"),
            k("min_idle", "0", "0–`max_size`", "idle connections kept open by the housekeeper; changeable while the pool runs (`set_min_idle`)"),
            k("connection_timeout", "10s", "1ms–1h", "longest `get()` waits"),
            k("connect_timeout", "3s", "1ms–1h", "hard deadline of one whole connect (TCP, greeting, auth, session set-up)"),
            k("validation_timeout", "1s", "1ms–1h", "bound on one `COM_PING`, and on the rollback/reset on return"),
            k("idle_timeout", "10m", "≥10ms or off", "idle connections above `min_idle` close after this"),
            k("max_lifetime", "30m", "≥10ms or off", "connections retire after this, minus up to 2.5 % random jitter"),
            k("keepalive_interval", "2m", "≥10ms or off, < `max_lifetime`", "idle connections are validated this often (minus up to 10 % jitter)"),
            k("leak_detection_threshold", "off", "≥10ms", "report a connection borrowed longer than this, naming the borrowing thread and where it borrowed (its stack)"),
            k("adder_threads", "2", "1–64", "connect threads kept ready (more start when all are stuck)"),
            k("alive_bypass_window", "500ms", "0–1h", "a connection idle less than this is handed out without validation"),
            k("initialization_fail_timeout", "off", "0–1h", "when set, opening the pool makes one connection first and fails if it cannot"),
            k("pool_name", "—", "1–128 bytes, no control characters", "the pool's name in metrics (`db_client_connection_pool_name`) and logs; `staunch-N` when unset (see [Metrics](metrics.md))"),
            k("timings", "false", "true/false", "time every borrow and statement from the start (from the first metrics export otherwise; two clock reads each)"),
        ],
    },
    Section {
        heading: "Statements and sessions",
        intro: "",
        knobs: &[
            k("query_timeout", "off", "≥1ms", "statement time limit: set on the server (MariaDB `max_statement_time`, MySQL `max_execution_time`), and a statement whose server has not answered 1 s past it is cut off (see [Statements](statements.md#statements-time-limits-cancellation-and-the-return-path))"),
            k("liveness_threshold", "5s", "100ms–1h, or `0`/`off`", "a statement that has waited this long for its answer, with nothing received, has its server checked on a side connection (answers? same server? still runs this connection?); cut off with `ServerUnresponsive` if not, never if so (see [Guarantees](guarantees.md)). Turn it off behind a proxy that gives clients connection ids of its own (ProxySQL, MaxScale)"),
            k("reset_on_return", "false", "", "`COM_RESET_CONNECTION` on every return, changed or not (a changed session is always reset, an open transaction always rolled back)"),
            k("init_sql", "—", "", "a statement run on every new session and after every reset (e.g. `SET SESSION sql_mode='ANSI'`), just before the pool's own settings statement, whose answer then reports the `sql_mode`, character set and `autocommit` it left"),
            k("autocommit", "true", "", "every session's `autocommit`, set with the pool's settings statement on each new session and after each reset; `false` as PEP 249 wants (each borrow's first statement opens a transaction the borrower ends)"),
            k("found_rows", "false", "", "`CLIENT_FOUND_ROWS`: an UPDATE reports the rows it matched, not the rows it changed"),
            k("interpolate_params", "false", "", "send statements with parameters by client-side interpolation over the text protocol instead of server-side prepare (see [Values](statements.md#values-and-the-two-ways-to-send-a-statement))"),
            k("text_without_params", "false", "", "send a statement without parameters as text, as written (one round trip, never prepared, several statements separated by `;` allowed), as PyMySQL, go-sql-driver and Connector/J do (the Python, Go and JDBC faces default it to `true`); a statement may still ask for a way (`SendAs`, `STAUNCH_QUERY_PREPARE`)"),
        ],
    },
    Section {
        heading: "Where to connect",
        intro: "In a URL these are its parts (`mysql://user:password@host:port/database`); as knobs they serve `Builder::set` and the C ABI's `staunch_options_set`.",
        knobs: &[
            k("socket", "—", "", "connect through this unix socket instead of TCP"),
            k("host", "127.0.0.1", "", "the server's host name or address (more hosts: the URL's `h1,h2,h3`)"),
            k("port", "3306", "1–65535", "the server's TCP port"),
            k("user", "—", "", "the user to log in as"),
            k("password", "—", "", "that user's password (never printed)"),
            k("database", "—", "", "the database every session starts in (selected again after a reset)"),
        ],
    },
    Section {
        heading: "TLS",
        intro: "See [TLS](tls.md).",
        knobs: &[
            k("tls_mode", "disabled", "`disabled`, `preferred`, `required`, `verify_ca`, `verify_identity`", "whether and how connections are encrypted (see [TLS](tls.md))"),
            k("tls_ca", "—", "PEM file", "CA certificate(s) the server's certificate must chain to"),
            k("tls_cert", "—", "PEM file", "client certificate (chain), with `tls_key`"),
            k("tls_key", "—", "PEM file", "private key of `tls_cert` (only its path is ever printed)"),
            k("tls_fingerprint", "—", "SHA-256 hex, several separated by `,`", "pins the server's certificate by fingerprint, whoever signed it (Connector/C's `tls-peer-fingerprint`); with `verify_ca` it may stand instead of `tls_ca`"),
            k("server_public_key", "—", "PEM file", "the server's RSA public key, for a `caching_sha2_password` user's full authentication over plain TCP"),
            k("get_server_public_key", "false", "", "over plain TCP without `server_public_key`, ask the server for its RSA key (MySQL's `get-server-public-key`; a man in the middle can swap it)"),
            k("allow_cleartext_password", "false", "", "let `mysql_clear_password` (PAM, LDAP) send the password as it is: over TLS or a unix socket only"),
            k("connect_attrs", "—", "`name:value,name:value`", "connection attributes for the server's `performance_schema.session_connect_attrs` (go-sql-driver's and Connector/J's `connectionAttributes` syntax; a value ends at the next `,`). Sent after staunch's own `_client_name` (`staunch`), `_client_version`, `_os`, `_platform`, `_pid`, `program_name` and `staunch_version`. Names starting with `_`, duplicates, a password among the values, or more than 64 KiB in all are `Config` errors"),
            k("program_name", "the program's file name", "", "the attribute `program_name` (a `program_name` in `connect_attrs` wins)"),
        ],
    },
    Section {
        heading: "Topology",
        intro: "Several hosts: a primary and replicas ([topology](topology.md)) or a Galera cluster ([Galera](galera.md)).",
        knobs: &[
            k("topology", "auto", "`auto`, `single`, `replication`, `galera`", "`auto`: one host is `single`, several are replication or Galera as the servers say; `single`, `replication`, `galera` force it"),
            k("monitor", "on with several hosts", "`true`, `false`", "run `staunch-monitor`"),
            k("ping_type", "select", "`select`, `connect`, `insert`", "how the writer's probe proves it alive: `select` (the probe in [topology](topology.md)), `connect` (a new connection for each probe of the writer), `insert` (also upserts into `heartbeat_table` while the writer is writable)"),
            k("ping_interval", "1s", "", "how often every host is probed in the steady state"),
            k("ping_timeout", "2s", "", "hard bound on one probe (its socket is shut down at the deadline)"),
            k("failure_threshold", "4", "", "failed probes of the writer in a row (at most one counted per `ping_interval`) before the secondary check, when no promotion is seen"),
            k("alive_error_codes", "1040,1042,1043,1044,1045,1129,1130,1203,1226,1251,1275", "comma-separated error numbers", "server errors that prove the server alive (MHA's list): reported, not counted"),
            k("secondary_check", "replicas", "`replicas`, `none`", "ask the replicas whether the primary still sends them anything (`none`: skip); `Builder::secondary_check` adds your own"),
            k("max_replication_lag", "30s", "or off", "replicas further behind (or with broken replication) get no reads"),
            k("read_fallback", "writer", "`writer`, `fail`", "`fail`: `get_read` fails when no replica qualifies"),
            k("heartbeat_table", "staunch_heartbeat", "", "table for `ping_type=insert` (created if missing)"),
            k("min_failover_interval", "60s", "", "least time between two writer changes"),
            k("max_transactions_behind", "100", "", "Galera: a node whose `wsrep_local_recv_queue` passes this gets no reads (ProxySQL's knob of the same name)"),
            k("monitor_user", "the pool's", "", "user of the monitor's own connections, with `monitor_password`: needed when the application's user lacks `SLAVE MONITOR` (MariaDB) / `REPLICATION CLIENT` (MySQL); see [the monitor's user](topology.md)"),
            k("monitor_password", "the pool's", "", "password of `monitor_user` (never printed)"),
        ],
    },
];

/// `docs/knobs.md`.
pub(crate) fn markdown() -> String {
    let mut s = String::from(
        "<!-- Generated from src/config/knob_docs.rs by scripts/check-knobs.sh --update: edit that table, not this file. -->\n\
         # Knobs\n\n\
         Every knob is a builder setter and a URL parameter (durations: `250ms`, `2s`,\n\
         `5m`, `1h`; optional ones accept `off`). An unknown knob or a bad value is an\n\
         `ErrorKind::Config` error naming the knob.\n",
    );
    for sec in SECTIONS {
        s.push_str(&format!("\n## {}\n\n", sec.heading));
        if !sec.intro.is_empty() {
            s.push_str(sec.intro);
            s.push_str("\n\n");
        }
        s.push_str("| knob | default | range | meaning |\n|---|---|---|---|\n");
        for kd in sec.knobs {
            let default = if kd.default == "—" || kd.default.contains(' ') {
                kd.default.to_string()
            } else {
                format!("`{}`", kd.default)
            };
            s.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                kd.name, default, kd.range, kd.meaning
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::{Builder, KNOBS};
    use super::*;

    fn docs() -> impl Iterator<Item = &'static KnobDoc> {
        SECTIONS.iter().flat_map(|s| s.knobs.iter())
    }

    #[test]
    fn every_knob_is_documented_once() {
        for kn in KNOBS {
            let n = docs().filter(|d| d.name == kn.name).count();
            assert_eq!(
                n, 1,
                "knob {} is documented {n} times in src/config/knob_docs.rs",
                kn.name
            );
        }
        for d in docs() {
            assert!(
                KNOBS.iter().any(|kn| kn.name == d.name),
                "src/config/knob_docs.rs documents {}, which is no knob",
                d.name
            );
        }
    }

    #[test]
    fn documented_defaults_are_the_defaults() {
        let untouched = Builder::new().cfg;
        for d in docs() {
            if NOT_A_VALUE.contains(&d.default) {
                continue;
            }
            let mut b = Builder::new();
            b.set_knob(d.name, d.default)
                .unwrap_or_else(|e| panic!("{}'s documented default {:?}: {e}", d.name, d.default));
            assert!(
                b.cfg == untouched,
                "{}'s documented default {:?} is not its default",
                d.name,
                d.default
            );
        }
    }

    /// `docs/knobs.md` is what `markdown()` writes; with
    /// `STAUNCH_UPDATE_KNOBS=1` it is written.
    #[test]
    fn knob_reference_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/knobs.md");
        let want = markdown();
        if std::env::var_os("STAUNCH_UPDATE_KNOBS").is_some() {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/knobs.md is stale: run scripts/check-knobs.sh --update"
        );
    }
}
