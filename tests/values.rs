//! Exact values and the two ways to send a statement (issue #20), through
//! the Rust API: the conformance scenarios `conf_decimal_exact`,
//! `conf_unpreparable` and `conf_sql_modes` of ../shared/CONFORMANCE.md,
//! the scanner's regression under NO_BACKSLASH_ESCAPES, and dates, times
//! and date-times keeping their types. Each runs both ways: prepared and
//! interpolated.

use staunch_testkit as support;

use staunch::mysql_common::constants::ColumnType;
use staunch::prelude::*;
use staunch::{Decimal, ErrorKind, Param, Pool, PooledConn, Row, Value, Way};
use support::MariaDb;

const WAYS: [Way; 2] = [Way::Prepare, Way::Interpolate];

fn dec(s: &str) -> Param {
    Param::Decimal(s.parse::<Decimal>().unwrap())
}

fn one_row(c: &mut PooledConn, sql: &str, params: &[Param], way: Way) -> Row {
    let mut rows: Vec<Row> = c.query_params_with(sql, params, way).unwrap();
    assert_eq!(rows.len(), 1, "{sql} ({way:?})");
    rows.remove(0)
}

#[test]
fn conf_decimal_exact() {
    let s = MariaDb::start();
    s.sql(
        "CREATE TABLE staunch_test.acct (id INT PRIMARY KEY, bal DECIMAL(30,2)); \
         INSERT INTO staunch_test.acct VALUES (1, 1234567890123456789.01)",
    );
    let pool = Pool::from_url(&s.url()).unwrap();
    let mut c = pool.get().unwrap();
    let mut want = ["1234567890123456789.02", "1234567890123456789.03"].into_iter();
    for way in WAYS {
        let n = c
            .exec_params_with(
                "UPDATE acct SET bal = bal + ? WHERE id = ?",
                &[dec("0.01"), Param::Int(1)],
                way,
            )
            .unwrap();
        assert_eq!(n, 1);
        let bal: Option<String> = c
            .query_first("SELECT CAST(bal AS CHAR) FROM acct WHERE id = 1")
            .unwrap();
        assert_eq!(bal.as_deref(), want.next(), "{way:?}");

        let row = one_row(&mut c, "SELECT ?", &[dec("15.7563")], way);
        assert_eq!(
            row.columns_ref()[0].column_type(),
            ColumnType::MYSQL_TYPE_NEWDECIMAL,
            "{way:?}: a decimal parameter comes back as a DECIMAL column"
        );
        assert_eq!(row.as_ref(0), Some(&Value::Bytes(b"15.7563".to_vec())));

        // Arithmetic and comparison stay exact at 65 digits.
        let big = format!("{}.{}", "9".repeat(35), "9".repeat(30));
        let row = one_row(
            &mut c,
            "SELECT ? + ? = ?, ? - ?",
            &[
                dec(&big),
                dec("-0.000000000000000000000000000001"),
                dec(&format!("{}.{}8", "9".repeat(35), "9".repeat(29))),
                dec("0.3"),
                dec("0.1"),
            ],
            way,
        );
        assert_eq!(row.get::<i64, _>(0), Some(1), "{way:?}");
        assert_eq!(row.get::<String, _>(1).as_deref(), Some("0.2"), "{way:?}");

        // Not a decimal: refused, naming the parameter, nothing sent.
        let bad = Decimal::parse("1e5").unwrap_err();
        assert!(bad.to_string().contains("not a decimal number"), "{bad}");
    }
}

