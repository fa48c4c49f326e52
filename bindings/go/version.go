package staunch

// Version is this module's version: the C library's it is released with
// (scripts/version.sh keeps it equal to the crate's version).
const Version = "1.13.0"
