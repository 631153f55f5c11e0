//go:build unix

package zktest

import "syscall"

var sigStop, sigCont = syscall.SIGSTOP, syscall.SIGCONT