#[test]
fn conf_unpreparable() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.w (x INT); INSERT INTO staunch_test.w VALUES (1), (2), (3)");
    let pool = Pool::from_url(&s.url()).unwrap();
    let mut c = pool.get().unwrap();
    for way in WAYS {
        // A window frame with bound values: error 1064 at prepare, so the
        // prepared way falls back to interpolation.
        let sums: Vec<i64> = c
            .query_params_with(
                "SELECT CAST(SUM(x) OVER (ORDER BY x ROWS BETWEEN ? PRECEDING AND ? FOLLOWING) AS SIGNED) FROM w ORDER BY x",
                &[Param::Int(1), Param::Int(1)],
                way,
            )
            .unwrap();
        assert_eq!(sums, [3, 6, 5], "{way:?}");
    }
    // The server prepares this one and answers empty cells: right when
    // interpolated.
    let rows: Vec<(String, i64)> = c
        .query_params_with(
            "WITH c(a,b) AS (VALUES (?, ?), (?, ?)) SELECT a, b FROM c",
            &["a".into(), 2.into(), "b".into(), 3.into()],
            Way::Interpolate,
        )
        .unwrap();
    assert_eq!(rows, [("a".to_owned(), 2), ("b".to_owned(), 3)]);
    // The knob makes interpolation the default way.
    let ipool = Pool::from_url(&format!("{}?interpolate_params=true", s.url())).unwrap();
    let mut ic = ipool.get().unwrap();
    assert_eq!(ic.default_way(), Way::Interpolate);
    let rows: Vec<(String, i64)> = ic
        .query_params(
            "WITH c(a,b) AS (VALUES (?, ?), (?, ?)) SELECT a, b FROM c",
            &["a".into(), 2.into(), "b".into(), 3.into()],
        )
        .unwrap();
    assert_eq!(rows, [("a".to_owned(), 2), ("b".to_owned(), 3)]);
    // A real syntax error still fails, as the server's error.
    let e = ic
        .query_params::<Row>("SELEC ?", &[Param::Int(1)])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Server);
    assert_eq!(e.server_code(), Some(1064));
    // A count that does not match fails before anything is sent.
    let e = ic
        .query_params::<Row>("SELECT ?, '?'", &[Param::Int(1), Param::Int(2)])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("1 placeholder(s) but 2"), "{e}");
}

#[test]
fn conf_sql_modes() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&s.url()).unwrap();
    let tricky = "it's a \\ back\\slash, a \"quote\" and a ? mark\\";
    for mode in ["NO_BACKSLASH_ESCAPES", "ANSI_QUOTES", ""] {
        let mut c = pool.get().unwrap();
        c.query_drop(format!("SET SESSION sql_mode = '{mode}'"))
            .unwrap();
        let lex = c.lexing().unwrap();
        assert_eq!(lex.no_backslash_escapes, mode == "NO_BACKSLASH_ESCAPES");
        assert_eq!(lex.ansi_quotes, mode == "ANSI_QUOTES");
        for way in WAYS {
            if mode == "NO_BACKSLASH_ESCAPES" {
                // The regression of issue #20 point 3.
                let sql = "SELECT 'C:\\', ?, 'why?'";
                assert_eq!(c.count_params(sql).unwrap(), 1);
                let row = one_row(&mut c, sql, &[Param::Bytes(vec![0xff, 0, 0x41])], way);
                assert_eq!(row.get::<String, _>(0).as_deref(), Some("C:\\"), "{way:?}");
                assert_eq!(
                    row.get::<Vec<u8>, _>(1),
                    Some(vec![0xff, 0, 0x41]),
                    "{way:?}"
                );
                assert_eq!(row.get::<String, _>(2).as_deref(), Some("why?"), "{way:?}");
            }
            let sql = if mode == "ANSI_QUOTES" {
                "SELECT ? AS \"a?\", 'x\"?' AS \"b\"\"?\""
            } else {
                "SELECT ? AS `a?`, 'x\"?' AS `b``?`"
            };
            assert_eq!(c.count_params(sql).unwrap(), 1, "{mode}");
            let row = one_row(&mut c, sql, &[Param::Text(tricky.into())], way);
            assert_eq!(
                row.get::<String, _>(0).as_deref(),
                Some(tricky),
                "{mode} {way:?}"
            );
            assert_eq!(
                row.get::<String, _>(1).as_deref(),
                Some("x\"?"),
                "{mode} {way:?}"
            );
            assert_eq!(
                row.columns_ref()[0].name_str(),
                "a?",
                "{mode} {way:?}: {:?}",
                row.columns_ref()
            );
        }
        drop(c);
    }
    // A mode set before the borrow by init_sql is asked for, not assumed.
    let p2 = Pool::from_url(&format!(
        "{}?init_sql=SET%20sql_mode%3D'NO_BACKSLASH_ESCAPES'&interpolate_params=true",
        s.url()
    ))
    .unwrap();
    let mut c = p2.get().unwrap();
    assert!(c.lexing().unwrap().no_backslash_escapes);
    let v: Vec<String> = c
        .query_params("SELECT ?", &[Param::Text(tricky.into())])
        .unwrap();
    assert_eq!(v, [tricky]);
}

