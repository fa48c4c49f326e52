/* Links against an installed staunch and checks header and library agree. */
#include <staunch.h>

#include <stdio.h>

int main(void) {
    if (staunch_version() != STAUNCH_VERSION) {
        fprintf(stderr, "header %d, library %u\n", STAUNCH_VERSION, staunch_version());
        return 1;
    }
    staunch_error *err = NULL;
    staunch_pool *pool = NULL;
    if (staunch_pool_open("postgres://nope", &pool, &err) != STAUNCH_INVALID_CONFIG) return 1;
    staunch_error_free(err);
    printf("installed staunch %s works\n", staunch_version_string());
    return 0;
}
