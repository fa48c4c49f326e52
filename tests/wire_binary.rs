//! The wire layer's binary protocol (prepared statements) against a real
//! MariaDB: every answer compared with what the `mysql` crate's own `exec`
//! returns for the same statement on a connection of its own; parameters,
//! long data, the several results of a `CALL`, errors, the statement cache,
//! and the allocations of a row walked.

#[cfg(not(feature = "mimalloc"))]
use std::alloc::{GlobalAlloc, Layout, System};
#[cfg(not(feature = "mimalloc"))]
use std::cell::Cell as StdCell;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Duration;

use mysql::prelude::Queryable;
use mysql::Value;
use staunch::wire::{
    caps, status, types, BinaryColumns, BinaryNext, Cell, Date, DateTime, Framer, Login, Param,
    Prepared, Response, StmtCache, Stream, Time, WireError,
};
use staunch_testkit::{MariaDb, ServerOpts};

/// Counts the allocations of the thread that makes them (tests run on
/// threads of their own), to show a row walked allocates nothing. Not
/// with the `mimalloc` feature, which makes the library's allocator the
/// program's.
#[cfg(not(feature = "mimalloc"))]
struct Counting;

#[cfg(not(feature = "mimalloc"))]
thread_local! {
    static ALLOCS: StdCell<u64> = const { StdCell::new(0) };
}

// SAFETY: every call goes to `System` unchanged; the count is a
// thread-local `Cell` that needs no allocation.
#[cfg(not(feature = "mimalloc"))]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: as the caller's contract.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: as the caller's contract.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: as the caller's contract.
        unsafe { System.realloc(p, l, n) }
    }
}

#[cfg(not(feature = "mimalloc"))]
#[global_allocator]
static COUNTING: Counting = Counting;

#[cfg(not(feature = "mimalloc"))]
fn allocations() -> u64 {
    ALLOCS.with(StdCell::get)
}

type Session = Framer<Stream<TcpStream>>;

/// A session the layer opens itself (with `CLIENT_DEPRECATE_EOF`).
fn own(s: &MariaDb) -> Session {
    let stream =
        TcpStream::connect_timeout(&s.addr(), Duration::from_secs(10)).expect("TCP connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let (f, _) = Framer::connect(
        stream,
        &Login {
            user: "app",
            password: "app-secret",
            database: Some("staunch_test"),
            extra_caps: caps::MULTI_STATEMENTS,
            ..Login::default()
        },
        None,
    )
    .expect("log in");
    assert_ne!(f.caps() & caps::DEPRECATE_EOF, 0);
    f
}

/// A connection the crate opened (which never asks for
/// `CLIENT_DEPRECATE_EOF`), and the layer on a duplicate of its socket:
/// the old EOF packets. Only for statements whose prepare has no result
/// columns (see `a_call_answers_several_results`).
fn borrowed(s: &MariaDb) -> (mysql::Conn, Framer<TcpStream>) {
    let conn = mysql::Conn::new(s.app_opts()).expect("connect");
    // SAFETY: the fd is the crate's open socket, borrowed only to dup it.
    let fd = unsafe { BorrowedFd::borrow_raw(conn.as_raw_fd()) }
        .try_clone_to_owned()
        .expect("dup");
    let stream = TcpStream::from(fd);
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    (conn, Framer::new(stream, caps::PROTOCOL_41))
}

fn crate_conn(s: &MariaDb) -> mysql::Conn {
    mysql::Conn::new(s.app_opts()).expect("connect")
}

/// A cell as the crate's binary decoding gives it (an unsigned integer
/// that fits an `i64` is an `Int` there).
fn value(c: Cell<'_>) -> Value {
    match c {
        Cell::Null => Value::NULL,
        Cell::Int(v) => Value::Int(v),
        Cell::UInt(v) => i64::try_from(v).map_or(Value::UInt(v), Value::Int),
        Cell::Float(v) => Value::Float(v),
        Cell::Double(v) => Value::Double(v),
        Cell::Bytes(b) => Value::Bytes(b.to_vec()),
        Cell::Date(d) => Value::Date(d.year, d.month, d.day, 0, 0, 0, 0),
        Cell::DateTime(t) => Value::Date(
            t.date.year,
            t.date.month,
            t.date.day,
            t.hour,
            t.minute,
            t.second,
            t.micros,
        ),
        Cell::Time(t) => Value::Time(t.negative, t.days, t.hours, t.minutes, t.seconds, t.micros),
    }
}

