package staunch

// How the library is found and linked
//
// Through pkg-config (`#cgo pkg-config: staunch`), as any installed C
// package: the .deb's staunch.pc is on pkg-config's default path; for the
// tarball unpacked into PREFIX, set PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
// (the .pc is relocatable), so `go get` builds with no CGO_* flags. In this
// repository scripts/go-env.sh writes a staunch.pc for the checkout (the
// repo's include/, cargo's output directory) and puts it first on
// PKG_CONFIG_PATH; it also sets
//
//	CGO_LDFLAGS="-L$DIR -Wl,-rpath,$DIR"
//
// (the rpath lets the test binaries find libstaunch.so without
// LD_LIBRARY_PATH). Build with the tag staunch_static to link libstaunch.a
// instead (no pkg-config; the directory from CGO_LDFLAGS' -L): the Go
// binary then needs no libstaunch.so at run time.

/*
#cgo staunch_static CFLAGS: -I${SRCDIR}/../../include
#cgo !staunch_static pkg-config: staunch
#cgo staunch_static LDFLAGS: -l:libstaunch.a -lgcc_s -lutil -lrt -lpthread -lm -ldl
#include <stdlib.h>
#include <string.h>
#include "staunch.h"

*/
import "C"

import "unsafe"

// ABI checks at init: the library loaded must be major version 1, and the
// structs this package reads field by field must have the layout cgo saw in
// the header.
func checkABI() error {
	v := uint32(C.staunch_version())
	if v/10000 != C.STAUNCH_VERSION_MAJOR || v < C.STAUNCH_VERSION {
		return &Error{Status: StatusInternal, Op: "load", Message: "libstaunch version " +
			C.GoString(C.staunch_version_string()) + " does not match the header this package was built with"}
	}
	// staunch_param and staunch_value cross the ABI as arrays: their sizes
	// must match exactly (the size-prefixed structs may grow; they carry
	// their size).
	for _, s := range []struct {
		name string
		size uintptr
	}{
		{"staunch_param", unsafe.Sizeof(C.staunch_param{})},
		{"staunch_value", unsafe.Sizeof(C.staunch_value{})},
	} {
		cs := C.CString(s.name)
		got := uintptr(C.staunch_struct_size(cs))
		C.free(unsafe.Pointer(cs))
		if got != s.size {
			return &Error{Status: StatusInternal, Op: "load", Message: "libstaunch's " + s.name + " layout differs from the header"}
		}
	}
	return nil
}

var abiErr = checkABI()
