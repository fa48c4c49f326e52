use mysql::prelude::Queryable;
use staunch_testkit::MariaDb;

#[test]
fn probe() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.t (v INT) ENGINE=InnoDB");
    s.sql("CREATE SEQUENCE staunch_test.sq");
    s.sql("CREATE ROLE r1");
    s.sql("GRANT r1 TO app@'%'");
    s.sql("GRANT RELOAD ON *.* TO app@'%'");
    let mut c = mysql::Conn::new(
        mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&s.url()).unwrap())
            .additional_capabilities(mysql::consts::CapabilityFlags::CLIENT_SESSION_TRACK),
    )
    .unwrap();
    c.query_drop("SET session_track_transaction_info='STATE', session_track_state_change=ON")
        .unwrap();
    for q in [
        "SET @a = 1",
        "SELECT @b := 2",
        "SELECT 1 INTO @c",
        "SELECT * FROM t INTO @d",
        "XA START 'b'",
        "SELECT 1",
        "SET TRANSACTION READ ONLY",
        "SELECT 2",
        "SELECT PREVIOUS VALUE FOR sq",
        "SET @@session.time_zone = '+01:00'",
        "SET STATEMENT time_zone='+02:00' FOR SELECT 1",
        "SET NAMES latin1",
        "PREPARE p FROM 'SELECT 1'",
        "DEALLOCATE PREPARE p",
    ] {
        let r = c.query_iter(q).map(|mut r| {
            let n = r.by_ref().count();
            drop(r);
            n
        });
        let ch: Vec<String> = c
            .session_state_changes()
            .unwrap()
            .iter()
            .map(|x| {
                format!(
                    "{:?}={:?}",
                    x.data_type(),
                    String::from_utf8_lossy(x.data_ref())
                )
            })
            .collect();
        println!("{q:50} -> {:?} {:?}", r.map_err(|e| e.to_string()), ch);
    }
}
