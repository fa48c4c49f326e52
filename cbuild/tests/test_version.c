/* The header compiles alone (first include, nothing before it) and twice; the
 * version macros agree with the library; every status has a name. */
#include <staunch.h>
#include <staunch.h>

#include <stdio.h>
#include <string.h>

#if STAUNCH_VERSION != STAUNCH_VERSION_MAJOR * 10000 + STAUNCH_VERSION_MINOR * 100 + STAUNCH_VERSION_PATCH
#error "STAUNCH_VERSION does not combine the parts"
#endif

static int failures = 0;
#define EXPECT(c)                                                      \
    do {                                                               \
        if (!(c)) {                                                    \
            fprintf(stderr, "%s:%d: EXPECT failed: %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                \
        }                                                              \
    } while (0)

int main(void) {
    EXPECT(staunch_version() == STAUNCH_VERSION);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", STAUNCH_VERSION_MAJOR, STAUNCH_VERSION_MINOR,
             STAUNCH_VERSION_PATCH);
    EXPECT(strcmp(staunch_version_string(), want) == 0);

    static const struct {
        staunch_status code;
        const char *name;
    } names[] = {
        {STAUNCH_OK, "STAUNCH_OK"},
        {STAUNCH_NULL_ARGUMENT, "STAUNCH_NULL_ARGUMENT"},
        {STAUNCH_INVALID_UTF8, "STAUNCH_INVALID_UTF8"},
        {STAUNCH_BAD_INDEX, "STAUNCH_BAD_INDEX"},
        {STAUNCH_WRONG_TYPE, "STAUNCH_WRONG_TYPE"},
        {STAUNCH_OUT_OF_RANGE, "STAUNCH_OUT_OF_RANGE"},
        {STAUNCH_USE_AFTER_RELEASE, "STAUNCH_USE_AFTER_RELEASE"},
        {STAUNCH_INVALID_CONFIG, "STAUNCH_INVALID_CONFIG"},
        {STAUNCH_NULL_VALUE, "STAUNCH_NULL_VALUE"},
        {STAUNCH_NO_ROW, "STAUNCH_NO_ROW"},
        {STAUNCH_PARAM_COUNT, "STAUNCH_PARAM_COUNT"},
        {STAUNCH_BAD_PARAM_TYPE, "STAUNCH_BAD_PARAM_TYPE"},
        {STAUNCH_CONN_BUSY, "STAUNCH_CONN_BUSY"},
        {STAUNCH_INVALID_ARGUMENT, "STAUNCH_INVALID_ARGUMENT"},
        {STAUNCH_POOL_EXHAUSTED, "STAUNCH_POOL_EXHAUSTED"},
        {STAUNCH_UNREACHABLE, "STAUNCH_UNREACHABLE"},
        {STAUNCH_CONNECT_REJECTED, "STAUNCH_CONNECT_REJECTED"},
        {STAUNCH_CONNECT_FAILED, "STAUNCH_CONNECT_FAILED"},
        {STAUNCH_CLOSED, "STAUNCH_CLOSED"},
        {STAUNCH_SERVER_ERROR, "STAUNCH_SERVER_ERROR"},
        {STAUNCH_IO_ERROR, "STAUNCH_IO_ERROR"},
        {STAUNCH_INTERNAL, "STAUNCH_INTERNAL"},
        {STAUNCH_PANIC, "STAUNCH_PANIC"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        EXPECT(strcmp(staunch_status_name(names[i].code), names[i].name) == 0);
        /* The ranges of the error model. */
        staunch_status c = names[i].code;
        EXPECT(c == 0 || (c >= 100 && c < 400) || (c >= 900 && c < 1000));
    }
    EXPECT(strcmp(staunch_status_name(4242), "STAUNCH_UNKNOWN_STATUS") == 0);
    EXPECT(STAUNCH_TIMEOUT_DEFAULT == UINT32_MAX);

    if (failures) return 1;
    printf("staunch %s (header %d)\n", staunch_version_string(), STAUNCH_VERSION);
    return 0;
}