#[test]
fn dates_bind_as_date_and_times_as_time() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.d (v VARCHAR(40))");
    let pool = Pool::from_url(&s.url()).unwrap();
    let mut c = pool.get().unwrap();
    for way in WAYS {
        c.query_drop("DELETE FROM d").unwrap();
        c.exec_params_with(
            "INSERT INTO d VALUES (?), (?), (?)",
            &[
                Param::Date(2012, 10, 15),
                Param::DateTime(2012, 10, 15, 1, 2, 3, 456789),
                Param::Time(true, 1, 2, 3, 4, 5),
            ],
            way,
        )
        .unwrap();
        let got: Vec<String> = c.query("SELECT v FROM d ORDER BY v").unwrap();
        assert_eq!(
            got,
            [
                "-26:03:04.000005",
                "2012-10-15",
                "2012-10-15 01:02:03.456789"
            ],
            "{way:?}"
        );
        // Without a fraction, none: the server shows a prepared DATETIME or
        // TIME that way, and an interpolated one is written to match.
        c.query_drop("DELETE FROM d").unwrap();
        c.exec_params_with(
            "INSERT INTO d VALUES (?), (?)",
            &[
                Param::DateTime(2012, 10, 15, 1, 2, 3, 0),
                Param::Time(false, 0, 1, 2, 3, 0),
            ],
            way,
        )
        .unwrap();
        let got: Vec<String> = c.query("SELECT v FROM d ORDER BY v").unwrap();
        assert_eq!(got, ["01:02:03", "2012-10-15 01:02:03"], "{way:?}");
        let row = one_row(
            &mut c,
            "SELECT ?, ?, ?",
            &[
                Param::Date(2012, 10, 15),
                Param::DateTime(2012, 10, 15, 1, 2, 3, 456789),
                Param::Time(false, 34, 22, 59, 59, 0),
            ],
            way,
        );
        let types: Vec<ColumnType> = row.columns_ref().iter().map(|c| c.column_type()).collect();
        assert_eq!(types[0], ColumnType::MYSQL_TYPE_DATE, "{way:?}");
        assert_eq!(types[1], ColumnType::MYSQL_TYPE_DATETIME, "{way:?}");
        assert_eq!(types[2], ColumnType::MYSQL_TYPE_TIME, "{way:?}");
        // Doubles come back exactly, as doubles.
        for v in [0.1, 1.0 / 3.0, -1.5e300, 5e-324, f64::MAX] {
            let row = one_row(&mut c, "SELECT ?", &[Param::Double(v)], way);
            assert_eq!(
                row.columns_ref()[0].column_type(),
                ColumnType::MYSQL_TYPE_DOUBLE
            );
            assert_eq!(row.get::<f64, _>(0), Some(v), "{way:?}");
        }
    }
    let e = c
        .query_params_with::<Row>("SELECT ?", &[Param::Double(f64::NAN)], Way::Interpolate)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("params[0]"), "{e}");
    // Out of its kind's range: refused before anything is sent, both ways
    // and through the `mysql` crate's values, naming the field.
    for way in WAYS {
        for (p, why) in [
            (
                Param::DateTime(2020, 1, 1, 99, 0, 0, 0),
                "hour 99 is above 23",
            ),
            (Param::Date(2020, 13, 1), "month 13 is above 12"),
            (
                Param::Time(false, 34, 23, 0, 0, 0),
                "time 839:00:00 is above 838:59:59",
            ),
        ] {
            let e = c
                .query_params_with::<Row>("SELECT 1, ?", &[Param::Int(1), p], way)
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{way:?}: {e}");
            let e = e.to_string();
            assert!(e.contains("params[1]") && e.contains(why), "{way:?}: {e}");
        }
    }
    let e = c
        .exec_drop("SELECT ?", (Value::Date(2020, 1, 1, 99, 0, 0, 0),))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("hour 99 is above 23"), "{e}");
    let e = c
        .exec_drop("SELECT ?", (Value::Time(true, 35, 0, 0, 0, 0),))
        .unwrap_err();
    assert!(e.to_string().contains("time days 35 is above 34"), "{e}");
    let v: Vec<String> = c
        .query_params(
            "SELECT CAST(? AS CHAR)",
            &[Param::Time(true, 34, 22, 59, 59, 999_999)],
        )
        .unwrap();
    assert_eq!(v, ["-838:59:59.999999"]);
}

