// The header compiles in C++ (and survives double inclusion); its functions
// link with C linkage.
#include <staunch.h>
#include <staunch.h>

#include <cstdio>
#include <cstring>

int main() {
    if (staunch_version() != STAUNCH_VERSION) return 1;
    staunch_param p = staunch_param_text("h\xc3\xa9llo");
    if (p.type != STAUNCH_PARAM_TEXT || p.len != 6) return 1;
    staunch_stats s;
    std::memset(&s, 0, sizeof s);
    staunch_error *err = nullptr;
    if (staunch_pool_stats(nullptr, &s, &err) != STAUNCH_NULL_ARGUMENT) return 1;
    if (err == nullptr || staunch_error_status(err) != STAUNCH_NULL_ARGUMENT) return 1;
    staunch_error_free(err);
    std::printf("C++ sees staunch %s\n", staunch_version_string());
    return 0;
}