/// A parameter as the crate binds it.
fn param_value(p: &Param<'_>) -> Value {
    match *p {
        Param::Null | Param::Long(_) => Value::NULL,
        Param::Int(v) => Value::Int(v),
        Param::UInt(v) => Value::UInt(v),
        Param::Float(v) => Value::Float(v),
        Param::Double(v) => Value::Double(v),
        Param::Bytes(b, _) => Value::Bytes(b.to_vec()),
        Param::Date(d) => Value::Date(d.year, d.month, d.day, 0, 0, 0, 0),
        Param::DateTime(t) => value(Cell::DateTime(t)),
        Param::Time(t) => value(Cell::Time(t)),
    }
}

/// One result of an execute: its columns (name, type, flags) and rows, or
/// an OK's affected rows.
#[derive(Debug, PartialEq)]
enum Answer {
    Ok(u64),
    Rows(Vec<(Vec<u8>, u8, u16)>, Vec<Vec<Value>>),
}

fn by_crate(conn: &mut mysql::Conn, sql: &str, params: Vec<Value>) -> Vec<Answer> {
    let mut out = Vec::new();
    let mut result = conn
        .exec_iter(sql, mysql::Params::Positional(params))
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    while let Some(mut set) = result.iter() {
        let cols: Vec<_> = set
            .columns()
            .as_ref()
            .iter()
            .map(|c| {
                (
                    c.name_ref().to_vec(),
                    c.column_type() as u8,
                    c.flags().bits(),
                )
            })
            .collect();
        let affected = set.affected_rows();
        let rows: Vec<Vec<Value>> = set.by_ref().map(|r| r.unwrap().unwrap()).collect();
        if cols.is_empty() {
            out.push(Answer::Ok(affected));
        } else {
            out.push(Answer::Rows(cols, rows));
        }
    }
    out
}

