package staunch

// PollerWaits counts the statements whose answer a goroutine awaited in
// the netpoller.
func PollerWaits() uint64 { return pollerWaits.Load() }

// AcquireWaits counts the borrows that waited in the netpoller, and those
// given up there (a cancelled context).
func AcquireWaits() (waited, gaveUp uint64) { return apartWaits.Load(), apartCancels.Load() }
