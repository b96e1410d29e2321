// exec: os/exec from a Go program (Go forks with clone(CLONE_VM|CLONE_VFORK) from whatever thread runs the
// goroutine, then execve). Runs the static busybox: true, false, echo with its output captured, and a pipe.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

func main() {
	bb := "/bin/busybox"
	if len(os.Args) > 1 {
		bb = os.Args[1]
	}
	err := exec.Command(bb, "true").Run()
	fmt.Println("busybox true:", err)

	err = exec.Command(bb, "false").Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		fmt.Println("busybox false: exit status", ee.ExitCode())
	} else {
		fmt.Println("busybox false:", err)
	}

	out, err := exec.Command(bb, "echo", "hello", "from", "a", "child").Output()
	fmt.Printf("busybox echo: %q %v\n", out, err)

	cmd := exec.Command(bb, "tr", "a-z", "A-Z")
	cmd.Stdin = strings.NewReader("piped through tr\n")
	out, err = cmd.Output()
	fmt.Printf("busybox tr: %q %v\n", out, err)

	for i := 0; i < 5; i++ {
		if err := exec.Command(bb, "true").Run(); err != nil {
			fmt.Println("run", i, err)
		}
	}
	fmt.Println("five more runs done")

	_, err = exec.Command("/nonexistent/program").Output()
	fmt.Println("a missing program fails:", err != nil)
}
