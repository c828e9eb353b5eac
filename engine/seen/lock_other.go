//go:build !unix

package seen

import "os"

// lockDir takes no lock where flock(2) is missing: the directories of
// crawls killed there stay until removed by hand.
func lockDir(string) (*os.File, error) { return nil, nil }

func sweep(string, string) {}
