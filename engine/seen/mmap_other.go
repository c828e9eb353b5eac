//go:build !unix

package seen

import "os"

// mapFile maps nothing: reads go through ReadAt.
func mapFile(*os.File, int) []byte { return nil }

func unmap([]byte) {}
