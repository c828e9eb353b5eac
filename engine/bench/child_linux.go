package bench

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that a ^C typed
// at the terminal (SIGINT to the whole foreground group) reaches the
// bench alone, which then reports with the child still up and ends it;
// the child is killed if the bench dies first.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
