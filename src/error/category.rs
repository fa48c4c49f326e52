//! The one table saying what kind of failure each server error is, in the
//! words of PEP 249 (and the JDBC `SQLException` subclasses that follow the
//! same lines), so that the Python, Java and Go faces all raise the same
//! class for the same error instead of each keeping its own code lists.
//!
//! The table is the union of two drivers' choices, which users of each
//! language already rely on:
//!
//! - PyMySQL 1.1's `pymysql/err.py` (`_map_error`): the codes it names, and
//!   its rule for a code it does not name (below 1000 `InternalError`, else
//!   `OperationalError`);
//! - MariaDB Connector/J 3's `ExceptionFactory.createException`: the class of
//!   the SQLSTATE (its first two characters) for everything else, e.g. `23`
//!   an integrity violation, `0A` a feature not supported, `08` the
//!   connection.
//!
//! with the codes staunch's faces had listed on their own (Django's
//! `codes_for_integrityerror`, 3819 and 4025, among them). Where the two
//! disagree the table says which it follows and why, next to the code.
//!
//! The order of the rules: the code when the table names it; else the
//! SQLSTATE's class when it is one the table knows (a server sends `HY000`,
//! "general error", for most codes without a better one, and that class
//! says nothing); else PyMySQL's rule.

/// What kind of failure a server error is: the exception class a face
/// raises for it. The names are PEP 249's, with finer kinds of
/// `Operational` that JDBC tells apart (a face without them, such as
/// Python, raises its operational class for those). New categories may be
/// added; a face maps one it does not know to its operational class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCategory {
    /// A constraint refused the change: a duplicate key, a foreign key, NOT
    /// NULL, a CHECK (PEP 249 `IntegrityError`, JDBC
    /// `SQLIntegrityConstraintViolationException`, SQLSTATE class 23).
    Integrity,
    /// The statement itself is wrong: syntax, an unknown table or column, a
    /// table that exists already, a wrong number of columns (PEP 249
    /// `ProgrammingError`, JDBC `SQLSyntaxErrorException`, class 42).
    Programming,
    /// A value does not fit: too long, out of range, not a number or not a
    /// date, division by zero under strict mode (PEP 249 `DataError`, JDBC
    /// `SQLDataException`, class 22).
    Data,
    /// The server does not support what was asked (PEP 249
    /// `NotSupportedError`, JDBC `SQLFeatureNotSupportedException`, class
    /// 0A).
    NotSupported,
    /// The database failed for a reason outside the statement's text (PEP
    /// 249 `OperationalError`): the category of every code nothing else
    /// names.
    Operational,
    /// The server's own internal failure: a code below 1000 (an operating
    /// system error number) that nothing else names, as PyMySQL (PEP 249
    /// `InternalError`).
    Internal,
    /// The user lacks a privilege or the credentials are wrong (PEP 249
    /// `OperationalError`, as PyMySQL; JDBC
    /// `SQLInvalidAuthorizationSpecException`, class 28).
    Access,
    /// The connection was refused or lost (too many connections, the server
    /// shutting down; PEP 249 `OperationalError`, JDBC
    /// `SQLNonTransientConnectionException`, class 08).
    Connection,
    /// The server rolled the whole transaction back: a deadlock or a Galera
    /// certification failure (PEP 249 `OperationalError`, as PyMySQL; JDBC
    /// `SQLTransactionRollbackException`, class 40). Running the
    /// transaction again may succeed.
    Rollback,
    /// The server ended the statement at its time limit (`max_statement_time`,
    /// `max_execution_time`; PEP 249 `OperationalError`, JDBC
    /// `SQLTimeoutException`).
    Timeout,
    /// A wait for a lock timed out; the statement alone failed and may
    /// succeed when tried again (PEP 249 `OperationalError`, JDBC
    /// `SQLTransientException`).
    Transient,
}

impl ErrorCategory {
    /// A short lowercase name, stable across versions (`"integrity"`,
    /// `"not_supported"`, ...): PEP 249's class name without `Error`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCategory::Integrity => "integrity",
            ErrorCategory::Programming => "programming",
            ErrorCategory::Data => "data",
            ErrorCategory::NotSupported => "not_supported",
            ErrorCategory::Operational => "operational",
            ErrorCategory::Internal => "internal",
            ErrorCategory::Access => "access",
            ErrorCategory::Connection => "connection",
            ErrorCategory::Rollback => "rollback",
            ErrorCategory::Timeout => "timeout",
            ErrorCategory::Transient => "transient",
        }
    }

    /// The category of a server error: its number `code` and its SQLSTATE
    /// `sql_state` (five characters, or "" when the server sent none). See
    /// the module's rules; this never fails, an unknown code with an
    /// unknown state is `Operational` (or `Internal` below 1000).
    pub fn of_server(code: u16, sql_state: &str) -> ErrorCategory {
        if let Ok(i) = CODES.binary_search_by_key(&code, |&(c, _)| c) {
            return CODES[i].1;
        }
        if let Some(c) = sql_state.get(..2).and_then(of_class) {
            return c;
        }
        if code < 1000 {
            ErrorCategory::Internal
        } else {
            ErrorCategory::Operational
        }
    }
}

