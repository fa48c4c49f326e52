/* abi_layout: the header's structs have the library's sizes and field
 * offsets (staunch_struct_size / staunch_field_offset); a size-prefixed
 * staunch_stats smaller than the library's gets only the fields that fit.
 * Needs no server. */
#include "util.h"

#include <stddef.h>

static int failures = 0;

static void size_is(const char *name, size_t want) {
    size_t got = staunch_struct_size(name);
    if (got != want) {
        fprintf(stderr, "sizeof(%s): header %zu, library %zu\n", name, want, got);
        failures++;
    }
}

static void offset_is(const char *name, const char *field, size_t want) {
    size_t got = staunch_field_offset(name, field);
    if (got != want) {
        fprintf(stderr, "offsetof(%s, %s): header %zu, library %zu\n", name, field, want, got);
        failures++;
    }
}

#define SIZE(T) size_is(#T, sizeof(T))
#define OFF(T, f) offset_is(#T, #f, offsetof(T, f))

int main(void) {
    SIZE(staunch_datetime);
    OFF(staunch_datetime, year);
    OFF(staunch_datetime, month);
    OFF(staunch_datetime, day);
    OFF(staunch_datetime, hour);
    OFF(staunch_datetime, minute);
    OFF(staunch_datetime, second);
    OFF(staunch_datetime, microsecond);

    SIZE(staunch_time);
    OFF(staunch_time, negative);
    OFF(staunch_time, days);
    OFF(staunch_time, hours);
    OFF(staunch_time, minutes);
    OFF(staunch_time, seconds);
    OFF(staunch_time, microseconds);

    SIZE(staunch_param);
    OFF(staunch_param, type);
    OFF(staunch_param, i64);
    OFF(staunch_param, u64);
    OFF(staunch_param, f64);
    OFF(staunch_param, ptr);
    OFF(staunch_param, len);
    OFF(staunch_param, datetime);
    OFF(staunch_param, time);
    OFF(staunch_param, _reserved);

    SIZE(staunch_value);
    OFF(staunch_value, type);
    OFF(staunch_value, i64);
    OFF(staunch_value, u64);
    OFF(staunch_value, f64);
    OFF(staunch_value, ptr);
    OFF(staunch_value, len);
    OFF(staunch_value, datetime);
    OFF(staunch_value, time);
    OFF(staunch_value, _reserved);

    SIZE(staunch_column_info);
    OFF(staunch_column_info, size);
    OFF(staunch_column_info, column_type);
    OFF(staunch_column_info, type_code);
    OFF(staunch_column_info, flags);
    OFF(staunch_column_info, charset);
    OFF(staunch_column_info, length);
    OFF(staunch_column_info, decimals);
    OFF(staunch_column_info, name);
    OFF(staunch_column_info, name_len);
    OFF(staunch_column_info, org_name);
    OFF(staunch_column_info, org_name_len);
    OFF(staunch_column_info, table);
    OFF(staunch_column_info, table_len);
    OFF(staunch_column_info, org_table);
    OFF(staunch_column_info, org_table_len);
    OFF(staunch_column_info, schema);
    OFF(staunch_column_info, schema_len);

    SIZE(staunch_result);
    OFF(staunch_result, size);
    OFF(staunch_result, affected_rows);
    OFF(staunch_result, last_insert_id);
    OFF(staunch_result, warnings);
    OFF(staunch_result, in_transaction);
    OFF(staunch_result, autocommit);
    OFF(staunch_result, info);

    SIZE(staunch_txn_options);
    OFF(staunch_txn_options, size);
    OFF(staunch_txn_options, isolation);
    OFF(staunch_txn_options, read_only);

    SIZE(staunch_event);
    OFF(staunch_event, kind);
    OFF(staunch_event, status);
    OFF(staunch_event, connection_id);
    OFF(staunch_event, count);
    OFF(staunch_event, duration_us);
    OFF(staunch_event, message);
    OFF(staunch_event, pool_id);

    SIZE(staunch_stats);
    OFF(staunch_stats, size);
    OFF(staunch_stats, total);
    OFF(staunch_stats, active);
    OFF(staunch_stats, idle);
    OFF(staunch_stats, reserved);
    OFF(staunch_stats, waiting);
    OFF(staunch_stats, pending_creates);
    OFF(staunch_stats, connecting);
    OFF(staunch_stats, adder_threads);
    OFF(staunch_stats, acquired);
    OFF(staunch_stats, acquire_timeouts);
    OFF(staunch_stats, created);
    OFF(staunch_stats, closed_idle_timeout);
    OFF(staunch_stats, closed_max_lifetime);
    OFF(staunch_stats, closed_broken);
    OFF(staunch_stats, closed_evicted);
    OFF(staunch_stats, closed_pool_closed);
    OFF(staunch_stats, connect_failures);
    OFF(staunch_stats, abandoned_connects);
    OFF(staunch_stats, validation_failures);
    OFF(staunch_stats, keepalives);
    OFF(staunch_stats, leaks_reported);
    OFF(staunch_stats, rollbacks_on_return);
    OFF(staunch_stats, violations);
    OFF(staunch_stats, acquire_count);
    OFF(staunch_stats, acquire_p50_us);
    OFF(staunch_stats, acquire_p99_us);
    OFF(staunch_stats, acquire_max_us);
    OFF(staunch_stats, connect_count);
    OFF(staunch_stats, connect_p50_us);
    OFF(staunch_stats, connect_p99_us);
    OFF(staunch_stats, connect_max_us);
    OFF(staunch_stats, max_size);
    OFF(staunch_stats, acquires_waited);
    OFF(staunch_stats, acquire_wait_us);
    OFF(staunch_stats, acquires_cancelled);
    OFF(staunch_stats, resets_on_return);
    OFF(staunch_stats, statements_cut);

    CHECKF(failures == 0, "%d layout mismatches", failures);

    if (sizeof(void *) == 8) {
        CHECK(sizeof(staunch_param) == 96);
        CHECK(sizeof(staunch_value) == 96);
    }
    CHECK(staunch_struct_size("nope") == 0);
    CHECK(staunch_struct_size(NULL) == 0);
    CHECK(staunch_field_offset("staunch_param", "nope") == SIZE_MAX);
    CHECK(staunch_field_offset("nope", "len") == SIZE_MAX);
    CHECK(staunch_field_offset(NULL, "len") == SIZE_MAX);
    CHECK(staunch_field_offset("staunch_param", NULL) == SIZE_MAX);
    CHECK(staunch_version() / 10000 == STAUNCH_VERSION_MAJOR);

    /* Size-prefixed stats: a pool on a port nobody listens on (it never
     * connects, which the stats do not need). */
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, "mysql://u@127.0.0.1:1/db", &pool);
    CHECK(pool != NULL);

    staunch_stats s = {.size = 4};
    FAILS(STAUNCH_INVALID_ARGUMENT, NULL, staunch_pool_stats, pool, &s);

    memset(&s, 0xAB, sizeof s);
    s.size = 16;
    OK(staunch_pool_stats, pool, &s);
    CHECK(s.size == 16);
    CHECK(s.total != 0xABABABABABABABABull);
    const unsigned char *bytes = (const unsigned char *)&s;
    for (size_t i = offsetof(staunch_stats, active); i < sizeof s; i++)
        CHECKF(bytes[i] == 0xAB, "byte %zu of staunch_stats written (size 16)", i);

    staunch_pool_free(pool);
    printf("abi_layout: ok\n");
    return 0;
}
