//go:build !(linux || darwin || freebsd)

package storage

// diskFree cannot tell the free space here: an upgrade goes ahead without
// checking it (a full disk then fails it, and the file is left as it was).
func diskFree(string) (int64, bool) { return 0, false }
