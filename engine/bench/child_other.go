//go:build !linux

package bench

import "os/exec"

// ownGroup leaves cmd in the bench's process group: a ^C typed at the
// terminal ends the child too (Linux only puts it in a group of its own).
func ownGroup(*exec.Cmd) {}