use ErrorCategory::{
    Access, Connection, Data, Integrity, NotSupported, Programming, Rollback, Timeout, Transient,
};

/// The codes the table names, sorted (a test checks it), with where each
/// comes from: P PyMySQL's `_map_error`, S staunch's faces before this
/// table (Python's lists, Java's `SqlErrors`), D Django's
/// `codes_for_integrityerror`.
const CODES: &[(u16, ErrorCategory)] = &[
    (1007, Programming), // P ER_DB_CREATE_EXISTS
    (1022, Integrity),   // S ER_DUP_KEY
    (1040, Connection),  // P (operational) ER_CON_COUNT_ERROR, SQLSTATE 08004
    (1044, Access),      // P (operational) ER_DBACCESS_DENIED_ERROR
    (1045, Access),      // P (operational) ER_ACCESS_DENIED_ERROR
    (1048, Integrity),   // P S D ER_BAD_NULL_ERROR
    (1049, Programming), // S ER_BAD_DB_ERROR
    (1050, Programming), // S ER_TABLE_EXISTS_ERROR
    (1051, Programming), // S ER_BAD_TABLE_ERROR
    (1052, Programming), // S ER_NON_UNIQ_ERROR
    (1054, Programming), // S ER_BAD_FIELD_ERROR
    (1060, Programming), // S ER_DUP_FIELDNAME
    (1061, Programming), // S ER_DUP_KEYNAME
    (1062, Integrity),   // P S ER_DUP_ENTRY
    (1064, Programming), // P S ER_PARSE_ERROR
    (1065, Programming), // S ER_EMPTY_QUERY
    (1091, Programming), // S ER_CANT_DROP_FIELD_OR_KEY
    (1102, Programming), // P S ER_WRONG_DB_NAME
    (1103, Programming), // P S ER_WRONG_TABLE_NAME
    (1109, Programming), // S ER_UNKNOWN_TABLE
    (1110, Programming), // P S ER_FIELD_SPECIFIED_TWICE
    (1111, Programming), // P ER_INVALID_GROUP_FUNC_USE
    (1112, Programming), // P ER_UNSUPPORTED_EXTENSION
    (1113, Programming), // P S ER_TABLE_MUST_HAVE_COLUMNS
    (1117, Programming), // S ER_TOO_MANY_FIELDS
    (1142, Access),      // P (operational) ER_TABLEACCESS_DENIED_ERROR
    (1143, Access),      // P (operational) ER_COLUMNACCESS_DENIED_ERROR
    (1146, Programming), // P S ER_NO_SUCH_TABLE
    (1149, Programming), // P S ER_SYNTAX_ERROR
    (1166, Programming), // P S ER_WRONG_COLUMN_NAME
    (1169, Integrity),   // S ER_DUP_UNIQUE
    // PyMySQL says DataError; the server's SQLSTATE is 42000 and the error
    // is about a table's definition, not a value: Programming, as before.
    (1171, Programming),  // S ER_PRIMARY_CANT_HAVE_NULL
    (1178, NotSupported), // S ER_CHECK_NOT_IMPLEMENTED
    (1179, Programming),  // P ER_CANT_DO_THIS_DURING_AN_TRANSACTION
    (1196, NotSupported), // P ER_WARNING_NOT_COMPLETE_ROLLBACK
    (1205, Transient),    // S ER_LOCK_WAIT_TIMEOUT (Java: SQLTransientException)
    (1213, Rollback),     // P (operational) S ER_LOCK_DEADLOCK, SQLSTATE 40001
    (1215, Integrity),    // P ER_CANNOT_ADD_FOREIGN
    (1216, Integrity),    // P S ER_NO_REFERENCED_ROW
    (1217, Integrity),    // P S ER_ROW_IS_REFERENCED
    (1222, Programming),  // S ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT
    (1230, Data),         // P ER_NO_DEFAULT
    (1235, NotSupported), // P S ER_NOT_SUPPORTED_YET
    (1247, Programming),  // S ER_ILLEGAL_REFERENCE
    (1248, Programming),  // S ER_DERIVED_MUST_HAVE_ALIAS
    (1263, Data),         // P ER_WARN_NULL_TO_NOTNULL
    (1264, Data),         // P S ER_WARN_DATA_OUT_OF_RANGE
    (1265, Data),         // P S WARN_DATA_TRUNCATED
    (1286, NotSupported), // P ER_UNKNOWN_STORAGE_ENGINE
    (1289, NotSupported), // P S ER_FEATURE_DISABLED
    (1292, Data),         // S ER_TRUNCATED_WRONG_VALUE
    (1295, Programming),  // S ER_UNSUPPORTED_PS
    (1305, Programming),  // S ER_SP_DOES_NOT_EXIST
    (1318, Programming),  // S ER_SP_WRONG_NO_OF_ARGS
    (1327, Programming),  // S ER_SP_UNDECLARED_VAR
    (1353, Programming),  // S ER_VIEW_WRONG_LIST
    (1364, Integrity),    // S ER_NO_DEFAULT_FOR_FIELD
    (1365, Data),         // S ER_DIVISION_BY_ZERO
    (1366, Data),         // P S ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
    (1367, Data),         // P S ER_ILLEGAL_VALUE_FOR_TYPE
    (1406, Data),         // P S ER_DATA_TOO_LONG
    (1411, Data),         // S ER_WRONG_VALUE_FOR_TYPE
    (1416, Data),         // S ER_CANT_CREATE_GEOMETRY_OBJECT
    (1441, Data),         // P S ER_DATETIME_FUNCTION_OVERFLOW
    (1451, Integrity),    // P S ER_ROW_IS_REFERENCED_2
    (1452, Integrity),    // P S ER_NO_REFERENCED_ROW_2
    (1557, Integrity),    // S ER_FOREIGN_DUPLICATE_KEY
    (1586, Integrity),    // S ER_DUP_ENTRY_WITH_KEY_NAME
    (1630, Programming),  // S ER_FUNC_INEXISTENT_NAME_COLLISION
    (1690, Data),         // S ER_DATA_OUT_OF_RANGE (Django says integrity)
    (1969, Timeout),      // S ER_STATEMENT_TIMEOUT (MariaDB max_statement_time)
    (3024, Timeout),      // S ER_QUERY_TIMEOUT (MySQL max_execution_time)
    (3819, Integrity),    // S D ER_CHECK_CONSTRAINT_VIOLATED (MySQL)
    // PyMySQL says OperationalError; a CHECK constraint refusing a row is an
    // integrity violation, as Django and MySQL's 3819 have it.
    (4025, Integrity), // S D ER_CONSTRAINT_FAILED (MariaDB)
    (4078, Data),      // S ER_ILLEGAL_PARAMETER_DATA_TYPES2_FOR_OPERATION
];

