/* options_defaults: a binding's default (staunch_options_set_default) applies
 * unless the user gives the knob, in the URL or by staunch_options_set,
 * before or after the default; a bad default fails at once naming the knob.
 * The knob names and the URL redaction the core uses are exported. Needs no
 * server: the pools open without connecting, and staunch_pool_name reads
 * the knob back. */
#include "util.h"

/* The name of a pool opened from: a default pool_name, then (or first, when
 * `url_first`) the URL, then `set` (may be NULL) as pool_name. */
static void pool_name_of(const char *url, const char *set, bool url_first, char *name,
                         size_t n) {
    staunch_options *opts = NULL;
    OK(staunch_options_new, &opts);
    if (url_first) OK(staunch_options_set_url, opts, url);
    OK(staunch_options_set_default, opts, "pool_name", "face-default");
    if (!url_first) OK(staunch_options_set_url, opts, url);
    if (set) OK(staunch_options_set, opts, "pool_name", set);
    staunch_pool *pool = NULL;
    OK(staunch_pool_open_options, opts, &pool);
    staunch_options_free(opts);
    size_t len = 0;
    OK(staunch_pool_name, pool, name, n, &len);
    CHECK(len < n);
    staunch_pool_free(pool);
}

static void the_user_wins_in_any_order(void) {
    char name[64];
    for (int first = 0; first < 2; first++) {
        pool_name_of("mysql://u@127.0.0.1:1/db", NULL, first, name, sizeof name);
        CHECKF(strcmp(name, "face-default") == 0, "%s", name);
        pool_name_of("mysql://u@127.0.0.1:1/db?pool_name=mine", NULL, first, name, sizeof name);
        CHECKF(strcmp(name, "mine") == 0, "%s", name);
        pool_name_of("mysql://u@127.0.0.1:1/db", "set", first, name, sizeof name);
        CHECKF(strcmp(name, "set") == 0, "%s", name);
    }
    /* Set before the default: still the user's. */
    staunch_options *opts = NULL;
    OK(staunch_options_new, &opts);
    OK(staunch_options_set_url, opts, "mysql://u@127.0.0.1:1/db");
    OK(staunch_options_set, opts, "pool_name", "early");
    OK(staunch_options_set_default, opts, "pool_name", "face-default");
    staunch_pool *pool = NULL;
    OK(staunch_pool_open_options, opts, &pool);
    size_t len = 0;
    OK(staunch_pool_name, pool, name, sizeof name, &len);
    CHECKF(strcmp(name, "early") == 0, "%s", name);
    staunch_pool_free(pool);
    /* A default out of range is found when the pool opens, naming the knob. */
    OK(staunch_options_set_default, opts, "max_size", "0");
    FAILS(STAUNCH_INVALID_CONFIG, "max_size must be between", staunch_pool_open_options, opts,
          &pool);
    staunch_options_free(opts);
}

static void bad_defaults_fail_at_once(void) {
    staunch_options *opts = NULL;
    OK(staunch_options_new, &opts);
    OK(staunch_options_set_url, opts, "mysql://u@127.0.0.1:1/db?interpolate_params=false");
    FAILS(STAUNCH_INVALID_CONFIG, "unknown knob \"interpolate_parms\"",
          staunch_options_set_default, opts, "interpolate_parms", "true");
    /* Even though the URL's value wins, a default that does not parse is an error. */
    FAILS(STAUNCH_INVALID_CONFIG, "interpolate_params must be true or false",
          staunch_options_set_default, opts, "interpolate_params", "maybe");
    FAILS(STAUNCH_NULL_ARGUMENT, "opts", staunch_options_set_default, NULL, "max_size", "1");
    FAILS(STAUNCH_NULL_ARGUMENT, "knob", staunch_options_set_default, opts, NULL, "1");
    FAILS(STAUNCH_NULL_ARGUMENT, "value", staunch_options_set_default, opts, "max_size", NULL);
    staunch_options_free(opts);
}

static void knob_names(void) {
    size_t n = staunch_knob_count();
    CHECK(n > 10);
    bool interpolate = false;
    for (size_t i = 0; i < n; i++) {
        const char *name = staunch_knob_name(i);
        CHECK(name != NULL && name[0] != '\0');
        interpolate |= strcmp(name, "interpolate_params") == 0;
        /* Every name is a knob staunch_options_set takes. */
        staunch_options *opts = NULL;
        OK(staunch_options_new, &opts);
        staunch_error *err = NULL;
        staunch_status st = staunch_options_set(opts, name, "", &err);
        CHECKF(st == STAUNCH_OK, "%s: %s", name, staunch_error_message(err));
        staunch_error_free(err);
        staunch_options_free(opts);
    }
    CHECK(interpolate);
    CHECK(staunch_knob_name(n) == NULL);
}

static void url_redaction(void) {
    const char *url = "mysql://app:hunter2@h:3306/db?monitor_password=s3cret&max_size=2";
    const char *want = "mysql://app:<redacted>@h:3306/db?monitor_password=<redacted>&max_size=2";
    size_t len = 0;
    OK(staunch_url_redact, url, NULL, 0, &len);
    CHECK(len == strlen(want));
    char buf[128];
    OK(staunch_url_redact, url, buf, sizeof buf, &len);
    CHECKF(strcmp(buf, want) == 0, "%s", buf);
    char small[12];
    OK(staunch_url_redact, url, small, sizeof small, &len);
    CHECK(len == strlen(want) && strlen(small) == sizeof small - 1);
    CHECK(strncmp(small, want, sizeof small - 1) == 0);
    OK(staunch_url_redact, "u:hunter2@h/db", buf, sizeof buf, &len);
    CHECKF(strstr(buf, "hunter2") == NULL, "%s", buf);
    FAILS(STAUNCH_NULL_ARGUMENT, "url", staunch_url_redact, NULL, buf, sizeof buf, &len);
    FAILS(STAUNCH_NULL_ARGUMENT, "len", staunch_url_redact, url, buf, sizeof buf, NULL);
}

int main(void) {
    the_user_wins_in_any_order();
    bad_defaults_fail_at_once();
    knob_names();
    url_redaction();
    return 0;
}