/// A session whose `character_set_client` is not UTF-8 (here `SET NAMES
/// gbk` from `init_sql`): staunch writes text as UTF-8, so a non-ASCII text
/// value cannot arrive exact, and interpolated it could even end its own
/// literal. In GBK, the bytes `AD 5C` are one character: "中\' OR 1=1 -- "
/// escaped for a UTF-8 session (`E4 B8 AD 5C 5C 27 27 ...`) reads in GBK as
/// `[E4 B8] [AD 5C] [5C 27] [27]`, an escaped quote and then the literal's
/// end, so ` OR 1=1` would run. Such a value is refused both ways, naming
/// the character set; ASCII text (the same bytes in every charset the server
/// takes from a client) still goes.
#[test]
fn non_utf8_session_refuses_non_ascii_text_and_nothing_is_injected() {
    let s = MariaDb::start();
    s.sql(
        "CREATE TABLE staunch_test.t (v VARCHAR(40)) CHARSET gbk; \
         INSERT INTO staunch_test.t VALUES ('a'), ('b'), ('c')",
    );
    let pool = Pool::from_url(&format!("{}?init_sql=SET%20NAMES%20gbk", s.url())).unwrap();
    let evil = "中\\' OR 1=1 -- ";
    for way in WAYS {
        let mut c = pool.get().unwrap();
        let cs: Option<String> = c.query_first("SELECT @@character_set_client").unwrap();
        assert_eq!(cs.as_deref(), Some("gbk"));
        let r: staunch::Result<Vec<(i64,)>> = c.query_params_with(
            "SELECT COUNT(*) FROM t WHERE v = ?",
            &[Param::Text(evil.into())],
            way,
        );
        let e = r.expect_err("non-ASCII text in a gbk session must be refused");
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{way:?}: {e}");
        assert!(e.to_string().contains("character_set_client"), "{e}");
        assert!(e.to_string().contains("gbk"), "{e}");
        // The connection is fine, and ASCII text still goes, exact.
        let n: Vec<(i64,)> = c
            .query_params_with(
                "SELECT COUNT(*) FROM t WHERE v = ?",
                &[Param::Text("b' OR 1=1 -- \\".into())],
                way,
            )
            .unwrap();
        assert_eq!(n, vec![(0,)], "{way:?}");
        let n: Vec<(i64,)> = c
            .query_params_with(
                "SELECT COUNT(*) FROM t WHERE v = ?",
                &[Param::Text("b".into())],
                way,
            )
            .unwrap();
        assert_eq!(n, vec![(1,)], "{way:?}");
    }
    // Back to UTF-8 in the session: the same value goes and matches nothing.
    let mut c = pool.get().unwrap();
    c.query_drop("SET NAMES utf8mb4").unwrap();
    for way in WAYS {
        let n: Vec<(i64,)> = c
            .query_params_with(
                "SELECT COUNT(*) FROM t WHERE v = ?",
                &[Param::Text(evil.into())],
                way,
            )
            .unwrap();
        assert_eq!(n, vec![(0,)], "{way:?}");
    }
}

