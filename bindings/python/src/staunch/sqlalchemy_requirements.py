"""What the staunch dialects support, for SQLAlchemy's dialect compliance suite.

SQLAlchemy's third-party dialect suite (``sqlalchemy.testing.suite``) runs or
skips each test by the properties of a requirements class
(README.dialects.rst); ``SuiteRequirements`` closes most features by
default. This class opens what MariaDB (10.2+, the test kit's 10.11) and
MySQL 8 support through staunch, closes what they do not, and says why
beside each. The backend facts follow SQLAlchemy's own requirements for its
MySQL/MariaDB dialects; where SQLAlchemy marks a *driver* as failing a test
(``date_implicit_bound`` for PyMySQL and mysqlclient), that mark is kept for
those drivers, so the same class runs PyMySQL as the reference beside staunch.

Only SQLAlchemy's test plugin imports this module (``[sqla_testing]
requirement_cls`` in bindings/python/setup.cfg).
"""

from __future__ import annotations

from sqlalchemy.testing import exclusions
from sqlalchemy.testing.exclusions import fails_on, only_if, only_on, skip_if
from sqlalchemy.testing.requirements import SuiteRequirements

_MYSQL = ["mysql", "mariadb"]

#: Drivers whose typeless date/time binds SQLAlchemy's own requirements
#: mark as failing (they send dates as strings the server compares as text).
_TEXT_DATE_DRIVERS = ["+mysqldb", "+pymysql", "+cymysql", "+mysqlconnector"]


def _mariadb(config, version=(0,)) -> bool:
    d = config.db.dialect
    return bool(d._is_mariadb) and d._mariadb_normalized_version_info >= version


def _mysql8(config) -> bool:
    d = config.db.dialect
    return not d._is_mariadb and d.server_version_info >= (8,)


