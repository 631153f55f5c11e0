package webhdfs

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// remoteError is an error answered in WebHDFS's shape, the one Hadoop's
// ExceptionHandler writes and every WebHDFS client parses:
//
//	{"RemoteException":{"exception":"FileNotFoundException","javaClassName":"java.io.FileNotFoundException","message":"..."}}
//
// raw, when set, is a NameNode's own answer passed on unchanged.
type remoteError struct {
	status    int
	javaClass string
	message   string
	raw       []byte
}

func newRemote(status int, javaClass, format string, a ...any) *remoteError {
	return &remoteError{status: status, javaClass: javaClass, message: fmt.Sprintf(format, a...)}
}

func illegalArgument(format string, a ...any) *remoteError {
	return newRemote(http.StatusBadRequest, "java.lang.IllegalArgumentException", format, a...)
}

func (e *remoteError) Error() string { return e.javaClass + ": " + e.message }

func writeRemote(w http.ResponseWriter, e *remoteError) {
	body := e.raw
	if body == nil {
		simple := e.javaClass[strings.LastIndexByte(e.javaClass, '.')+1:]
		body, _ = json.Marshal(map[string]any{"RemoteException": map[string]string{
			"exception": simple, "javaClassName": e.javaClass, "message": e.message,
		}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(e.status)
	_, _ = w.Write(body)
}