/// `staunch_conn_param_offsets` gives every placeholder's byte offset in one
/// call, by the scanner that sends the statement: a `?` inside a string, a
/// comment or backticks is no placeholder, NO_BACKSLASH_ESCAPES ends a
/// string at a backslash-quote, ANSI_QUOTES makes `"..."` an identifier; and
/// a buffer too small gets the first offsets and the full count.
#[test]
fn param_offsets_through_the_c_abi() {
    use staunch::ffi::*;
    use std::ffi::CString;
    use std::ptr::{null, null_mut};

    let s = MariaDb::start();
    let url = CString::new(format!("{}?max_size=1", s.url())).unwrap();
    let mut pool = null_mut();
    assert_eq!(
        staunch_pool_open(url.as_ptr(), &mut pool, null_mut()),
        STAUNCH_OK
    );
    let mut conn = null_mut();
    assert_eq!(
        staunch_pool_get(pool, 5000, &mut conn, null_mut()),
        STAUNCH_OK
    );
    let offsets = |conn, sql: &str| -> Vec<usize> {
        let c = CString::new(sql).unwrap();
        let mut n = 0;
        assert_eq!(
            staunch_conn_param_offsets(conn, c.as_ptr(), null_mut(), 0, &mut n, null_mut()),
            STAUNCH_OK
        );
        let mut at = vec![usize::MAX; n];
        let mut again = 0;
        assert_eq!(
            staunch_conn_param_offsets(
                conn,
                c.as_ptr(),
                at.as_mut_ptr(),
                n,
                &mut again,
                null_mut()
            ),
            STAUNCH_OK
        );
        assert_eq!(again, n, "{sql}");
        for &i in &at {
            assert_eq!(sql.as_bytes()[i], b'?', "{sql}: offset {i}");
        }
        at
    };
    let set_mode = |conn, mode: &str| {
        let c = CString::new(format!("SET SESSION sql_mode = '{mode}'")).unwrap();
        let status = staunch_conn_execute(
            conn,
            c.as_ptr(),
            null(),
            0,
            null_mut(),
            null_mut(),
            null_mut(),
        );
        assert_eq!(status, STAUNCH_OK, "{mode}");
    };
    let plain = "SELECT ?, '?', `a?`, \"b?\" /* ? */, ? # ?\n, ? -- ?\n";
    let backslash = "SELECT 'C:\\', ?, 'why?'";
    let double = "SELECT ? AS \"a?\", 'x\"?', ?";
    set_mode(conn, "");
    assert_eq!(offsets(conn, plain), [7, 35, 43]);
    // A backslash escapes the quote: the first string runs to the quote
    // before "why", so the `?` after it is outside any string and the one
    // between them inside.
    assert_eq!(offsets(conn, backslash), [21]);
    assert_eq!(offsets(conn, double), [7, 25]);
    set_mode(conn, "NO_BACKSLASH_ESCAPES");
    assert_eq!(offsets(conn, backslash), [14]);
    assert_eq!(offsets(conn, plain), [7, 35, 43]);
    set_mode(conn, "ANSI_QUOTES");
    assert_eq!(offsets(conn, double), [7, 25]);
    // Without ANSI_QUOTES a backslash escapes inside "..." too; with it the
    // identifier ends at its quote.
    assert_eq!(offsets(conn, "SELECT \"a\\\" ?"), [12]);
    set_mode(conn, "");
    assert_eq!(offsets(conn, "SELECT \"a\\\" ?"), [] as [usize; 0]);

    // Room for one of three: the first, and the count.
    let c = CString::new(plain).unwrap();
    let (mut one, mut n) = (usize::MAX, 0);
    assert_eq!(
        staunch_conn_param_offsets(conn, c.as_ptr(), &mut one, 1, &mut n, null_mut()),
        STAUNCH_OK
    );
    assert_eq!((one, n), (7, 3));
    // A buffer promised but not given is an error, not a write to NULL.
    assert_eq!(
        staunch_conn_param_offsets(conn, c.as_ptr(), null_mut(), 1, &mut n, null_mut()),
        STAUNCH_NULL_ARGUMENT
    );
    staunch_conn_free(conn);
    staunch_pool_free(pool);
}