class Requirements(SuiteRequirements):
    # --- DDL and constraints
    @property
    def create_table_as(self):
        return exclusions.open()

    @property
    def create_temp_table_as(self):
        return exclusions.open()

    @property
    def table_ddl_if_exists(self):
        return exclusions.open()

    @property
    def index_ddl_if_exists(self):
        return only_if(_mariadb, "CREATE INDEX IF NOT EXISTS: MariaDB only, not MySQL")

    @property
    def foreign_keys_reflect_as_index(self):
        return exclusions.open()  # InnoDB makes an index for every foreign key

    @property
    def unique_index_reflect_as_unique_constraints(self):
        return exclusions.open()

    @property
    def unique_constraints_reflect_as_index(self):
        return exclusions.open()

    @property
    def foreign_key_constraint_name_reflection(self):
        return exclusions.open()

    @property
    def foreign_key_constraint_option_reflection_ondelete(self):
        return exclusions.open()

    @property
    def fk_constraint_option_reflection_ondelete_noaction(self):
        return exclusions.open()

    @property
    def foreign_key_constraint_option_reflection_onupdate(self):
        return exclusions.open()

    @property
    def fk_constraint_option_reflection_ondelete_restrict(self):
        return only_if(_mysql8, "MariaDB reports RESTRICT as no option at all")

    @property
    def fk_constraint_option_reflection_onupdate_restrict(self):
        return only_if(_mysql8, "MariaDB reports RESTRICT as no option at all")

    @property
    def cross_schema_fk_reflection(self):
        return exclusions.open()

    @property
    def check_constraint_reflection(self):
        return only_if(
            lambda config: _mariadb(config, (10, 2)) or _mysql8(config), "CHECK needs MariaDB 10.2 / MySQL 8"
        )

    @property
    def non_updating_cascade(self):
        return exclusions.closed()  # InnoDB always cascades ON UPDATE when asked to; no "deferred" variant

    @property
    def comment_reflection(self):
        return exclusions.open()

    @property
    def temp_table_comment_reflection(self):
        return exclusions.open()

    @property
    def unbounded_varchar(self):
        return exclusions.closed()  # VARCHAR needs a length in MySQL/MariaDB

    @property
    def expression_server_defaults(self):
        return only_if(lambda config: _mariadb(config, (10, 2)) or _mysql8(config), "expression defaults")

    @property
    def server_defaults(self):
        return exclusions.open()

    @property
    def create_or_replace_view(self):
        return exclusions.open()

    @property
    def views(self):
        return exclusions.open()

    @property
    def schemas(self):
        return exclusions.open()

    @property
    def schema_create_delete(self):
        return exclusions.open()

    @property
    def has_temp_table(self):
        return exclusions.open()

    @property
    def reflect_table_options(self):
        return exclusions.open()

    @property
    def computed_columns(self):
        return exclusions.open()

    @property
    def computed_columns_stored(self):
        return exclusions.open()

    @property
    def computed_columns_virtual(self):
        return exclusions.open()

    @property
    def computed_columns_reflect_persisted(self):
        return exclusions.open()

    @property
    def indexes_check_column_order(self):
        return exclusions.open()

    @property
    def uuid_data_type(self):
        return only_if(lambda config: _mariadb(config, (10, 7)), "MariaDB's UUID type (10.7+)")

    # --- SQL
    @property
    def boolean_col_expressions(self):
        return exclusions.open()

    @property
    def intersect(self):
        return only_if(lambda config: _mariadb(config, (10, 3)), "INTERSECT: MariaDB 10.3+")

    @property
    def except_(self):
        return only_if(lambda config: _mariadb(config, (10, 3)), "EXCEPT: MariaDB 10.3+")

    @property
    def window_functions(self):
        return only_if(lambda config: _mariadb(config, (10, 2)) or _mysql8(config), "window functions")

    @property
    def window_range(self):
        return self.window_functions

    @property
    def window_range_numeric(self):
        return self.window_functions

    @property
    def ctes(self):
        return only_if(lambda config: _mariadb(config, (10, 2)) or _mysql8(config), "WITH")

    @property
    def ctes_with_values(self):
        return only_if(lambda config: _mariadb(config, (10, 3)), "VALUES in a CTE: MariaDB only")

    @property
    def tuple_in(self):
        return exclusions.open()

    @property
    def tuple_in_w_empty(self):
        return exclusions.open()

    @property
    def update_from(self):
        return exclusions.open()  # UPDATE t1, t2 ... (multi-table UPDATE)

    @property
    def delete_from(self):
        return exclusions.open()

    @property
    def mod_operator_as_percent_sign(self):
        return exclusions.open()  # paramstyle format: % is written %%

    @property
    def percent_schema_names(self):
        return exclusions.open()

    @property
    def order_by_label_with_expression(self):
        return exclusions.open()

    @property
    def regexp_match(self):
        return exclusions.open()

    @property
    def regexp_replace(self):
        return only_if(lambda config: _mariadb(config) or _mysql8(config), "REGEXP_REPLACE")

    @property
    def aggregate_order_by(self):
        return exclusions.open()  # GROUP_CONCAT(... ORDER BY ...)

    @property
    def supports_bitwise_and(self):
        return exclusions.open()

    @property
    def supports_bitwise_or(self):
        return exclusions.open()

    @property
    def supports_bitwise_xor(self):
        return exclusions.open()

    @property
    def supports_bitwise_shift(self):
        return exclusions.open()

    # fails_on: the suite runs these and expects them to fail (a pass would fail the run).
    @property
    def sql_expression_limit_offset(self):
        return fails_on(_MYSQL, "LIMIT/OFFSET take only literals or placeholders") + self.offset

    @property
    def nullsordering(self):
        return fails_on(_MYSQL, "no NULLS FIRST / NULLS LAST")

    @property
    def reflects_pk_names(self):
        return fails_on(_MYSQL, "a primary key is always named PRIMARY")

    @property
    def infinity_floats(self):
        return fails_on(_MYSQL, "no infinite floating-point values")

    def get_order_by_collation(self, config):
        return "utf8mb4_bin"

    @property
    def fetch_first(self):
        return only_if(lambda config: _mariadb(config, (10, 6)), "FETCH FIRST: MariaDB 10.6+")

    @property
    def fetch_ties(self):
        return self.fetch_first

    @property
    def fetch_no_order_by(self):
        return self.fetch_first

    @property
    def fetch_offset_with_options(self):
        return self.fetch_first

    @property
    def fetch_expression(self):
        return exclusions.closed()  # FETCH FIRST takes no expression in MariaDB

    # --- types and values
    @property
    def json_type(self):
        return only_if(lambda config: _mariadb(config, (10, 2, 7)) or not config.db.dialect._is_mariadb, "JSON")

    @property
    def json_index_supplementary_unicode_element(self):
        return skip_if(_mariadb, "MariaDB's JSON functions do not index supplementary characters")

    @property
    def legacy_unconditional_json_extract(self):
        return self.json_type

    @property
    def nvarchar_types(self):
        return exclusions.open()

    @property
    def unicode_ddl(self):
        return exclusions.open()

    @property
    def datetime_literals(self):
        return exclusions.open()

    @property
    def datetime_historic(self):
        return exclusions.open()

    @property
    def date_historic(self):
        return exclusions.open()

    @property
    def datetime_microseconds(self):
        return exclusions.closed()  # DATETIME without (6) drops them; the suite's column has no precision

    @property
    def time_microseconds(self):
        return exclusions.closed()  # the same for TIME

    @property
    def date_implicit_bound(self):
        return fails_on(_TEXT_DATE_DRIVERS, "the driver sends a date as text")

    @property
    def datetime_implicit_bound(self):
        return fails_on(_TEXT_DATE_DRIVERS, "the driver sends a datetime as text")

    @property
    def time_implicit_bound(self):
        return fails_on(_TEXT_DATE_DRIVERS, "the driver sends a time as text")

    @property
    def precision_numerics_many_significant_digits(self):
        return exclusions.open()

    @property
    def precision_numerics_enotation_small(self):
        return exclusions.open()

    @property
    def precision_numerics_retains_significant_digits(self):
        return exclusions.open()

    @property
    def precision_generic_float_type(self):
        return fails_on(_MYSQL, "FLOAT keeps about 4 decimals")

    @property
    def float_or_double_precision_behaves_generically(self):
        return exclusions.closed()

    @property
    def float_cast(self):
        return only_if(lambda config: config.db.dialect._support_float_cast, "CAST AS FLOAT: MariaDB 10.4.5+")

    # --- transactions and the driver
    @property
    def savepoints(self):
        return exclusions.open()

    @property
    def isolation_level(self):
        return exclusions.open()

    @property
    def autocommit(self):
        return exclusions.open()

    @property
    def skip_autocommit_rollback(self):
        return exclusions.open()  # the dialect reads the session's autocommit (detect_autocommit_setting)

    def get_isolation_levels(self, config):
        return {
            "default": "REPEATABLE READ",
            "supported": ["SERIALIZABLE", "READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "AUTOCOMMIT"],
        }

    @property
    def two_phase_transactions(self):
        return exclusions.open()  # XA through SQL (the dialect's XA BEGIN/PREPARE/COMMIT)

    @property
    def dbapi_lastrowid(self):
        return exclusions.open()

    @property
    def emulated_lastrowid(self):
        return exclusions.open()

    @property
    def emulated_lastrowid_even_with_sequences(self):
        return exclusions.open()

    @property
    def supports_lastrowid_for_expressions(self):
        return exclusions.open()

    @property
    def provisioned_upsert(self):
        return only_on(["mariadb"])
