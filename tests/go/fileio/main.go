// fileio: files from a Go program in the current directory (run with --rw): create, write, read back,
// append, rename, stat, read a directory, remove. The runtime's netpoller sees these fds at start.
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	dir := "go-fileio.d"
	os.RemoveAll(dir) // what a native run as root left
	must(os.Mkdir(dir, 0o777))
	p := filepath.Join(dir, "a.txt")
	must(os.WriteFile(p, []byte("line one\n"), 0o644))
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	must(err)
	w := bufio.NewWriter(f)
	for i := 2; i <= 4; i++ {
		fmt.Fprintf(w, "line %d\n", i)
	}
	must(w.Flush())
	must(f.Close())
	data, err := os.ReadFile(p)
	must(err)
	fmt.Printf("read back: %q\n", data)
	st, err := os.Stat(p)
	must(err)
	fmt.Println("size:", st.Size(), "regular:", st.Mode().IsRegular())
	must(os.Rename(p, filepath.Join(dir, "b.txt")))
	must(os.WriteFile(filepath.Join(dir, "c.txt"), nil, 0o600))
	ents, err := os.ReadDir(dir)
	must(err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	fmt.Println("directory:", names)
	_, err = os.Stat(p)
	fmt.Println("old name gone:", os.IsNotExist(err))
	r, w2, err := os.Pipe()
	must(err)
	go func() {
		w2.Write([]byte("through an os.Pipe"))
		w2.Close()
	}()
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	fmt.Printf("pipe: %q\n", buf[:n])
	must(os.RemoveAll(dir))
	_, err = os.Stat(dir)
	fmt.Println("removed:", os.IsNotExist(err))
}

func must(err error) {
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
}
