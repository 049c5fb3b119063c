package queue

import "syscall"

// dieWithParent has the kernel kill CMD when chatq dies (even by SIGKILL),
// so that a dead worker's handler does not run on while its message is
// delivered again. Only CMD itself: processes it starts are not covered.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
