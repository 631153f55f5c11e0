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
	if e.raw != nil {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(e.raw)))
		w.WriteHeader(e.status)
		_, _ = w.Write(e.raw)
		return
	}
	WriteRemoteException(w, e.status, e.javaClass, e.message)
}

// RemoteException is the body of every WebHDFS error answer, as Hadoop's
// ExceptionHandler writes it (JsonUtil.toJsonString(Exception)).
type RemoteException struct {
	Exception     string `json:"exception"`     // the simple class name
	JavaClassName string `json:"javaClassName"` // the full class name
	Message       string `json:"message"`
}

// WriteRemoteException answers status with {"RemoteException": ...} for
// javaClass (e.g. "java.io.FileNotFoundException") and message.
func WriteRemoteException(w http.ResponseWriter, status int, javaClass, message string) {
	body, _ := json.Marshal(struct {
		RemoteException RemoteException
	}{RemoteException{Exception: javaClass[strings.LastIndexByte(javaClass, '.')+1:], JavaClassName: javaClass, Message: message}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
