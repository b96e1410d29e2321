// httpd: a net/http server on 127.0.0.1 port 0 and a client in the same program: GET, POST, 404, keep-alive.
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	fmt.Println("listening on 127.0.0.1, port chosen:", ln.Addr().(*net.TCPAddr).Port > 0)
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Query().Get("name"))
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write([]byte(strings.ToUpper(string(b))))
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	base := "http://" + ln.Addr().String()
	c := &http.Client{}
	for i := 0; i < 3; i++ {
		resp, err := c.Get(base + "/hello?name=gopher")
		if err != nil {
			fmt.Println("get:", err)
			os.Exit(1)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("GET /hello: %d %q\n", resp.StatusCode, b)
	}
	resp, err := c.Post(base+"/echo", "text/plain", strings.NewReader("post body"))
	if err != nil {
		fmt.Println("post:", err)
		os.Exit(1)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("POST /echo: %d %q\n", resp.StatusCode, b)
	resp, err = c.Get(base + "/missing")
	if err == nil {
		resp.Body.Close()
		fmt.Println("GET /missing:", resp.StatusCode)
	}
	srv.Close()
	_, err = c.Get(base + "/hello")
	fmt.Println("after Close, a GET fails:", err != nil)
}