/// Runs `stmt` with `params` on the layer and reads every result.
fn by_wire<S: Read + Write>(
    f: &mut Framer<S>,
    stmt: &mut Prepared,
    params: &[Param<'_>],
) -> Result<Vec<Answer>, WireError> {
    f.send_execute(stmt, params)?;
    read_all(f, Some(stmt))
}

/// Reads every result of the command sent; the first with `stmt`'s
/// columns when it was an execute.
fn read_all<S: Read + Write>(
    f: &mut Framer<S>,
    mut stmt: Option<&mut Prepared>,
) -> Result<Vec<Answer>, WireError> {
    let mut out = Vec::new();
    let mut columns = BinaryColumns::new();
    loop {
        let response = match stmt.take() {
            Some(stmt) => f.read_execute_response(stmt, &mut columns)?,
            None => f.read_binary_response(&mut columns)?,
        };
        let more = match response {
            Response::Ok(ok) => {
                out.push(Answer::Ok(ok.affected_rows));
                ok.status
            }
            Response::ResultSet => {
                let cols = columns
                    .defs()
                    .iter()
                    .map(|c| {
                        let c = c.expect("a column definition");
                        (c.name.to_vec(), c.column_type, c.flags)
                    })
                    .collect();
                let mut rows = Vec::new();
                let end = loop {
                    match f.next_binary_row(&columns)? {
                        BinaryNext::Row(r) => rows.push(r.cells().map(value).collect()),
                        BinaryNext::End(end) => break end,
                    }
                };
                out.push(Answer::Rows(cols, rows));
                end.status
            }
        };
        if more & status::MORE_RESULTS_EXISTS == 0 {
            return Ok(out);
        }
    }
}

fn exec<S: Read + Write>(f: &mut Framer<S>, sql: &str, params: &[Param<'_>]) -> Vec<Answer> {
    let mut stmt = f
        .prepare(sql.as_bytes())
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let out = by_wire(f, &mut stmt, params).unwrap_or_else(|e| panic!("{sql}: {e}"));
    f.close_statement(stmt.id()).unwrap();
    out
}

/// Both clients, the same statement and parameters, the same answers.
fn same<S: Read + Write>(
    f: &mut Framer<S>,
    conn: &mut mysql::Conn,
    sql: &str,
    params: &[Param<'_>],
) -> Vec<Answer> {
    let mine = exec(f, sql, params);
    let theirs = by_crate(conn, sql, params.iter().map(param_value).collect());
    assert_eq!(mine, theirs, "{sql}");
    mine
}

/// Runs text SQL on the layer's session (set-up statements).
fn text<S: Read + Write>(f: &mut Framer<S>, sql: &str) {
    f.send_query(sql.as_bytes()).unwrap();
    let mut columns = staunch::wire::Columns::new();
    loop {
        match f
            .read_response(&mut columns)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
        {
            Response::Ok(ok) if ok.status & status::MORE_RESULTS_EXISTS == 0 => return,
            Response::Ok(_) => {}
            Response::ResultSet => loop {
                if let staunch::wire::Next::End(end) = f.next_row().unwrap() {
                    if end.status & status::MORE_RESULTS_EXISTS == 0 {
                        return;
                    }
                    break;
                }
            },
        }
    }
}

const ALL_TYPES: &str = "CREATE TABLE every_type (
    id INT PRIMARY KEY,
    ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED,
    mi MEDIUMINT, mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED,
    bi BIGINT, bu BIGINT UNSIGNED,
    f FLOAT, d DOUBLE, dec1 DECIMAL(30,10), dec2 DECIMAL(65,0),
    dt DATE, dtm DATETIME, dtm6 DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME, tm6 TIME(6),
    y YEAR, b BIT(12), b1 BIT(1), e ENUM('a','bé'), st SET('x','y','z'),
    j JSON, bl BLOB, lb LONGBLOB, tx TEXT, vc VARCHAR(20), ch CHAR(3),
    bn BINARY(3), vb VARBINARY(10), g POINT, u UUID, ip INET6
)";

#[test]
fn every_column_type_reads_as_the_crate_reads_it() {
    let s = MariaDb::start();
    let mut f = own(&s);
    let mut conn = crate_conn(&s);
    text(&mut f, "SET SESSION sql_mode = ''");
    text(&mut f, ALL_TYPES);
    text(
        &mut f,
        "INSERT INTO every_type VALUES
         (1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0,
          -9223372036854775808, 0, -3.4e38, -1.7976931348623157e308,
          '-12345678901234567890.0123456789', -99999999999999999999999999999999999999999999999999999999999999999,
          '0000-00-00', '0000-00-00 00:00:00', '1000-01-01 00:00:00.000001', '1970-01-01 00:00:01.001',
          '-838:59:59', '-838:59:58.999999', 1901, b'0', b'0', 'a', '',
          '[]', '', '', '', '', '', '', '', POINT(0, 0),
          '00000000-0000-0000-0000-000000000000', '::'),
         (2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295,
          9223372036854775807, 18446744073709551615, 3.4e38, 1.7976931348623157e308,
          '12345678901234567890.0123456789', 99999999999999999999999999999999999999999999999999999999999999999,
          '9999-12-31', '9999-12-31 23:59:59', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999',
          '838:59:59', '25:00:00.5', 2155, b'111111111111', b'1', 'bé', 'x,y,z',
          '{\"a\": [1, 2.5, null]}', x'00ff', REPEAT('L', 70000), 'tëxt', 'vc', 'ch', x'000102', x'fffe',
          POINT(1.5, -2.5), 'ffffffff-ffff-ffff-ffff-ffffffffffff', '2001:db8::1'),
         (3, NULL, 1, NULL, 2, NULL, 3, NULL, 4, NULL, 5, NULL, 0.5, NULL, 7,
          NULL, '2024-02-29 12:00:00', NULL, NULL, '00:00:00', NULL, NULL, b'101', NULL,
          NULL, 'y', NULL, 'blob', NULL, NULL, 'v', NULL, NULL, NULL, NULL, NULL, NULL),
         (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
          NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
          NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    );
    let got = same(
        &mut f,
        &mut conn,
        "SELECT * FROM every_type ORDER BY id",
        &[],
    );
    let Answer::Rows(cols, rows) = &got[0] else {
        panic!("{got:?}")
    };
    assert_eq!((cols.len(), rows.len()), (37, 4));
    // A few cells by hand, beyond agreeing with the crate.
    assert_eq!(rows[0][10], Value::Int(0));
    assert_eq!(rows[1][10], Value::UInt(u64::MAX));
    assert_eq!(rows[0][9], Value::Int(i64::MIN));
    assert_eq!(rows[0][15], Value::Date(0, 0, 0, 0, 0, 0, 0), "a zero date");
    assert_eq!(
        rows[0][19],
        Value::Time(true, 34, 22, 59, 59, 0),
        "-838:59:59"
    );
    assert_eq!(
        rows[1][20],
        Value::Time(false, 1, 1, 0, 0, 500_000),
        "over a day"
    );
    assert_eq!(rows[1][17], Value::Date(9999, 12, 31, 23, 59, 59, 999_999));
    assert!(rows[3][1..].iter().all(|v| *v == Value::NULL));
    // The same through a parameter.
    for id in 1..=4 {
        same(
            &mut f,
            &mut conn,
            "SELECT * FROM every_type WHERE id = ?",
            &[Param::Int(id)],
        );
    }
}

#[test]
fn wide_rows_have_their_null_bitmap_right() {
    let s = MariaDb::start();
    let mut f = own(&s);
    let mut conn = crate_conn(&s);
    for n in [1, 6, 7, 8, 9, 15, 16, 17, 251, 300] {
        // NULLs in every position modulo 3, and in the last.
        let items: Vec<String> = (0..n)
            .map(|i| {
                if i % 3 == 1 || i == n - 1 {
                    format!("NULL AS c{i}")
                } else if i % 3 == 0 {
                    format!("{i} AS c{i}")
                } else {
                    format!("'v{i}' AS c{i}")
                }
            })
            .collect();
        let sql = format!("SELECT {}", items.join(", "));
        let got = same(&mut f, &mut conn, &sql, &[]);
        let Answer::Rows(_, rows) = &got[0] else {
            panic!()
        };
        assert_eq!(rows[0].len(), n);
        assert_eq!(rows[0][n - 1], Value::NULL);
    }
}

#[test]
fn parameters_of_every_kind_round_trip() {
    let s = MariaDb::start();
    let mut f = own(&s);
    let mut conn = crate_conn(&s);
    let dt = DateTime {
        date: Date {
            year: 2024,
            month: 2,
            day: 29,
        },
        hour: 23,
        minute: 59,
        second: 58,
        micros: 123_456,
    };
    let neg = Time {
        negative: true,
        days: 3,
        hours: 4,
        minutes: 5,
        seconds: 6,
        micros: 7,
    };
    let big = vec![b'x'; 300];
    let params = [
        Param::Null,
        Param::Int(i64::MIN),
        Param::Int(-1),
        Param::UInt(u64::MAX),
        Param::Float(1.5),
        Param::Double(-2.0e300),
        Param::Bytes(b"it's \\ text", types::STRING),
        Param::Bytes(&[0, 0xff, 0x80], types::BLOB),
        Param::Bytes(b"-1234.5678", types::NEWDECIMAL),
        Param::Bytes(&big, types::STRING),
        Param::Date(dt.date),
        Param::DateTime(dt),
        Param::DateTime(DateTime { micros: 0, ..dt }),
        Param::Time(neg),
        Param::Time(Time::default()),
        Param::Null,
    ];
    let sql = format!("SELECT {}", vec!["?"; params.len()].join(", "));
    // The crate sends bytes as VAR_STRING and dates as DATETIME, so the
    // columns' types differ; the values must not.
    let got = exec(&mut f, &sql, &params);
    let theirs = by_crate(&mut conn, &sql, params.iter().map(param_value).collect());
    let (Answer::Rows(_, rows), Answer::Rows(_, crate_rows)) = (&got[0], &theirs[0]) else {
        panic!("{got:?}")
    };
    assert_eq!(rows, crate_rows);
    let r = &rows[0];
    assert_eq!(r[0], Value::NULL);
    assert_eq!(r[1], Value::Int(i64::MIN));
    assert_eq!(r[3], Value::UInt(u64::MAX));
    assert_eq!(r[6], Value::Bytes(b"it's \\ text".to_vec()));
    assert_eq!(r[7], Value::Bytes(vec![0, 0xff, 0x80]));
    assert_eq!(r[9], Value::Bytes(big.clone()));
    assert_eq!(r[11], Value::Date(2024, 2, 29, 23, 59, 58, 123_456));
    assert_eq!(r[13], Value::Time(true, 3, 4, 5, 6, 7));
    // Stored and read back through a table, types changing between
    // executes of one statement (the types are sent again when they do).
    text(
        &mut f,
        "CREATE TABLE p (v VARCHAR(40), d DATETIME(6), t TIME(6))",
    );
    let mut ins = f.prepare(b"INSERT INTO p VALUES (?, ?, ?)").unwrap();
    for ps in [
        [Param::Int(5), Param::DateTime(dt), Param::Time(neg)],
        [Param::Int(6), Param::DateTime(dt), Param::Time(neg)],
        [
            Param::Bytes(b"seven", types::STRING),
            Param::Null,
            Param::Null,
        ],
        [Param::Double(8.5), Param::Date(dt.date), Param::Null],
    ] {
        assert_eq!(by_wire(&mut f, &mut ins, &ps).unwrap(), vec![Answer::Ok(1)]);
    }
    let back = same(&mut f, &mut conn, "SELECT * FROM p", &[]);
    let Answer::Rows(_, rows) = &back[0] else {
        panic!()
    };
    let col0: Vec<_> = rows.iter().map(|r| r[0].clone()).collect();
    assert_eq!(
        col0,
        ["5", "6", "seven", "8.5"].map(|s| Value::Bytes(s.into()))
    );
    assert_eq!(rows[3][1], Value::Date(2024, 2, 29, 0, 0, 0, 0));
    assert_eq!(rows[0][2], Value::Time(true, 3, 4, 5, 6, 7));
}

#[test]
fn long_data_of_more_than_16_mib() {
    let s = MariaDb::start_with(ServerOpts {
        args: vec!["--max-allowed-packet=64M".into()],
        ..ServerOpts::default()
    });
    let mut f = own(&s);
    let data: Vec<u8> = (0..(16 << 20) + 1000).map(|i| (i % 251) as u8).collect();
    let mut stmt = f.prepare(b"SELECT ?, LENGTH(?), ?").unwrap();
    // Parameter 0 in one call (a packet of two chunks), parameter 1 in three.
    f.send_long_data(stmt.id(), 0, &data).unwrap();
    for part in data.chunks(7 << 20) {
        f.send_long_data(stmt.id(), 1, part).unwrap();
    }
    let got = by_wire(
        &mut f,
        &mut stmt,
        &[
            Param::Long(types::BLOB),
            Param::Long(types::BLOB),
            Param::Int(3),
        ],
    )
    .unwrap();
    let Answer::Rows(_, rows) = &got[0] else {
        panic!()
    };
    assert!(
        rows[0][0] == Value::Bytes(data.clone()),
        "the value came back whole"
    );
    assert_eq!(rows[0][1], Value::Int(data.len() as i64));
    assert_eq!(rows[0][2], Value::Int(3));
    // Long data sent, then dropped by a reset: the execute sees none.
    f.send_long_data(stmt.id(), 0, b"dropped").unwrap();
    f.reset_statement(&stmt).unwrap();
    f.send_long_data(stmt.id(), 1, b"kept").unwrap();
    let got = by_wire(
        &mut f,
        &mut stmt,
        &[Param::Null, Param::Long(types::BLOB), Param::Int(1)],
    )
    .unwrap();
    let Answer::Rows(_, rows) = &got[0] else {
        panic!()
    };
    assert_eq!(rows[0][0], Value::NULL);
    assert_eq!(rows[0][1], Value::Int(4));
}

#[test]
fn a_call_answers_several_results() {
    let s = MariaDb::start();
    let mut f = own(&s);
    let mut conn = crate_conn(&s);
    text(
        &mut f,
        "CREATE PROCEDURE two(IN x INT)
         BEGIN SELECT x AS a; SELECT x + 1 AS b, 'c' AS c UNION ALL SELECT NULL, NULL; END",
    );
    let got = same(&mut f, &mut conn, "CALL two(?)", &[Param::Int(41)]);
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(matches!(&got[0], Answer::Rows(_, r) if r[0][0] == Value::Int(41)));
    assert!(matches!(&got[1], Answer::Rows(_, r) if r.len() == 2 && r[1][1] == Value::NULL));
    assert!(matches!(got[2], Answer::Ok(_)));
    // On the crate's socket (old EOF packets) too.
    let (mut c2, mut f2) = borrowed(&s);
    let mine = exec(&mut f2, "CALL two(?)", &[Param::Int(1)]);
    assert_eq!(mine, by_crate(&mut c2, "CALL two(?)", vec![Value::Int(1)]));
}

/// The column names and types of every answer to `stmt` run with `id`, and
/// the bytes the answer took.
fn names_and_bytes(f: &mut Session, stmt: &mut Prepared, id: i64) -> (Vec<Answer>, u64) {
    let before = f.received();
    let got = by_wire(f, stmt, &[Param::Int(id)]).unwrap();
    (got, f.received() - before)
}

/// MariaDB leaves a prepared statement's column definitions out of an
/// execute's answer once it has sent them (`MARIADB_CLIENT_CACHE_METADATA`):
/// the layer asks for that, reads the columns kept for the statement then,
/// and takes the new ones when the table changes under it.
#[test]
fn an_execute_without_its_definitions_has_the_statements_columns() {
    let s = MariaDb::start();
    let mut f = own(&s);
    assert_ne!(
        f.mariadb_caps() & staunch::wire::mariadb::CACHE_METADATA,
        0,
        "MariaDB offers MARIADB_CLIENT_CACHE_METADATA and the layer asks for it"
    );
    let mut conn = crate_conn(&s);
    text(
        &mut f,
        "CREATE TABLE cached (id INT PRIMARY KEY, name VARCHAR(20), score DOUBLE);
         INSERT INTO cached VALUES (1, 'one', 1.5), (2, 'two', NULL)",
    );
    let sql = "SELECT * FROM cached WHERE id = ?";
    let mut stmt = f.prepare(sql.as_bytes()).unwrap();
    let defs = stmt.columns().raw_all().len();
    for id in [1, 2] {
        let (got, bytes) = names_and_bytes(&mut f, &mut stmt, id);
        assert_eq!(got, by_crate(&mut conn, sql, vec![Value::Int(id)]));
        // The server sent them with the prepare, not again.
        assert!(
            (bytes as usize) < defs,
            "an answer of {bytes} bytes, its definitions alone are {defs}"
        );
    }
    // The table changes: the server sends the new definitions, which
    // become the statement's, and leaves them out again after that.
    text(
        &mut f,
        "ALTER TABLE cached MODIFY name VARCHAR(30), ADD COLUMN extra DATE DEFAULT '2026-12-06'",
    );
    for id in [1, 2, 1] {
        let (got, _) = names_and_bytes(&mut f, &mut stmt, id);
        assert_eq!(got, by_crate(&mut conn, sql, vec![Value::Int(id)]));
        let Answer::Rows(cols, _) = &got[0] else {
            panic!("{got:?}")
        };
        assert_eq!(cols.len(), 4, "{cols:?}");
    }
    // A CALL's several results, run again and again on one statement.
    text(
        &mut f,
        "CREATE PROCEDURE three(IN x INT)
         BEGIN SELECT x AS a; SELECT 'b' AS b, x AS c; SELECT x AS a; END",
    );
    let call = "CALL three(?)";
    let mut stmt = f.prepare(call.as_bytes()).unwrap();
    for id in 1..4 {
        let got = by_wire(&mut f, &mut stmt, &[Param::Int(id)]).unwrap();
        assert_eq!(
            got,
            by_crate(&mut conn, call, vec![Value::Int(id)]),
            "run {id}"
        );
    }
}

#[test]
fn refused_statements_leave_the_session_usable() {
    let s = MariaDb::start();
    let mut f = own(&s);
    for (sql, code) in [
        ("SELEC 1", 1064),
        ("PREPARE x FROM 'SELECT 1'", 1295),
        ("SELECT * FROM no_such_table", 1146),
    ] {
        match f.prepare(sql.as_bytes()) {
            Err(WireError::Server(e)) => assert_eq!(e.code, code, "{sql}: {e}"),
            other => panic!("{sql}: {other:?}"),
        }
        assert!(!f.has_buffered_input());
        let got = exec(&mut f, "SELECT ?", &[Param::Int(7)]);
        assert!(
            matches!(&got[..], [Answer::Rows(_, r)] if r == &[vec![Value::Int(7)]]),
            "{got:?}"
        );
    }
    // The wrong number of parameters: refused before a byte is sent.
    let mut stmt = f.prepare(b"SELECT ?, ?").unwrap();
    let e = f.send_execute(&mut stmt, &[Param::Int(1)]).unwrap_err();
    assert!(matches!(e, WireError::Refused(_)) && !e.is_fatal(), "{e}");
    assert!(e.to_string().contains("2 parameters, 1 were given"), "{e}");
    let got = by_wire(&mut f, &mut stmt, &[Param::Int(1), Param::Null]).unwrap();
    assert!(matches!(&got[0], Answer::Rows(_, r) if r[0] == vec![Value::Int(1), Value::NULL]));
    // An execute the server refuses (a value it cannot store) leaves it
    // usable too, and the next one sends its types again.
    text(&mut f, "CREATE TABLE strict (n TINYINT)");
    text(&mut f, "SET SESSION sql_mode = 'STRICT_ALL_TABLES'");
    let mut ins = f.prepare(b"INSERT INTO strict VALUES (?)").unwrap();
    match by_wire(&mut f, &mut ins, &[Param::Int(1000)]) {
        Err(WireError::Server(e)) => assert_eq!(e.code, 1264, "{e}"),
        other => panic!("{other:?}"),
    }
    ins.rebind();
    assert_eq!(
        by_wire(&mut f, &mut ins, &[Param::Int(100)]).unwrap(),
        vec![Answer::Ok(1)]
    );
}

fn prepared_count(s: &MariaDb) -> i64 {
    s.query_rows("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'")[0][1]
        .as_deref()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn the_cache_keeps_the_servers_statements_bounded() {
    let s = MariaDb::start();
    let mut f = own(&s);
    let mut cache = StmtCache::new(4);
    let mut columns = BinaryColumns::new();
    for i in 0..10 {
        run(&mut f, &mut cache, i);
        assert!(prepared_count(&s) <= 4, "after {i}: {}", prepared_count(&s));
    }
    assert_eq!(cache.len(), 4);
    assert_eq!(prepared_count(&s), 4);
    // The four last are cached: running them prepares nothing.
    let ids: Vec<u32> = (6..10)
        .map(|i| {
            cache
                .prepare(&mut f, format!("SELECT ? + {i}").as_bytes())
                .unwrap()
                .id()
        })
        .collect();
    for i in 6..10 {
        run(&mut f, &mut cache, i);
    }
    assert_eq!(prepared_count(&s), 4);
    // The session reset: the server forgets them all; the next execute of
    // a cached one is refused (1243) and prepared again, once.
    f.send_command(0x1f, &[]).unwrap();
    text_ok(&mut f);
    assert_eq!(prepared_count(&s), 0);
    run(&mut f, &mut cache, 9);
    let again = cache.prepare(&mut f, b"SELECT ? + 9").unwrap().id();
    assert_ne!(again, ids[3], "prepared again");
    assert_eq!(prepared_count(&s), 1);
    // A statement the server refuses is not cached (the one closed to
    // make room for it stays closed).
    assert!(matches!(
        cache.execute(&mut f, b"SELEC 1", &[], &mut columns),
        Err(WireError::Server(e)) if e.code == 1064
    ));
    assert_eq!(cache.len(), 3);
    cache.close_all(&mut f).unwrap();
    run(&mut f, &mut cache, 1);
    assert_eq!(prepared_count(&s), 1);
}

/// Runs `SELECT ? + i` through the cache and checks its one row.
fn run(f: &mut Session, cache: &mut StmtCache, i: i64) {
    let mut columns = BinaryColumns::new();
    let sql = format!("SELECT ? + {i}");
    match cache
        .execute(f, sql.as_bytes(), &[Param::Int(1)], &mut columns)
        .unwrap()
    {
        Response::ResultSet => {}
        other => panic!("{other:?}"),
    }
    let BinaryNext::Row(r) = f.next_binary_row(&columns).unwrap() else {
        panic!("a row")
    };
    let v = value(r.cells().next().unwrap());
    assert_eq!(v, Value::Int(1 + i));
    assert!(matches!(
        f.next_binary_row(&columns).unwrap(),
        BinaryNext::End(_)
    ));
}

fn text_ok<S: Read + Write>(f: &mut Framer<S>) {
    let mut columns = staunch::wire::Columns::new();
    assert!(matches!(
        f.read_response(&mut columns).unwrap(),
        Response::Ok(_)
    ));
}

/// Allocations per row of a 5-column `SELECT ... WHERE id = ?`, executed
/// and walked cell by cell on the layer once its buffers have grown: none
/// (`cargo test -p staunch --test wire_binary a_row_walked -- --nocapture`
/// prints it, and the crate's figure for the same statement).
#[test]
#[cfg(not(feature = "mimalloc"))]
fn a_row_walked_allocates_nothing() {
    let s = MariaDb::start();
    let mut f = own(&s);
    text(
        &mut f,
        "CREATE TABLE five (id INT PRIMARY KEY, name VARCHAR(40), score DOUBLE,
         at DATETIME(6), amount DECIMAL(12,2))",
    );
    text(
        &mut f,
        "INSERT INTO five SELECT seq, CONCAT('name ', seq), seq / 7, NOW(6), seq * 1.25
         FROM seq_1_to_100",
    );
    let mut stmt = f
        .prepare(b"SELECT id, name, score, at, amount FROM five WHERE id = ?")
        .unwrap();
    let mut columns = BinaryColumns::new();
    let mut walk = |f: &mut Session, stmt: &mut Prepared, id: i64| -> usize {
        f.send_execute(stmt, &[Param::Int(id)]).unwrap();
        assert_eq!(
            f.read_execute_response(stmt, &mut columns).unwrap(),
            Response::ResultSet
        );
        let mut cells = 0;
        loop {
            match f.next_binary_row(&columns).unwrap() {
                BinaryNext::Row(r) => {
                    for c in r.cells() {
                        cells += usize::from(!matches!(c, Cell::Null));
                        std::hint::black_box(c);
                    }
                }
                BinaryNext::End(_) => return cells,
            }
        }
    };
    for id in 1..=10 {
        assert_eq!(walk(&mut f, &mut stmt, id), 5);
    }
    let rows = 1000;
    let before = allocations();
    for i in 0..rows {
        walk(&mut f, &mut stmt, 1 + i % 100);
    }
    let per_row = (allocations() - before) as f64 / rows as f64;
    eprintln!("allocations per row (execute + read + walk of 5 cells): {per_row}");
    assert_eq!(per_row, 0.0);
    // For comparison (printed, not asserted): the crate's `exec` of the
    // same statement, each row taken as its `Row`.
    let mut conn = crate_conn(&s);
    let stmt = conn
        .prep("SELECT id, name, score, at, amount FROM five WHERE id = ?")
        .unwrap();
    for id in 1..=10 {
        let _: Vec<mysql::Row> = conn.exec(&stmt, (id,)).unwrap();
    }
    let before = allocations();
    for i in 0..rows {
        for row in conn.exec_iter(&stmt, (1 + i % 100,)).unwrap() {
            std::hint::black_box(row.unwrap());
        }
    }
    let crate_per_row = (allocations() - before) as f64 / rows as f64;
    eprintln!("the crate's exec_iter, same statement: {crate_per_row} allocations per row");
    // The counter does count this thread's allocations.
    let before = allocations();
    std::hint::black_box(vec![0u8; 10]);
    assert_eq!(allocations(), before + 1);
}
