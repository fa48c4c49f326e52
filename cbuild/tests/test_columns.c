/* columns: staunch_rows_column_info on a table of many column types: MySQL
 * type codes, flags, charset, length, decimals, names (alias, original name,
 * table alias, table, schema); JSON read as text; a short struct gets only
 * the fields that fit; bad size and bad index are refused;
 * staunch_rows_column_infos gives every column's the same in one call, at
 * the caller's stride. */
#include "util.h"

#define NCOLS 14

static staunch_column_info info_of(staunch_rows *rows, size_t idx) {
    staunch_column_info ci = {.size = sizeof(staunch_column_info)};
    OK(staunch_rows_column_info, rows, idx, &ci);
    CHECK(ci.size == sizeof(staunch_column_info));
    CHECK(ci.name != NULL && ci.org_name != NULL && ci.table != NULL && ci.org_table != NULL &&
          ci.schema != NULL);
    CHECK(ci.name_len == strlen(ci.name));
    CHECK(ci.org_name_len == strlen(ci.org_name));
    CHECK(ci.table_len == strlen(ci.table));
    CHECK(ci.org_table_len == strlen(ci.org_table));
    CHECK(ci.schema_len == strlen(ci.schema));
    staunch_column_type t = 99;
    OK(staunch_rows_column_type, rows, idx, &t);
    CHECK(ci.column_type == t);
    return ci;
}