/// The category of a SQLSTATE class (its first two characters), when it
/// says one: Connector/J's classes, with two changes. Class 22 is `Data`
/// (JDBC's `SQLDataException`; Connector/J raises `SQLSyntaxErrorException`
/// for it); class 21, cardinality ("Column count doesn't match value
/// count"), is `Programming` (PEP 249: "wrong number of parameters";
/// Connector/J says integrity); class 25, a transaction in the wrong state,
/// is `Programming` (PyMySQL's 1179; Connector/J says authorization).
fn of_class(class: &str) -> Option<ErrorCategory> {
    Some(match class {
        "23" => Integrity,
        "22" => Data,
        "0A" => NotSupported,
        "20" | "21" | "25" | "26" | "2F" | "42" | "XA" => Programming,
        "28" => Access,
        "08" => Connection,
        "40" => Rollback,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_without_repeats() {
        for w in CODES.windows(2) {
            assert!(w[0].0 < w[1].0, "{} before {}", w[0].0, w[1].0);
        }
    }

    #[test]
    fn codes_first_then_the_class_then_pymysqls_rule() {
        let cases = [
            (1062, "23000", Integrity),
            (1064, "42000", Programming),
            (1406, "22001", Data),
            // The code decides even when the class would say otherwise.
            (1171, "42000", Programming),
            (1142, "42000", Access),
            (1213, "40001", Rollback),
            // Unknown codes: the class, when it says something.
            (30001, "23001", Integrity),
            (30001, "0A000", NotSupported),
            (30001, "21S01", Programming),
            (30001, "08S01", Connection),
            // A class that says nothing, or none: PyMySQL's rule.
            (1644, "45000", ErrorCategory::Operational),
            (30001, "HY000", ErrorCategory::Operational),
            (999, "HY000", ErrorCategory::Internal),
            (999, "", ErrorCategory::Internal),
            (30001, "2", ErrorCategory::Operational),
            // Not ASCII: `get` refuses to cut inside a character.
            (30001, "\u{e9}3000", ErrorCategory::Operational),
        ];
        for (code, state, want) in cases {
            assert_eq!(
                ErrorCategory::of_server(code, state),
                want,
                "{code} {state:?}"
            );
        }
    }
}
