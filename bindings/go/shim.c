// C glue for the event callback: the exported Go functions (events.go)
// become the callback and its finalizer, and the cgo.Handle travels as the
// opaque user_data (made a pointer here, in C, so Go never turns an integer
// into an unsafe.Pointer). C keeps no Go pointer.
#include <stdint.h>
#include "staunch.h"
#include "_cgo_export.h"

staunch_status go_set_event_callback(staunch_options *opts, uintptr_t handle,
                                     staunch_error **err) {
    return staunch_options_set_event_callback(
        opts, (staunch_event_callback)staunchGoEvent, (void *)handle,
        (staunch_finalizer)staunchGoFinalize, err);
}