int main(void) {
    test_endpoint ep = parse_url(test_url());
    staunch_pool *pool = open_pool("");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    exec_sql(c, "DROP TABLE IF EXISTS c_cols");
    /* `dec` is reserved (DEC is DECIMAL): the column is named dc. */
    exec_sql(c,
             "CREATE TABLE c_cols (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, "
             "flag TINYINT(1), bits BIT(3), yr YEAR, doc JSON, f FLOAT, d DOUBLE, "
             "ts TIMESTAMP(3) NULL, dt DATETIME(6), dc DECIMAL(10,2), e ENUM('a','b'), "
             "s SET('x','y'), vb VARBINARY(8), t TEXT NOT NULL)");
    exec_sql(c,
             "INSERT INTO c_cols (flag, bits, yr, doc, f, d, ts, dt, dc, e, s, vb, t) VALUES "
             "(1, b'101', 2024, '{\"k\": [1, 2]}', 1.5, 2.5, '2024-02-29 12:00:00.123', "
             "'2024-02-29 12:00:00.123456', 12.34, 'b', 'x,y', 0x00ff, 'text')");

    staunch_rows *rows = NULL;
    OK(staunch_conn_query, c,
       "SELECT id, flag AS fl, bits, yr, doc, f, d, ts, dt, dc, e, s, vb, t FROM c_cols AS cc",
       NULL, 0, &rows);
    CHECK(staunch_rows_column_count(rows) == NCOLS);

    staunch_column_info ci[NCOLS];
    for (size_t k = 0; k < NCOLS; k++) {
        ci[k] = info_of(rows, k);
        printf("%-4s type_code %3u flags %5u charset %3u length %10u decimals %2u "
               "column_type %u\n",
               ci[k].name, ci[k].type_code, ci[k].flags, ci[k].charset, ci[k].length,
               ci[k].decimals, ci[k].column_type);
        CHECK(strcmp(ci[k].table, "cc") == 0);
        CHECK(strcmp(ci[k].org_table, "c_cols") == 0);
        CHECKF(strcmp(ci[k].schema, ep.db) == 0, "schema %s, want %s", ci[k].schema, ep.db);
    }

    /* id */
    CHECK(ci[0].type_code == 3);
    CHECK(ci[0].flags & 1);
    CHECK(ci[0].flags & 2);
    CHECK(ci[0].flags & 32);
    CHECK(ci[0].flags & 512);
    CHECK(strcmp(ci[0].name, "id") == 0 && strcmp(ci[0].org_name, "id") == 0);
    /* flag AS fl */
    CHECK(ci[1].type_code == 1);
    CHECK(ci[1].length == 1);
    CHECK(strcmp(ci[1].name, "fl") == 0 && ci[1].name_len == 2);
    CHECK(strcmp(ci[1].org_name, "flag") == 0 && ci[1].org_name_len == 4);
    CHECK(ci[2].type_code == 16);  /* bits */
    CHECK(ci[3].type_code == 13);  /* yr */
    /* doc JSON: MariaDB's JSON is LONGTEXT (252), MySQL's 245. */
    printf("doc: type_code %u column_type %u\n", ci[4].type_code, ci[4].column_type);
    CHECK(ci[4].type_code == 252 || ci[4].type_code == 245);
    CHECK(ci[4].column_type == STAUNCH_COLUMN_TEXT);
    CHECK(ci[5].type_code == 4);   /* f */
    CHECK(ci[6].type_code == 5);   /* d */
    CHECK(ci[7].type_code == 7 && ci[7].decimals == 3);    /* ts */
    CHECK(ci[8].type_code == 12 && ci[8].decimals == 6);   /* dt */
    CHECK(ci[9].type_code == 246 && ci[9].decimals == 2);  /* dc */
    CHECK(ci[10].flags & 256);   /* e: ENUM */
    CHECK(ci[11].flags & 2048);  /* s: SET */
    /* vb */
    CHECK(ci[12].type_code == 253 && ci[12].charset == 63 && (ci[12].flags & 128));
    /* t */
    CHECK(ci[13].type_code == 252 && (ci[13].flags & 1));

    /* The JSON document reads as text. */
    bool has = false;
    OK(staunch_rows_next, rows, &has);
    CHECK(has);
    const char *doc = NULL;
    size_t len = 0;
    OK(staunch_rows_get_text, rows, 4, &doc, &len);
    CHECKF(strcmp(doc, "{\"k\": [1, 2]}") == 0, "doc = %s", doc);
    CHECK(len == strlen(doc));

    /* A struct that has room for column_type only. */
    union {
        staunch_column_info ci;
        unsigned char b[sizeof(staunch_column_info)];
    } u;
    memset(&u, 0xAB, sizeof u);
    u.ci.size = sizeof(size_t) + 4;
    OK(staunch_rows_column_info, rows, 4, &u.ci);
    CHECK(u.ci.size == sizeof(size_t) + 4);
    CHECK(u.ci.column_type == STAUNCH_COLUMN_TEXT);
    for (size_t k = sizeof(size_t) + 4; k < sizeof(size_t) + 8; k++) CHECK(u.b[k] == 0xAB);

    staunch_column_info bad = {.size = 0};
    FAILS(STAUNCH_INVALID_ARGUMENT, NULL, staunch_rows_column_info, rows, 0, &bad);
    staunch_column_info out = {.size = sizeof(staunch_column_info)};
    FAILS(STAUNCH_BAD_INDEX, NULL, staunch_rows_column_info, rows, NCOLS, &out);

    /* Every column at once: the same as one by one; room for fewer: those;
     * a caller's stride wider than the struct (a newer header's) is kept. */
    staunch_column_info all[NCOLS + 1];
    memset(all, 0xAB, sizeof all);
    all[0].size = sizeof(staunch_column_info);
    OK(staunch_rows_column_infos, rows, all, NCOLS + 1);
    for (size_t i = 0; i < NCOLS; i++) {
        staunch_column_info one = info_of(rows, i);
        CHECKF(all[i].size == sizeof(staunch_column_info) && all[i].type_code == one.type_code &&
                   all[i].flags == one.flags && all[i].length == one.length &&
                   all[i].decimals == one.decimals && all[i].name == one.name &&
                   all[i].name_len == one.name_len && all[i].schema == one.schema,
               "column %zu differs from staunch_rows_column_info's", i);
    }
    CHECK(all[NCOLS].size == (size_t)0xABABABABABABABABull);
    struct wide {
        staunch_column_info ci;
        uint64_t later;
    } w[3];
    memset(w, 0xCD, sizeof w);
    w[0].ci.size = sizeof(struct wide);
    OK(staunch_rows_column_infos, rows, &w[0].ci, 2);
    CHECK(w[1].ci.size == sizeof(staunch_column_info) && w[1].ci.name_len == info_of(rows, 1).name_len);
    CHECK(w[0].later == 0xCDCDCDCDCDCDCDCDull && w[2].ci.size == (size_t)0xCDCDCDCDCDCDCDCDull);
    staunch_column_info zero = {.size = 0};
    FAILS(STAUNCH_INVALID_ARGUMENT, NULL, staunch_rows_column_infos, rows, &zero, 1);
    FAILS(STAUNCH_NULL_ARGUMENT, NULL, staunch_rows_column_infos, rows, NULL, 1);
    /* Room for none: nothing is read, not even a size. `end` points just
     * past a block, so memcheck reports any read there (the library's Rust
     * is not instrumented by ASan). */
    char *block = malloc(16);
    CHECK(block != NULL);
    OK(staunch_rows_column_infos, rows, (staunch_column_info *)(void *)(block + 16), 0);
    free(block);

    staunch_rows_free(rows);
    exec_sql(c, "DROP TABLE c_cols");
    staunch_conn_free(c);
    staunch_pool_free(pool);
    printf("columns: ok\n");
    return 0;
}
