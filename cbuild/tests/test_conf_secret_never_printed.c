/* conf_secret_never_printed: passwords holding each of / ? # @ : % + and a
 * space, raw and percent-encoded, in URLs well-formed and broken in each part
 * (scheme, host, port, path, a knob's value, an unknown knob), given to
 * staunch_pool_open and staunch_options_set_url: neither half of the password
 * may appear in an error message, an event's message or the connect error of
 * a well-formed URL (a port nothing listens on). Needs no server. */
#include "util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *const HALVES[2] = {"Qv3lft", "Zr8rgt"};

static void check_clean(const char *what, const char *url, const char *text) {
    if (text == NULL) return;
    for (int i = 0; i < 2; i++)
        CHECKF(strstr(text, HALVES[i]) == NULL, "%s of %s shows the password: %s", what, url, text);
}

static void on_event(const staunch_event *ev, void *user_data) {
    const char *url = user_data;
    check_clean("an event", url, ev->message);
}

static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
    socklen_t n = sizeof a;
    CHECK(getsockname(fd, (struct sockaddr *)&a, &n) == 0);
    close(fd); /* nothing listens there now: connects are refused at once */
    return ntohs(a.sin_port);
}

static void encode(char *out, size_t n, const char *s) {
    size_t o = 0;
    for (; *s && o + 4 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, n - o, "%%%02X", c);
    }
    out[o] = '\0';
}

int main(void) {
    const char chars[] = "/?#@:%+ ";
    const char *q = "connect_timeout=200ms&connection_timeout=300ms";
    int port = free_port(), opened = 0, runs = 0;
    for (const char *c = chars; *c; c++) {
        char pw[64], forms[2][128];
        snprintf(pw, sizeof pw, "%s%c%s", HALVES[0], *c, HALVES[1]);
        snprintf(forms[0], sizeof forms[0], "%s", pw);
        encode(forms[1], sizeof forms[1], pw);
        for (int f = 0; f < 2; f++) {
            const char *w = forms[f];
            char urls[8][512];
            const char *parts[8] = {"none", "scheme", "scheme", "host", "port", "path", "query knob", "unknown knob"};
            snprintf(urls[0], 512, "mysql://app:%s@127.0.0.1:%d/db?%s", w, port, q);
            snprintf(urls[1], 512, "mysq://app:%s@127.0.0.1:%d/db?%s", w, port, q);
            snprintf(urls[2], 512, "app:%s@127.0.0.1:%d/db?%s", w, port, q);
            snprintf(urls[3], 512, "mysql://app:%s@[127.0.0.1:%d/db?%s", w, port, q);
            snprintf(urls[4], 512, "mysql://app:%s@127.0.0.1:99999/db?%s", w, q);
            snprintf(urls[5], 512, "mysql://app:%s@127.0.0.1:%d/d%%zz?%s", w, port, q);
            snprintf(urls[6], 512, "mysql://app:%s@127.0.0.1:%d/db?%s&max_size=x", w, port, q);
            snprintf(urls[7], 512, "mysql://app:%s@127.0.0.1:%d/db?%s&bogus=1", w, port, q);
            for (int u = 0; u < 8; u++) {
                const char *url = urls[u];
                int well_formed = u == 0 && !(*c == '%' && f == 0);
                staunch_error *err = NULL;
                staunch_pool *pool = NULL;
                /* staunch_pool_open */
                staunch_status st = staunch_pool_open(url, &pool, &err);
                if (st == STAUNCH_OK) {
                    CHECKF(well_formed, "%s (broken: %s) opened", url, parts[u]);
                    staunch_pool_free(pool);
                    pool = NULL;
                } else {
                    CHECKF(!well_formed, "%s did not open: %s", url, staunch_error_message(err));
                    CHECKF(st == STAUNCH_INVALID_CONFIG, "%s: status %d", url, (int)st);
                    check_clean("staunch_pool_open's error", url, staunch_error_message(err));
                    staunch_error_free(err);
                    err = NULL;
                }
                /* options, with an event callback, and a get that fails */
                staunch_options *opts = NULL;
                CHECK(staunch_options_new(&opts, NULL) == STAUNCH_OK);
                CHECK(staunch_options_set_event_callback(opts, on_event, (void *)url, NULL, NULL) == STAUNCH_OK);
                st = staunch_options_set_url(opts, url, &err);
                if (st == STAUNCH_OK) st = staunch_pool_open_options(opts, &pool, &err);
                if (st == STAUNCH_OK) {
                    opened++;
                    staunch_conn *conn = NULL;
                    st = staunch_pool_get(pool, STAUNCH_TIMEOUT_DEFAULT, &conn, &err);
                    CHECKF(st != STAUNCH_OK, "nothing listens on %d", port);
                    check_clean("staunch_pool_get's error", url, staunch_error_message(err));
                    staunch_error_free(err);
                    staunch_pool_free(pool);
                } else {
                    check_clean("the options' error", url, staunch_error_message(err));
                    staunch_error_free(err);
                }
                staunch_options_free(opts);
                runs++;
            }
        }
    }
    CHECKF(opened == 15, "%d well-formed URLs opened, expected 15", opened);
    printf("conf_secret_never_printed: %d URLs, %d opened, no password shown\n", runs, opened);
    return 0;
}
