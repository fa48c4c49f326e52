package staunch

// PollerWaits counts the statements whose answer a goroutine awaited in
// the netpoller.
func PollerWaits() uint64 { return pollerWaits.Load() }
