// Command bare is the yardstick for bench/wrk/renewals.sh: a net/http server
// whose handler only answers 200 with an empty body, as a renewal's answer
// is, with net/http's defaults (no timeouts) and Go's (GOGC=100). It
// prints the address it listens on, then serves until killed.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "TCP address to listen on")
	flag.Parse()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	fmt.Fprintln(os.Stderr, "bare:", err)
	os.Exit(1)
}
